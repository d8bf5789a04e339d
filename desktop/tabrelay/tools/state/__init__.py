"""Per-tab state and its owners: refs, the observer's log, debugger sessions and their
child sessions, the guard and its interception, handoffs, downloads, object ids.
"""
