"""An input's bytes: files and standard input, gzip and encodings, in blocks of whole lines.

:class:`ByteSource` is what every reader reads: a file or standard input (``-``),
decompressed when it starts with gzip's magic number (several members, as ``cat a.gz b.gz``
makes, are read one after another), and transcoded to UTF-8 when it is UTF-16 or UTF-32
with a BOM or when ``encoding`` names another encoding.  :meth:`ByteSource.blocks` gives
its bytes in blocks of whole lines; from a pipe or terminal as they arrive, a block ending
where the pipe goes silent, so that records trickling in are tagged as they come.
:func:`tagger.readers.lines.open_lines` gives its numbered, decoded lines.
"""

from __future__ import annotations

import codecs
import sys
import zlib
from functools import partial
from pathlib import Path

from ..files.limits import MAX_RECORD_SIZE, Oversized, over_limit, parse_size, size_text  # noqa: F401  (readers import them here)
from .base import FileError, InputError

#: bytes read at a time from a file; a ``jsonl.LineChunk`` is what such a read holds of
#: whole lines (about 230 arXiv records), the unit of work of a ``--jobs`` worker
CHUNK_BYTES = 1 << 18

#: what reading a damaged ``.gz`` raises: truncated (EOFError), bad CRC or trailing bytes
#: (OSError), corrupt deflate data (zlib.error)
_READ_ERRORS = (OSError, EOFError, zlib.error)

#: seconds a pipe may stay silent before what has come is tagged: longer than the gaps of a
#: producer that keeps up (``cat``, ``zcat``: a pipe refills in microseconds), short enough
#: not to be noticed by someone typing or a slow stream
PIPE_PAUSE = 0.05

#: byte-order marks that name an encoding other than UTF-8, longest first
_BOMS = ((codecs.BOM_UTF32_LE, "utf-32-le"), (codecs.BOM_UTF32_BE, "utf-32-be"),
         (codecs.BOM_UTF16_LE, "utf-16-le"), (codecs.BOM_UTF16_BE, "utf-16-be"))


def check_encoding(name: str) -> str:
    """The codec name of the text encoding ``name`` (``"latin1"`` -> ``"iso8859-1"``);
    raises :class:`InputError` for an unknown name or a codec that is not a text encoding."""
    try:
        info = codecs.lookup(name)
    except LookupError:
        raise InputError(f"--encoding {name}: unknown encoding") from None
    if not getattr(info, "_is_text_encoding", True):
        raise InputError(f"--encoding {name}: not a text encoding")
    return info.name


def _is_regular_file(raw) -> bool:
    """Whether ``raw`` reads a regular file, which never makes a read wait."""
    import os
    import stat

    try:
        return stat.S_ISREG(os.fstat(raw.fileno()).st_mode)
    except (OSError, ValueError, AttributeError):  # io objects without a descriptor (tests)
        return False


def _read_available(raw, size: int) -> bytes:
    """Up to ``size`` bytes from a pipe or terminal: waits for the first bytes, then takes
    more until ``size`` or until the pipe stays silent for :data:`PIPE_PAUSE` seconds, so
    records typed or trickling in are tagged as they come, while a fast producer still
    fills whole chunks.  Empty at the end of the input."""
    import select

    parts = [raw.read1(size)]
    got = len(parts[0])
    while parts[-1] and got < size:
        try:
            if not select.select([raw], [], [], PIPE_PAUSE)[0]:
                break
        except (OSError, ValueError, TypeError):  # no select() on this stream (Windows pipes)
            break
        parts.append(raw.read1(size - got))
        got += len(parts[-1])
    return b"".join(parts)


