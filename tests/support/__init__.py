"""Shared test parts: a scripted extension, a relay harness, approvers."""
