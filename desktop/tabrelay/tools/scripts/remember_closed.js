function (token, ...pairs) {
CLOSED
  for (const el of closed.pending.get(token) || []) closed.asked.add(el);
  closed.pending.delete(token);
  for (let i = 0; i + 1 < pairs.length; i += 2) {
    const [host, root] = [pairs[i], pairs[i + 1]];
    if (!host || !root || root.host !== host) continue;
    patch(host.ownerDocument.defaultView);
    closed.roots.set(host, root);
  }
}
