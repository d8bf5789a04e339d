"""``python -m tabrelay``: the same as the ``tabrelay`` command."""

import sys

from tabrelay.cli import main

sys.exit(main())
