"""Where the default taxonomy and model live, and how a command chooses one.

Lookup order, for the model: ``--model DIR``, then ``$TAGGER_MODEL``, then the packaged
model; for the taxonomy: ``--taxonomy FILE``, then ``$TAGGER_TAXONOMY``, then the packaged
``taxonomy.yaml``.  In an installed wheel the packaged files are ``tagger/resources/``
(setup.cfg maps the repository root's ``taxonomy.yaml`` and ``models/`` there); in a source
checkout they are the repository root's own files.
"""

from __future__ import annotations

import os
from pathlib import Path

_PKG = Path(__file__).resolve().parent


def packaged(name: str) -> Path:
    """Path of a packaged resource (``taxonomy.yaml`` or ``models``)."""
    installed = _PKG / "resources" / name
    if installed.exists():
        return installed
    return _PKG.parent / name


def model_dir(option: str | None = None) -> Path:
    """The model directory to use (see module docstring for the order)."""
    return Path(option or os.environ.get("TAGGER_MODEL") or packaged("models"))


def taxonomy_path(option: str | None = None) -> Path:
    """The taxonomy file to use (see module docstring for the order)."""
    return Path(option or os.environ.get("TAGGER_TAXONOMY") or packaged("taxonomy.yaml"))


def taxonomy_chosen(option: str | None = None) -> bool:
    """True when the user named a taxonomy (option or environment), not the packaged default."""
    return bool(option or os.environ.get("TAGGER_TAXONOMY"))
