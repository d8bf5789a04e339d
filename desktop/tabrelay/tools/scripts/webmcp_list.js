(async () => {
  const context = document.modelContext;
  if (!context || typeof context.getTools !== 'function') return null;
  const cut = (text, n) => String(text ?? '').slice(0, n);
  const tools = await context.getTools();
  return JSON.stringify(Array.from(tools).slice(0, MAX_TOOLS).map((tool) => {
    let schema = '';
    try { schema = JSON.stringify(tool.inputSchema ?? {}); } catch (error) { schema = ''; }
    const hints = tool.annotations || {};
    return {
      name: cut(tool.name, 100),
      description: cut(tool.description, 500),
      schema: cut(schema, 1000),
      readOnly: hints.readOnlyHint === true,
    };
  }));
})()
