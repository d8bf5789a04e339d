"""Persistent records: the command log."""
