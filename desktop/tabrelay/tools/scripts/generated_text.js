/**
 * The text a computed CSS `content` value says, as Chrome's accessibility tree holds it: a
 * quoted string, or its alternative text after a slash when it gives one; nothing for `none`,
 * `normal`, a counter, an image, or an icon font's glyph (private use), which says nothing.
 * @param {string} content
 * @returns {string}
 */
(content) => {
  if (!content || content === 'none' || content === 'normal') return '';
  const match = /^"((?:[^"\\]|\\.)*)"(?:\s*\/\s*"((?:[^"\\]|\\.)*)")?$/.exec(content);
  if (!match) return '';
  const text = (match[2] ?? match[1]).replace(/\\(.)/g, '$1');
  return /^[\s\uE000-\uF8FF]*$/.test(text) ? '' : text;
}
