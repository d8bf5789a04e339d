((kind, value, timeoutMs) => new Promise((resolve) => {
  const check = () => {
    const text = () => (document.body ? document.body.innerText : '');
    if (kind === 'text') return text().toLowerCase().includes(value.toLowerCase());
    if (kind === 'text_gone') return !text().toLowerCase().includes(value.toLowerCase());
    const el = document.querySelector(value);
    return !!el && el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden';
  };
  const started = Date.now();
  const tick = () => {
    let met = false;
    try { met = check(); } catch (error) { resolve({error: String(error)}); return; }
    if (met) resolve({met: true});
    else if (Date.now() - started >= timeoutMs) resolve({met: false});
    else setTimeout(tick, 100);
  };
  tick();
}))
