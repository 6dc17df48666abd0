"""Numbered lines of text from a :class:`~tagger.readers.stream.ByteSource`: what the text
and CSV/TSV readers read."""

from __future__ import annotations

from .base import InputError
from .stream import _READ_ERRORS, CHUNK_BYTES, MAX_RECORD_SIZE, Oversized, not_text, open_source, over_limit


class _Lines:
    """The ``(line number, text)`` pairs of :func:`open_lines`, read in blocks of whole lines
    (:meth:`ByteSource.blocks`); :meth:`would_wait` tells whether the next line is still to
    come through a pipe that has gone silent (so that what was read can be tagged meanwhile)."""

    def __init__(self, path: str, encoding: str | None = None, lenient: bool = False,
                 limit: int | None = MAX_RECORD_SIZE, ends: bool = False):
        self.path, self.source = path, open_source(path, encoding)
        self.lenient, self.limit, self.ends = lenient, limit, ends
        #: with ``lenient``: line number -> why it is not text (its text is given with
        #: U+FFFD for the bad bytes); the readers make the record it is in a bad record
        self.bad: dict[int, str] = {}
        self._blocks = self.source.blocks(CHUNK_BYTES, limit)
        self._ready: list[bytes] = []  # lines of the current block not yet taken, last first
        self._waits = False  # the current block ended where the pipe went silent
        #: the first line started with a UTF-8 BOM (dropped from its text)
        self.bom = False
        #: how the first line ended: ``"\r\n"``, ``"\n"``, or None (no line break)
        self.newline: str | None = None

    def _next_line(self) -> bytes:
        """The next line with its line break (the last may have none); empty at the end."""
        while not self._ready:
            block = next(self._blocks, None)
            if block is None:
                return b""
            data, self._waits = block
            if isinstance(data, Oversized):  # a line over the limit, read past
                self._ready = [data]
                break
            lines = data.split(b"\n")
            last = lines.pop()  # after the last line break: the file's last line without one, or nothing
            self._ready = ([last] if last else []) + [ln + b"\n" for ln in reversed(lines)]
        return self._ready.pop()

    def would_wait(self) -> bool:
        """True when every line read so far has been taken and the pipe had gone silent for
        :data:`PIPE_PAUSE` seconds after them (never for a file)."""
        return not self._ready and self._waits

    def __iter__(self):
        path, n = self.path, 0
        try:
            while True:
                try:
                    chunk = self._next_line()
                except _READ_ERRORS as e:  # truncated or damaged gzip
                    raise InputError(f"{path}:{n + 1}: cannot read: {e}") from None
                if not chunk:
                    break
                n += 1
                bad = None
                if isinstance(chunk, Oversized):
                    bad = f"{path}:{n}: {over_limit('line', chunk.size, self.limit)}"
                    chunk = b""
                elif b"\x00" in chunk:
                    bad = not_text(path, n, chunk, chunk.find(b"\x00"), True)
                try:
                    text = chunk.decode("utf-8")  # a line break never falls inside a UTF-8 sequence
                except UnicodeDecodeError as e:
                    bad = bad or not_text(path, n, chunk, e.start, False)
                    text = chunk.decode("utf-8", "replace")
                if bad:
                    if not self.lenient:
                        raise InputError(bad)
                    self.bad[n] = bad.split(": ", 1)[1]
                if n == 1:
                    self.newline = "\r\n" if text.endswith("\r\n") else "\n" if text.endswith("\n") else None
                    if text.startswith("\ufeff"):
                        text, self.bom = text[1:], True
                yield n, text if self.ends else text.rstrip("\r\n")
        finally:
            self.source.close()


def open_lines(path: str, encoding: str | None = None, lenient: bool = False,
               limit: int | None = MAX_RECORD_SIZE, ends: bool = False) -> _Lines:
    """The ``(line_number, text)`` pairs of a text file (``-`` = stdin, gzip data
    decompressed, UTF-8 unless ``encoding`` or a BOM says otherwise), to iterate over once;
    from a pipe, as the lines arrive.

    Raises :class:`FileError` for a missing file or a directory (at once), and, while
    iterating, :class:`InputError` for a binary file (NUL byte) or bytes that are not UTF-8,
    naming the line; with ``lenient``, such a line is given (bad bytes as U+FFFD) and noted
    in the reader's ``bad``.  A line longer than ``limit`` bytes (``--max-record-size``) is
    never held in memory: it is such a bad line, given as an empty one.  Line endings are
    kept off (with ``ends``: kept, as they were, for readers that write records back byte for
    byte); a BOM is dropped.
    """
    return _Lines(path, encoding, lenient, limit, ends)


class LineRecords:
    """The records a reader makes of :func:`open_lines`, with the lines' ``would_wait``."""

    def __init__(self, lines: _Lines, records):
        self._lines, self._records = lines, records

    def __iter__(self):
        return iter(self._records)

    def would_wait(self) -> bool:
        """See :meth:`_Lines.would_wait`."""
        return self._lines.would_wait()
