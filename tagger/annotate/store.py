"""The corpus file an annotation session writes: appended to as each record is done,
rewritten atomically when an earlier record changes.

A new record is one JSON line appended, flushed and synced to disk at once, so a crash or
Ctrl-C loses at most the record on screen.  Changing or removing a record already in the
file (back, undo) writes the whole file to a temporary sibling and renames it into place;
a symbolic link is followed (its target rewritten, the link kept), and a path that is not a
regular file (a directory, FIFO or device) is refused before anything is written.
"""

from __future__ import annotations

import json
import os
import stat
import tempfile

from ..corpus import InputError, read_jsonl
from .pool import text_key


class CorpusStore:
    """The rows of a corpus file, in file order, kept in step with the file.

    ``rows``: list of dicts; ``by_id``: id -> index; ``by_key``: :func:`text_key` of the
    abstract -> index.  Raises :class:`tagger.corpus.InputError` when ``path`` exists but is
    not a regular file, or holds a line that is not a JSON object or a row without an id.
    """

    def __init__(self, path: str):
        self.path = path
        self.rows: list[dict] = []
        if os.path.exists(path):
            if not stat.S_ISREG(os.stat(path).st_mode):
                raise InputError(f"{path}: not a regular file; --out needs a corpus file (JSON Lines)")
            for rec in read_jsonl(path):
                if rec.id_added or rec.fields.get("id") in (None, ""):
                    raise InputError(f"{path}:{rec.line}: a row without an 'id'")
                self.rows.append(rec.fields)
        else:
            d = os.path.dirname(os.path.realpath(path))  # a link to a file still to be made: its target's
            if not os.path.isdir(d):
                raise InputError(f"{path}: no such directory: {d}")
        self._index()

    def _index(self):
        self.by_id = {str(r["id"]): i for i, r in enumerate(self.rows)}
        self.by_key = {}
        for i, r in enumerate(self.rows):
            a = r.get("abstract")
            if isinstance(a, str) and a.strip():
                self.by_key.setdefault(text_key(a), i)

    def find(self, rid: str, abstract: str) -> int | None:
        """Index of the row holding this record (by id, else by the text of its abstract), or None."""
        i = self.by_id.get(str(rid))
        return i if i is not None else self.by_key.get(text_key(abstract))

    def append(self, row: dict) -> None:
        """Add ``row`` at the end of the file (flushed and synced before returning)."""
        line = json.dumps(row, ensure_ascii=False) + "\n"
        with open(self.path, "ab") as fh:
            if fh.tell() > 0:
                with open(self.path, "rb") as rd:
                    rd.seek(-1, os.SEEK_END)
                    if rd.read(1) != b"\n":
                        line = "\n" + line
            fh.write(line.encode("utf-8"))
            fh.flush()
            os.fsync(fh.fileno())
        self.rows.append(row)
        self._index()

    def replace(self, index: int, row: dict | None) -> None:
        """Replace row ``index`` by ``row`` (None removes it) and rewrite the file atomically."""
        rows = list(self.rows)
        if row is None:
            del rows[index]
        else:
            rows[index] = row
        self._rewrite(rows)
        self.rows = rows
        self._index()

    def _rewrite(self, rows) -> None:
        real = os.path.realpath(self.path)
        d = os.path.dirname(real)
        fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(real) + ".", suffix=".tmp", dir=d)
        try:
            try:
                mode = os.stat(real).st_mode & 0o7777
            except OSError:
                umask = os.umask(0)
                os.umask(umask)
                mode = 0o666 & ~umask
            os.chmod(tmp, mode)
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
                for r in rows:
                    fh.write(json.dumps(r, ensure_ascii=False) + "\n")
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, real)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
