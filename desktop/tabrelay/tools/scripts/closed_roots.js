  const closed = Object.hasOwn(globalThis, '__tabrelayClosed')
    ? globalThis.__tabrelayClosed
    : (globalThis.__tabrelayClosed = {
    roots: new WeakMap(),
    asked: new WeakSet(),
    // Each read's candidates by the read's token, asked once REMEMBER runs: a cancelled read's
    // are asked again by the next; the oldest go past a few reads.
    pending: new Map(),
    patched: new WeakSet(),
  });
  const patch = (win) => {
    // By the realm's prototype: a frame that navigates keeps its window, not its prototypes.
    const proto = win && win.Element && win.Element.prototype;
    if (!proto || closed.patched.has(proto)) return;
    closed.patched.add(proto);
    const native = Object.getOwnPropertyDescriptor(proto, 'shadowRoot').get;
    Object.defineProperty(proto, 'shadowRoot', {
      configurable: true,
      get() { return native.call(this) || closed.roots.get(this) || null; },
    });
  };
