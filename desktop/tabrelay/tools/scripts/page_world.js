(() => {
  if (window !== window.top) return;
  if (Object.prototype.hasOwnProperty.call(globalThis, "TABRELAY_SEND")) return;
  const binding = globalThis[BINDING_NAME];
  if (typeof binding !== "function") return;
  const max = MAX_MESSAGE_BYTES;
  const send = (message) => {
    if (message === null || typeof message !== "object" || Array.isArray(message)) {
      throw new TypeError("TABRELAY_SEND takes a JSON object");
    }
    const text = JSON.stringify(message);
    if (text.length > max) return false;
    binding(text);
    return true;
  };
  const removers = [];
  const onRemove = (fn) => { removers.push(fn); };
  Object.defineProperty(globalThis, "TABRELAY_SEND", { value: send });
  Object.defineProperty(globalThis, "TABRELAY_ON_REMOVE", { value: onRemove });
  Object.defineProperty(globalThis, "TABRELAY_REMOVED", {
    value: () => {
      for (const fn of removers.splice(0).reverse()) {
        try { fn(); } catch (error) { /* the others still run */ }
      }
    },
  });
  (function (TABRELAY_SEND, TABRELAY_ON_REMOVE) {
WORLD_SOURCE
  })(send, onRemove);
})();
