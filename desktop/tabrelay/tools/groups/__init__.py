"""The tool definitions: one module per group of tools (parameters, the tool functions,
what each answers). Only ``tools.catalog`` lists them; a group never imports another group.
"""
