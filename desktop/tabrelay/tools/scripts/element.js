(id) => {
  const held = Object.hasOwn(globalThis, '__tabrelayHeld') ? globalThis.__tabrelayHeld : null;
  const ref = held && held.els.get(id);
  const el = ref && ref.deref();
  return el && el.isConnected ? el : null;
}
