(id) => {
  const held = globalThis.__tabrelayHeld;
  const ref = held && held.els.get(id);
  const el = ref && ref.deref();
  return el && el.isConnected ? el : null;
}
