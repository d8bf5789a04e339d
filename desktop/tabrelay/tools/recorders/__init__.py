"""Recording: an agent's calls kept as recipe steps, and a person's demonstration captured
from the page.
"""
