((frames) => {
HELPERS
  const doc = documentAt(frames.slice(0, -1));
  return doc ? doc.querySelector(frames[frames.length - 1]) : null;
})
