"""Process-wide logging state, put back after a test that set up the app's logging."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator


@contextlib.contextmanager
def logging_restored() -> Iterator[None]:
    """``setup_logging`` changes handlers, logger levels and the record factory of the whole
    process: put them all back for the next test."""
    root = logging.getLogger()
    factory = logging.getLogRecordFactory()
    loggers = [root, *logging.root.manager.loggerDict.values()]
    levels = {lg: lg.level for lg in loggers if isinstance(lg, logging.Logger)}
    try:
        yield
    finally:
        for handler in [h for h in root.handlers if getattr(h, "tabrelay", False)]:
            root.removeHandler(handler)
            handler.close()
        for logger in [root, *logging.root.manager.loggerDict.values()]:
            if isinstance(logger, logging.Logger):
                logger.setLevel(levels.get(logger, logging.NOTSET))
        logging.setLogRecordFactory(factory)
