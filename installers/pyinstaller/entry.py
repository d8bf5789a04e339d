"""The frozen bundle's entry point: the ``tabrelay`` command (the tray app without arguments)."""

import sys

from tabrelay.cli import main

if __name__ == "__main__":
    sys.exit(main())
