"""The browser tools and the engine under them, in layers (docs/architecture.md, "The tools room,
in layers"): the catalog over the tool groups, over the acting engine and recording, over the
page model, over the context, per-tab state and in-page code."""
