"""The acting engine: real input, typing into fields and editors, loading a page, and
following what an action started (a new page, a route, a new tab, a download).
"""
