function () {
  // Two animation frames of the frame ``this`` is in (a hidden tab draws none: then a timer).
  return new Promise((done) => {
    requestAnimationFrame(() => requestAnimationFrame(() => done(true)));
    setTimeout(done, 200, false);
  });
}
