"""Logging for rule scripts: progress lines to the rule's log file."""

from __future__ import annotations

import logging


def to_file(path: str, name: str = "colocate") -> logging.Logger:
    """A logger writing timestamped lines to ``path`` (the rule's ``log:``)."""
    logging.basicConfig(
        filename=path,
        level=logging.INFO,
        format="%(asctime)s %(levelname)s %(message)s",
        force=True,
    )
    logging.captureWarnings(True)
    return logging.getLogger(name)
