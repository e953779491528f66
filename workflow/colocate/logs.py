"""Logging for rule scripts: progress lines, and the traceback of a failure, to the rule's log file."""

from __future__ import annotations

import logging
import sys
import threading

#: The hooks in place before the first :func:`to_file` (so that calling it twice does not chain hooks).
_ORIGINAL_EXCEPTHOOK = sys.excepthook
_ORIGINAL_THREADING_EXCEPTHOOK = threading.excepthook


def to_file(path: str, name: str = "colocate") -> logging.Logger:
    """A logger writing timestamped lines to ``path`` (the rule's ``log:``).

    It also logs an uncaught exception, with its traceback, to ``path`` before Python prints it to
    stderr as usual: a failed job's log says why it failed, not only the console.
    """
    logging.basicConfig(
        filename=path,
        level=logging.INFO,
        format="%(asctime)s %(levelname)s %(message)s",
        force=True,
    )
    logging.captureWarnings(True)
    logger = logging.getLogger(name)
    install_excepthook(logger)
    return logger


def install_excepthook(logger: logging.Logger) -> None:
    """Log uncaught exceptions (main thread and other threads) to ``logger``, then print them as usual."""

    def excepthook(exc_type, exc, tb):
        _log_exception(logger, "uncaught exception, the job fails", exc_type, exc, tb)
        _ORIGINAL_EXCEPTHOOK(exc_type, exc, tb)

    def threading_excepthook(args):
        if args.exc_type is not SystemExit:
            name = args.thread.name if args.thread is not None else "?"
            _log_exception(logger, f"uncaught exception in thread {name}", args.exc_type, args.exc_value, args.exc_traceback)
        _ORIGINAL_THREADING_EXCEPTHOOK(args)

    sys.excepthook = excepthook
    threading.excepthook = threading_excepthook


def _log_exception(logger: logging.Logger, message: str, exc_type, exc, tb) -> None:
    try:
        logger.critical(message, exc_info=(exc_type, exc, tb))
        for handler in logging.getLogger().handlers + logger.handlers:
            handler.flush()
    except Exception:  # a broken log must not hide the original error: it is still printed
        pass
