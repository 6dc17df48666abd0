"""Writing ``tagger evaluate --html``'s page: the path checked before the long part, the
page written atomically."""

from __future__ import annotations

import os

from ..errors import TaggerError
from ._common import AtomicOutput


def check_html_path(path: str) -> str:
    """The file ``--html`` will replace (links followed), or TaggerError when it names
    something that is not a regular file or a directory that does not exist."""
    real = os.path.realpath(path)
    if os.path.lexists(real) and not os.path.isfile(real):
        raise TaggerError(f"{path}: not a regular file; --html writes a new file or replaces one")
    d = os.path.dirname(real)
    if not os.path.isdir(d):
        raise TaggerError(f"{path}: no such directory: {d}")
    return real


def write_html(path: str, result: dict, taxonomy, title: str) -> None:
    """Render ``result`` (:func:`tagger.evaluation_html.render_html`) and write it to
    ``path`` atomically (a temporary file beside it, renamed on success)."""
    from ..evaluation_html import render_html

    page = render_html(result, taxonomy, title)
    with AtomicOutput(check_html_path(path)) as fh:
        fh.write(page)
