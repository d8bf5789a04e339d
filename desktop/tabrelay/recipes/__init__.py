"""Recipes: steps recorded from agents and the person, replayed and exported (see model.py)."""
