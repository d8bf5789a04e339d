"""The page model: what Tabrelay reads of a page and names in it (the outline, refs,
locators, frames of other sites, closed shadow roots, effect facts, PDFs, declared tools).
"""
