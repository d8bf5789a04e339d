(dom) => {
  // One computed style per element for the whole read. Each of its properties is worked out
  // anew at every read (a call into the page's style engine): a script reads each once.
  const styles = new Map();
  const styleOf = (el) => {
    let style = styles.get(el);
    if (style === undefined) {
      style = getComputedStyle(el);
      styles.set(el, style);
    }
    return style;
  };
  const withheld = {};
  let count = 0;
  const REPLACED = new Set(['IMG', 'VIDEO', 'CANVAS', 'IFRAME', 'EMBED', 'OBJECT', 'PICTURE']);
  // Colours repeat across a page: each is parsed once.
  const colours = new Map();
  const rgba = (text) => {
    let c = colours.get(text);
    if (c === undefined) {
      const m = /rgba?\(([^)]*)\)/.exec(text || '');
      const p = m ? m[1].split(/[\s,\/]+/).filter(Boolean).map(parseFloat) : null;
      c = p ? [p[0], p[1], p[2], p.length > 3 ? p[3] : 1] : null;
      colours.set(text, c);
    }
    return c;
  };
  // Relative luminance (WCAG); plain arithmetic: this runs for every text on the page.
  const channel = (v) => {
    const s = v / 255;
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  };
  const luminance = (c) =>
    0.2126 * channel(c[0]) + 0.7152 * channel(c[1]) + 0.0722 * channel(c[2]);
  const contrast = (a, b) => {
    const x = luminance(a);
    const y = luminance(b);
    return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05);
  };
  const over = (top, below) => {
    const a = top[3];
    const mix = (i) => top[i] * a + below[i] * (1 - a);
    return [mix(0), mix(1), mix(2), 1];
  };
  // Left of or above the page, where no scrolling reaches (inside a scroller, it may).
  // A fixed box does not scroll: outside the window, it is never seen.
  const offPage = (r, state) => state.fixed
    ? r.right <= 0 || r.bottom <= 0
      || r.left >= state.view.right || r.top >= state.view.bottom
    : !state.scroller && (r.right + state.view.scrollX <= 0 || r.bottom + state.view.scrollY <= 0);
  // The part of ``box`` (or all of ``r`` when there is none) inside ``r``.
  const cut = (box, r) =>
    box ? { left: Math.max(box.left, r.left), top: Math.max(box.top, r.top),
            right: Math.min(box.right, r.right), bottom: Math.min(box.bottom, r.bottom) }
        : { left: r.left, top: r.top, right: r.right, bottom: r.bottom };
  // Whether a box shows more than a pixel's line of itself inside ``clip``.
  const meets = (r, clip) =>
    Math.min(r.right, clip.right) - Math.max(r.left, clip.left) > 1 &&
    Math.min(r.bottom, clip.bottom) - Math.max(r.top, clip.top) > 1;
  const filterOpacity = (filter) => {
    let o = 1;
    if (filter === 'none') return o;
    for (const m of (filter || '').matchAll(/opacity\(([\d.]+)(%?)\)/g))
      o *= parseFloat(m[1]) / (m[2] ? 100 : 1);
    return o;
  };
  const scaledAway = (transform, scale) => {
    // The scale property on its own ("0", "0 1"…) as well as a transform.
    if (scale !== 'none' && scale.split(' ').some((v) => Math.abs(parseFloat(v)) < 0.05))
      return true;
    if (!transform || transform === 'none') return false;
    const v = (/matrix(3d)?\(([^)]*)\)/.exec(transform) || [])[2];
    if (!v) return false;
    const m = v.split(',').map(parseFloat);
    const [a, b, c, d] = m.length === 16 ? [m[0], m[1], m[4], m[5]] : m;
    return Math.abs(a * d - b * c) < 0.0025;
  };
  const clippedAway = (style, position) => {
    // ``clip`` applies to a box taken out of the flow only.
    const positioned = position === 'absolute' || position === 'fixed';
    const rect = positioned && /^rect\(([^)]*)\)/.exec(style.clip);
    if (rect) {
      const [top, right, bottom, left] = rect[1].split(/[\s,]+/).map(parseFloat);
      const sizes = [bottom - top, right - left];
      if (sizes.every(Number.isFinite) && Math.min(...sizes) <= 1) return true;
    }
    const path = style.clipPath;
    if (path === 'none') return false;
    const inset = /^inset\(([^)]*)\)/.exec(path);
    if (inset) {
      const parts = inset[1].split(/\s+/).filter((p) => p.endsWith('%')).map(parseFloat);
      if (parts.length && Math.max(...parts) >= 50) return true;
    }
    return /^(circle|ellipse)\(0(px|%)?[\s)]/.test(path);
  };
  // What paints the area behind an element for its contents: a colour, or null when unknown
  // (an image, a gradient, or something positioned over whatever is below).
  const behind = (style, position, below) => {
    const image = style.backgroundImage;
    if (image && image !== 'none') return null;
    const fill = style.backgroundColor;
    const bg = fill === 'rgba(0, 0, 0, 0)' ? null : rgba(fill);
    if (bg && bg[3] >= 0.05) return below ? over(bg, below) : bg[3] >= 0.9 ? bg : null;
    if (position === 'absolute' || position === 'fixed') return null;
    return below;
  };
  const up = (el) => {
    const parent = dom.parent(el);
    return dom.up(el) || (parent && parent.host) || null;
  };
  const holds = (outer, inner) => {
    for (let n = inner; n; n = up(n)) if (n === outer) return true;
    return false;
  };
  // Whether something drawn over the point hides ``el`` there: an opaque box or a picture that
  // is not inside it, holding it, or fixed (a fixed header or a modal's backdrop is moved away
  // by scrolling or closing; a person knows what is under it).
  const coveredAt = (el, x, y) => {
    const root = dom.root(el);
    const hit = (root.elementFromPoint ? root : dom.doc(el)).elementFromPoint(x, y);
    if (!hit || hit === el || holds(el, hit) || holds(hit, el)) return false;
    const over = [];
    for (let n = hit; n && !holds(n, el); n = up(n)) over.push(n);
    const moves = (n) => /fixed|sticky/.test(styleOf(n).position);
    if (over.some(moves)) return false;
    return over.some((n) => {
      const s = styleOf(n);
      const bg = rgba(s.backgroundColor);
      return REPLACED.has(dom.tag(n)) || s.backgroundImage !== 'none'
        || (bg && bg[3] * parseFloat(s.opacity) >= 0.9);
    });
  };
  // Why letters drawn in ``style`` over what ``state`` has behind are not seen, or null: too
  // small, transparent or the colour of the background (an outline drawn around them, or a
  // background painted through them, shows them).
  const inkless = (state, style) => {
    if (parseFloat(style.fontSize) < 4) return 'too small';
    const ink = rgba(style.webkitTextFillColor) || rgba(style.color);
    const faint = ink && (ink[3] * state.opacity < 0.1 ? 'transparent'
      : state.bg && contrast(ink, state.bg) < 1.1 ? 'background-coloured' : null);
    if (faint && !(parseFloat(style.webkitTextStrokeWidth) > 0)
        && !/text/.test(style.backgroundClip || style.webkitBackgroundClip || '')) return faint;
    return null;
  };
  const ranges = new Map();  // one Range per document, moved from text to text
  return {
    style: styleOf,
    withheld,
    withhold(why) {
      withheld[why] = (withheld[why] || 0) + 1;
      count++;
    },
    count: () => count,
    // Whether an element is invisible (``style``: its own). Visibility is inherited, but not
    // forced: what an invisible element holds may set itself visible again, and then shows,
    // as it does in Chrome's tree. Its own text is not drawn, nor counted as left out.
    invisible: (style) => style.visibility === 'hidden' || style.visibility === 'collapse',
    root(doc) {
      const win = doc.defaultView;
      // The document's window as it is for the whole read (asked once: each read of the
      // window's size or scroll is a call into the page's frame).
      const view = { left: 0, top: 0, right: win.innerWidth, bottom: win.innerHeight,
                     scrollX: win.scrollX, scrollY: win.scrollY };
      const dark = /dark/.test(styleOf(doc.documentElement).colorScheme);
      const canvas = win === window.top && !dark ? [255, 255, 255, 1] : null;
      return { why: null, own: null, opacity: 1, clip: null, clipPositioned: false,
               bg: canvas, scroller: false, port: null, fixed: false, view };
    },
    of(el, style, above) {
      // A closed <details> draws its (first) summary.
      if (above.why === 'folded away' && dom.tag(el) === 'SUMMARY'
          && dom.up(el) && dom.query(dom.up(el), ':scope > summary') === el)
        above = { ...above, why: null };
      const s = { ...above, own: null };
      if (above.why) return { ...s, own: above.why };
      s.opacity = above.opacity * parseFloat(style.opacity || '1') * filterOpacity(style.filter);
      let why = s.opacity < 0.1 ? 'transparent' : null;
      const transform = style.transform;
      const scale = style.scale;
      if (!why && scaledAway(transform, scale)) why = 'scaled to nothing';
      const position = style.position;
      if (!why && clippedAway(style, position)) why = 'clipped away';
      const tag = dom.tag(el);
      const top = tag === 'HTML' || tag === 'BODY';
      if (position === 'fixed') {
        s.clip = null; s.scroller = false; s.port = null; s.fixed = true;
      }
      else if (position === 'absolute' && !above.clipPositioned) s.clip = null;
      const overflow = style.overflow;  // one read for both axes: "visible", "hidden auto", …
      const overflows = overflow !== 'visible';
      // A box in the flow, inside a parent that shows, shows where its parent does unless it
      // clips, is clipped, moves, or is pulled out by a negative margin: only then is it
      // measured (its texts are measured where they are drawn, below).
      // (An element named by an attribute, a picture above all, has no text to measure.)
      const moved = overflows || s.clip || position !== 'static'
        || transform !== 'none' || scale !== 'none' || style.translate !== 'none'
        || style.margin.includes('-') || REPLACED.has(tag)
        || dom.has(el, 'aria-label') || dom.has(el, 'alt');
      const display = moved ? style.display : '';
      if (!why && moved && display !== 'contents') {
        const r = dom.rect(el);
        const flat = r.width <= 1 || r.height <= 1;
        // A box too small to see clips what it holds (below), except what escapes it.
        if (flat && overflows && !top && !display.startsWith('inline')) s.own = 'too small';
        else if (r.width > 0 && r.height > 0) {
          if (offPage(r, s)) why = 'off the page';
          else if (s.clip && !meets(r, s.clip)) why = 'cut off';
        }
        if (!why && overflows && !top) {
          const scrolls = /auto|scroll/.test(overflow);
          if (scrolls) {
            s.clip = null;
            s.scroller = true;
            s.port = cut(s.port, r);
          }
          else {
            s.clip = cut(s.clip, r);
            s.clipPositioned = position !== 'static' || transform !== 'none';
          }
        }
      }
      s.own = why || s.own;
      s.why = why;
      if (!why && style.contentVisibility === 'hidden') s.why = 'not drawn';
      if (!why && tag === 'DETAILS' && !el.open) s.why = 'folded away';
      s.bg = behind(style, position, above.bg);
      return s;
    },
    // Why what the field ``el`` holds is not seen, or null (``state``: the field's own): the
    // field is not, the box its letters are drawn in is too small for one, or they are not.
    value(el, state, style) {
      if (state.own) return state.own;
      const across = (a, b) => parseFloat(style[a]) + parseFloat(style[b]);
      if (el.clientWidth - across('paddingLeft', 'paddingRight') <= 1
          || el.clientHeight - across('paddingTop', 'paddingBottom') <= 1) return 'too small';
      return inkless(state, style);
    },
    text(node, parent, state, style) {
      if (state.why) return state.why;
      if (!node.data.trim()) return null;
      // Drawn as dots or squares (a PIN pad made of a contenteditable): a person sees marks.
      const marks = style.webkitTextSecurity;
      if (marks && marks !== 'none') return 'drawn as dots';
      const faint = inkless(state, style);
      if (faint) return faint;
      const doc = node.ownerDocument;
      let range = ranges.get(doc);
      if (!range) ranges.set(doc, (range = doc.createRange()));
      range.selectNodeContents(node);
      const r = range.getBoundingClientRect();
      if (r.width === 0 && r.height === 0) return null;
      if (offPage(r, state)) return 'off the page';
      if (state.clip && !meets(r, state.clip)) return 'cut off';
      // Covered is judged where the text shows now: on screen, inside the boxes it scrolls in
      // and is clipped to (what is scrolled or cut out of them lies under whatever is drawn
      // beside, and is not covered by it).
      const screen = state.view;
      if (!meets(r, screen)) return null;
      let shown = cut(range.getClientRects()[0] || r, screen);
      for (const box of [state.port, state.clip]) if (box) shown = cut(shown, box);
      if (shown.right - shown.left < 1 || shown.bottom - shown.top < 1) return null;
      const x = shown.left + Math.min(shown.right - shown.left, 8) / 2;
      const y = (shown.top + shown.bottom) / 2;
      return coveredAt(parent, x, y) ? 'covered' : null;
    },
  };
}
