"""Writing ``tagger evaluate --html``'s page: the path checked before the long part, the
page written as ``-o`` writes (:class:`tagger.writers.target.Target`: a file replaced
atomically, a symbolic link kept, a FIFO or device written into)."""

from __future__ import annotations

import os

from ..errors import TaggerError
from ..writers.target import Target


def check_html_path(path: str) -> None:
    """TaggerError now, before the cross-validation, for ``-`` (standard output carries the
    report) or a path in a directory that does not exist."""
    if path == "-":
        raise TaggerError("--html -: standard output carries the text report; give the page a file name")
    d = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(d):
        raise TaggerError(f"{path}: no such directory: {d}")


def write_html(path: str, result: dict, taxonomy, title: str) -> None:
    """Render ``result`` (:func:`tagger.evaluation.html.render_html`) and write it to ``path``."""
    from ..evaluation.html import render_html

    page = render_html(result, taxonomy, title)
    with Target(path) as fh:
        fh.write(page)
