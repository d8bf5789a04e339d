"""The browser relay: the extension-facing server, connected browsers, and their events."""
