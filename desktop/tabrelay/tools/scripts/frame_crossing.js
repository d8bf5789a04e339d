((frames) => {
HELPERS
  for (let i = 0; i < frames.length; i++) {
    if (!documentAt(frames.slice(0, i))) return -2;
    if (!documentAt(frames.slice(0, i + 1))) {
      let frame = null;
      try { frame = documentAt(frames.slice(0, i)).querySelector(frames[i]); } catch (e) {}
      return frame && frame.tagName === 'IFRAME' ? i : -2;
    }
  }
  return -1;
})
