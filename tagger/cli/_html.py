"""Files ``tagger evaluate`` writes after its long part (``--json``, ``--per-label``,
``--html``, ``--card``): each path checked before the cross-validation
(:func:`check_output_path`), each file written as ``-o`` writes
(:class:`tagger.writers.target.Target`: a file replaced atomically, a symbolic link kept, a
FIFO or device written into, a read-only file refused)."""

from __future__ import annotations

from ..errors import TaggerError
from ..writers.target import Target


def check_output_path(path: str, option: str) -> None:
    """TaggerError now, before the cross-validation, naming ``option``: for ``-`` (standard
    output carries the report), a directory, a read-only file, or a path in a directory that
    does not exist or cannot be written in (:meth:`Target.check`).  Nothing is written."""
    if path == "-":
        raise TaggerError(f"{option} -: standard output carries the text report; give {option} a file name")
    Target(path, option=option).check()

