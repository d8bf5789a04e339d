(ms) => new Promise((resolve) => {
  const seen = new MutationObserver(() => done(true));
  const timer = setTimeout(() => done(false), ms);
  function done(changed) {
    seen.disconnect();
    clearTimeout(timer);
    resolve(changed);
  }
  seen.observe(document, { subtree: true, childList: true, characterData: true, attributes: true });
})
