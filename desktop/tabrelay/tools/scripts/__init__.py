"""In-page code shared by the page model, the acting engine and the tool groups: the rule of
what a sighted person cannot see, the field kinds, the code editors' hooks.
"""
