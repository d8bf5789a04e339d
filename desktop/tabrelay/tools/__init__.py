"""The browser tools: one module per group, plain async functions over a Browser."""
