"""The desktop UI (DESIGN §7): tray, dashboard, dialogs and table models, over the Qt-free core.

The only package that imports PySide6; ``app.py`` composes it with the core on one qasync loop.
Core callbacks reach Qt through one bridge (``bridge.py``); core errors become dialogs here.
"""