def not_text(path: str, line: int, data: bytes, pos: int, nul: bool) -> str:
    """The message for the NUL byte or the first byte that is not UTF-8 at ``data[pos]``,
    ``line`` being the number of the line it is on."""
    start = data.rfind(b"\n", 0, pos) + 1
    if nul:
        sample = data[start:start + 64]
        if len(sample) >= 4 and (sample[1::2].count(0) >= len(sample) // 2 - 1 or sample[0::2].count(0) >= len(sample) // 2 - 1):
            return (f"{path}:{line}: binary data (NUL byte), not UTF-8 text; if it is UTF-16 without a BOM, "
                    "name it with --encoding utf-16-le (or utf-16-be)")
        return f"{path}:{line}: binary data (NUL byte), not text"
    column = pos - start + 1
    return (f"{path}:{line}: not UTF-8 text (byte 0x{data[pos]:02x} at column {column}); "
            "convert it to UTF-8 first, or name its encoding with --encoding")


class _Transcoder:
    """A ``read(size)`` of UTF-8 bytes over a ``read(size)`` of bytes in ``encoding``.

    A byte sequence that is not ``encoding`` ends the input: the text before it is returned
    first, then the next call raises :class:`InputError` naming its line."""

    def __init__(self, read, encoding: str, path: str):
        self.read_raw, self.encoding, self.path = read, encoding, path
        self.decoder = codecs.getincrementaldecoder(encoding)("strict")
        self.lines, self.error, self.done, self.offset = 0, None, False, 0  # offset: input bytes decoded

    def __call__(self, size: int) -> bytes:
        if self.error is not None:
            raise self.error
        while not self.done:
            data = self.read_raw(size)
            try:
                text = self.decoder.decode(data, final=not data)
            except UnicodeDecodeError as e:
                try:
                    good = codecs.decode(e.object[:e.start], self.encoding)
                except UnicodeError:
                    good = ""
                line = self.lines + good.count("\n") + 1
                self.error = InputError(f"{self.path}:{line}: not {self.encoding} text ({e.reason}: byte "
                                        f"0x{e.object[e.start]:02x} at offset {self.offset + e.start}); name the "
                                        "file's own encoding with --encoding")
                self.done = True
                if not good:  # nothing before it: an empty read would say "end of input"
                    raise self.error from None
                return good.encode("utf-8")
            except UnicodeError as e:  # utf-16 / utf-32 without a byte-order mark, and the like
                hint = (f"; if it is {self.encoding.upper()} without a byte-order mark, name the byte order: "
                        f"--encoding {self.encoding}-le or {self.encoding}-be"
                        if self.encoding in ("utf-16", "utf-32") else "; name the file's own encoding with --encoding")
                self.error = InputError(f"{self.path}:{self.lines + 1}: not {self.encoding} text ({e}){hint}")
                self.done = True
                raise self.error from None
            self.done = not data
            self.offset += len(data)
            if text:
                self.lines += text.count("\n")
                return text.encode("utf-8")
        return b""


class ByteSource:
    """The bytes of one input, as UTF-8 (module docstring).

    ``path``: a file, or ``-`` for standard input; ``encoding``: the input's encoding, None
    for UTF-8 (a UTF-16 or UTF-32 BOM then names the encoding).  Raises
    :class:`FileError` at once for a missing file, a directory or one that cannot be opened.
    """

    def __init__(self, path: str, encoding: str | None = None):
        self.path = path
        self.encoding = None if encoding is None else check_encoding(encoding)
        if self.encoding in ("utf-8", "utf-8-sig"):
            self.encoding = None
        if path == "-":
            raw = sys.stdin.buffer
            self.raw = raw if hasattr(raw, "peek") else _Peekable(raw)
        else:
            p = Path(path)
            if p.is_dir():
                raise FileError(f"{path}: is a directory, not a file of abstracts")
            try:
                self.raw = open(p, "rb")
            except FileNotFoundError:
                raise FileError(f"{path}: no such file") from None
            except OSError as e:
                raise FileError(f"{path}: cannot read: {e.strerror}") from None
        self._read = None  # read(size) of UTF-8 bytes, set up at the first read
        self.streaming = False  # a pipe or terminal, read as its bytes arrive
        self.gzip = False
        self._head = b""  # bytes read ahead by head(), given out first
        self._gz = None

    def _setup(self) -> None:
        import gzip

        raw = self.raw
        if _is_regular_file(raw):
            read = raw.read
        else:
            raw = self.raw = _EndLatch(raw)
            read, self.streaming = partial(_read_available, raw), True
        stream = raw
        if raw.peek(2)[:2] == b"\x1f\x8b":  # gzip's magic number, whatever the file's name
            self._gz = stream = gzip.GzipFile(fileobj=raw, mode="rb")
            self.gzip, self.streaming = True, False

            def read(size, gz=self._gz):  # pieces of at most 64 KiB: a damaged member loses no whole line before it
                return gz.read1(min(size, 1 << 16))
        encoding = self.encoding
        if encoding is None:
            start = stream.peek(4)[:4]
            encoding = next((name for bom, name in _BOMS if start.startswith(bom)), None)
            if encoding:
                stream.read(len(codecs.BOM_UTF32_LE if "32" in encoding else codecs.BOM_UTF16_LE))
        if encoding:
            read = _Transcoder(read, encoding, self.path)
        self._read = read

    def read(self, size: int) -> bytes:
        """Up to ``size`` bytes of UTF-8 (from a pipe: what has arrived); empty at the end."""
        if self._head:
            data, self._head = self._head, b""
            return data
        if self._read is None:
            self._setup()
        return self._read(size)

    def head(self, size: int = 1 << 16, lines: int = 1) -> bytes:
        """The first bytes of the input (UTF-8), up to its ``lines``-th line break or ``size``
        bytes, without consuming them (:meth:`read` gives them again); raises what reading
        raises."""
        while self._head.count(b"\n") < lines and len(self._head) < size:
            if self._read is None:
                self._setup()
            more = self._read(size)
            if not more:
                break
            self._head += more
        return self._head

    def blocks(self, size: int = CHUNK_BYTES, limit: int | None = MAX_RECORD_SIZE):
        """``(data, waits)``: the input in blocks of whole lines, about ``size`` bytes each (a
        longer line makes a longer block; the input's last line may lack its line break).

        A line longer than ``limit`` bytes (None: no limit) is never held: it is read past and
        given as an :class:`Oversized` block (memory stays within ``limit`` plus ``size``).

        A regular file is read ``size`` bytes at a time; a gzip stream in pieces of at most
        64 KiB; a pipe or terminal as its bytes arrive (:func:`_read_available`), a block
        ending where it goes silent (``waits`` True).  A read error (``_READ_ERRORS``: a
        truncated or damaged gzip stream; :class:`InputError`: bytes not in the encoding)
        is raised after the whole lines before it."""
        if limit is None or limit >= size:  # a whole line in a block is never over the limit
            yield from self._blocks(size, limit)
            return
        for data, waits in self._blocks(size, limit):
            if isinstance(data, Oversized) or len(data) <= limit:
                yield data, waits
                continue
            pos, start = 0, 0  # the whole lines of data, those over the limit as Oversized
            while True:
                end = data.find(b"\n", pos)
                end = len(data) if end < 0 else end
                if end - pos > limit:
                    if pos > start:
                        yield data[start:pos], False
                    yield Oversized(end - pos), False
                    start = end + 1
                if end >= len(data) - 1:
                    break
                pos = end + 1
            if start < len(data):
                yield data[start:], waits

    def _blocks(self, size: int, limit: int | None):
        """:meth:`blocks`, but for whole lines over a ``limit`` smaller than ``size``."""
        pending, have = [], 0  # what was read since the last block, and its length
        tail = 0  # bytes of pending after its last line break: the line being read
        skipped = 0  # > 0: the bytes of a line over the limit read past so far
        while True:
            try:
                block = self.read(size)
            except (*_READ_ERRORS, InputError):
                data = b"".join(pending)
                if data.rfind(b"\n") >= 0:  # a line cut short by the damage is not read
                    yield data[:data.rfind(b"\n") + 1], False
                raise
            if skipped:
                if not block:
                    yield Oversized(skipped), False
                    return
                nl = block.find(b"\n")
                if nl < 0:
                    skipped += len(block)
                    continue
                yield Oversized(skipped + nl), False
                skipped, block = 0, block[nl + 1:]
                if not block:
                    continue
            if not block:
                if pending:
                    yield b"".join(pending), False
                return
            pending.append(block)
            have += len(block)
            nl = block.rfind(b"\n")
            tail = tail + len(block) if nl < 0 else len(block) - nl - 1
            if limit is not None and tail > limit:  # the line being read is too long: give what is before it, skip it
                data = b"".join(pending)
                cut = len(data) - tail
                if cut:
                    yield data[:cut], False
                pending, have, skipped, tail = [], 0, tail, 0
                continue
            if (have < size and not self.streaming) or b"\n" not in block:
                continue  # fill the block; or no line has ended yet
            data = b"".join(pending)
            cut = data.rfind(b"\n") + 1
            pending, have = ([data[cut:]], len(data) - cut) if cut < len(data) else ([], 0)
            yield data[:cut], self.streaming and len(block) < size

    def close(self) -> None:
        """Close the file (never standard input)."""
        if self.path != "-":
            if self._gz is not None:
                self._gz.close()
            self.raw.close()


class _Peekable:
    """``peek`` for a binary stream that has none (an ``io.BytesIO`` as standard input)."""

    def __init__(self, raw):
        self._raw, self._buf = raw, b""

    def peek(self, n: int = 1) -> bytes:
        if len(self._buf) < n:
            self._buf += self._raw.read(n - len(self._buf)) or b""
        return self._buf

    def read1(self, n: int = -1) -> bytes:
        if self._buf:
            data, self._buf = self._buf[:n] if n >= 0 else self._buf, self._buf[n:] if n >= 0 else b""
            return data
        return self._raw.read1(n) if hasattr(self._raw, "read1") else self._raw.read(n)

    def read(self, n: int = -1) -> bytes:
        data = self.read1(n)
        if n < 0 or len(data) >= n:
            return data
        return data + (self._raw.read(n - len(data)) or b"")

    def fileno(self):
        return self._raw.fileno()


class _EndLatch:
    """A pipe or terminal whose end, once read, stays read.  A terminal's Ctrl-D makes one
    read return nothing and is then gone: a reader that looks ahead (``peek``, or
    :func:`_read_available` asking for more after a line) would otherwise take it and then
    wait for input that never comes, until a second Ctrl-D."""

    def __init__(self, raw):
        self._raw, self.ended = raw, False

    def _seen(self, data: bytes, n: int) -> bytes:
        if not data and n != 0:
            self.ended = True
        return data

    def peek(self, n: int = 1) -> bytes:
        return b"" if self.ended else self._seen(self._raw.peek(n), n)

    def read1(self, n: int = -1) -> bytes:
        return b"" if self.ended else self._seen(self._raw.read1(n), n)

    def read(self, n: int = -1) -> bytes:
        if self.ended:
            return b""
        data = self._raw.read(n)
        if n < 0 or len(data or b"") < n:  # read() returns short only at the end
            self.ended = True
        return data or b""

    def fileno(self):
        return self._raw.fileno()

    def close(self) -> None:
        self._raw.close()


#: inputs that cannot be opened twice (standard input, pipes), opened by :func:`peek_head`:
#: path -> (the object read, its ByteSource), taken by the next :func:`open_source`
_KEPT: dict = {}


def _stdin_buffer():
    return getattr(sys.stdin, "buffer", sys.stdin)


def peek_head(path: str, encoding: str | None = None, size: int = 1 << 16, lines: int = 1) -> bytes:
    """The first bytes of ``path`` (UTF-8, up to its ``lines``-th line break or ``size``), for
    telling its format.  A file is opened and closed again; standard input or a pipe is
    opened once, kept, and read from the start by the next :func:`open_source`."""
    if path != "-":
        try:
            regular = _is_regular_path(path)
        except OSError:  # missing: the reader says so
            regular = True
        if regular:
            src = ByteSource(path, encoding)
            try:
                return src.head(size, lines)
            finally:
                src.close()
    key = _stdin_buffer() if path == "-" else None
    kept = _KEPT.get(path)
    if kept is None or kept[0] is not key:
        kept = _KEPT[path] = (key, ByteSource(path, encoding))
    return kept[1].head(size, lines)


def _is_regular_path(path: str) -> bool:
    import os
    import stat

    return stat.S_ISREG(os.stat(path).st_mode)


def open_source(path: str, encoding: str | None = None) -> ByteSource:
    """The :class:`ByteSource` of ``path``: the one :func:`peek_head` kept (so that what it
    read ahead is read again), else a new one."""
    kept = _KEPT.pop(path, None)
    if kept is not None and kept[0] is (_stdin_buffer() if path == "-" else None):
        return kept[1]
    return ByteSource(path, encoding)
