  // Its own property only: an element the page names __tabrelayHeld shows on every world's
  // window too.
  const held = Object.hasOwn(globalThis, '__tabrelayHeld')
    ? globalThis.__tabrelayHeld
    : (globalThis.__tabrelayHeld = {
    ids: new WeakMap(),
    els: new Map(),
    next: 1,
    limit: HELD_SLACK,
  });
  if (held.els.size > held.limit) {
    for (const [id, ref] of held.els) if (ref.deref() === undefined) held.els.delete(id);
    held.limit = Math.max(HELD_SLACK, 2 * held.els.size);
  }
  const idOf = (el) => {
    let id = held.ids.get(el);
    if (id === undefined) {
      id = held.next++;
      held.ids.set(el, id);
      held.els.set(id, new WeakRef(el));
    }
    return id;
  };
