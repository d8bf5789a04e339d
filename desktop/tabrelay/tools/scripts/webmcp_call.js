(async (name, input) => {
  const context = document.modelContext;
  if (!context || typeof context.getTools !== 'function') return {error: 'none'};
  const tool = Array.from(await context.getTools()).find((t) => t.name === name);
  if (!tool) return {error: 'unknown'};
  try {
    const answer = await context.executeTool(tool, JSON.parse(input));
    const text = typeof answer === 'string' ? answer : JSON.stringify(answer ?? null);
    return {result: String(text).slice(0, MAX_RESULT + 1)};
  } catch (error) {
    return {error: 'threw', message: String(error && error.message || error).slice(0, 300)};
  }
})
