"""Tabrelay: AI agents use the browser a person already has open, with that person in control."""

__version__ = "0.1.0"
