"""What every reader shares: :class:`Record`, the errors, and :class:`ReadOptions`."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..errors import TaggerError


class InputError(TaggerError):
    """Unreadable input; the message names the file and line or record."""


class FileError(InputError):
    """A file that cannot be opened at all (missing, a directory, not readable): nothing of
    it was read."""


#: other names of the default id field ``id``: Zotero's CSV export calls the item key ``Key``
ID_ALIASES = ("Key",)
#: the id columns of literature databases' table exports, tried in order (case-insensitively)
#: when a CSV/TSV has no ``id``: Zotero ``Key``, Scopus ``EID``, Web of Science ``UT``, Lens
#: ``Lens ID``, Dimensions ``Publication ID``, then IEEE Xplore's (and any export's) ``DOI``
TABLE_ID_ALIASES = ("Key", "EID", "UT", "UT (Unique WOS ID)", "Lens ID", "Publication ID", "DOI")


def find_column(names, wanted: str, aliases=()) -> str | None:
    """The name among ``names`` that is ``wanted``, else the first of ``aliases`` that is
    among them, compared case-insensitively and without surrounding white space
    (``ABSTRACT``, ``Document title``, `` abstract`` of a header ``title, abstract``); None if none."""
    names = list(names)
    if wanted in names:
        return wanted
    folded = {}
    for n in names:
        if isinstance(n, str):
            folded.setdefault(n.strip().casefold(), n)
    for a in (wanted, *aliases):
        if a.casefold() in folded:
            return folded[a.casefold()]
    return None


def named(names, wanted: str) -> str | None:
    """The name among ``names`` that is ``wanted``, else one that is ``wanted`` once white space
    around both is stripped (`` abstract`` of a header ``title, abstract``); None if none.
    Case counts (a name given with ``--text-field`` is matched as it is written)."""
    names = list(names)
    if wanted in names:
        return wanted
    key = wanted.strip()
    return next((n for n in names if isinstance(n, str) and n.strip() == key), None)


@dataclass
class Record:
    """One input record: ``fields`` (all input fields, in input order), ``n`` (1-based
    record number in its file), ``line`` (1-based line where it starts), ``source`` (file),
    ``default_id`` (``<file stem>:<n>``, for records whose input has no id)."""

    fields: dict | None  # None: a JSON Lines line not parsed yet (``raw``; see jsonl.parse_json_record)
    n: int
    line: int
    source: str
    default_id: str = ""
    error: str | None = None  # why this line is not a record (then ``fields`` is empty)
    #: JSON Lines input: the line's text, so output can keep its bytes (``writers.jsonl``)
    raw: str | None = None
    #: JSON Lines input without an id: the reader added ``fields["id"]``
    id_added: bool = False
    #: CSV/TSV input without a column named as the id field: the column found to hold the id
    #: (``EID``, ``DOI``; `` id`` of a header ``title, id``)
    id_column: str | None = None
    #: BibTeX input: the entry's own text (``tagger filter`` writes it back as it was)
    entry: str | None = None
    #: RIS and MEDLINE input: the record's lines as they were, line breaks and the blank
    #: lines after it included (``tagger filter`` writes them back byte for byte)
    block: str | None = None
    #: CSV input: the delimiter its file was read with, which a CSV written from it keeps
    delimiter: str | None = None
    #: CSV input: its file started with a UTF-8 BOM (Excel's "CSV UTF-8"), which a CSV written
    #: from it keeps
    bom: bool = False
    #: CSV input: its header row's line ending (``"\r\n"``: Excel's), which a CSV written from it keeps
    newline: str | None = None

    def id(self, id_field: str = "id") -> str:
        """The record's id: its ``id_field`` value, else that of the id column the table reader
        found (:attr:`id_column`), else (for the default ``id``) a Zotero export's ``Key``
        column, else ``<file stem>:<n>``."""
        v = self.fields.get(id_field)
        if v in (None, "") and self.id_column:
            v = self.fields.get(self.id_column)
        if v in (None, "") and id_field == "id":
            v = next((self.fields[a] for a in ID_ALIASES if self.fields.get(a) not in (None, "")), None)
        return str(v) if v not in (None, "") else (self.default_id or str(self.n))


def _no_warn(message: str) -> None:
    pass


@dataclass
class ReadOptions:
    """How to read records, the same for every format (each reader uses what applies).

    ``text_field``/``title_field``/``id_field``: the field or column names (with
    ``header=False``, 1-based column numbers as strings: ``"3"``); ``encoding``: the input's
    encoding, None for UTF-8 (a UTF-16 or UTF-32 BOM is recognised either way);
    ``header``: CSV/TSV has a header row; ``delimiter``: the CSV/TSV delimiter, None to
    sniff it from the header row; ``lenient``: a bad record (invalid JSON, a row with the
    wrong number of cells, a line that is not UTF-8) comes out as a :class:`Record` with
    ``error`` set instead of raising :class:`InputError`; ``warn(message)``: where readers
    report doubts about the input (one line each); ``max_record_size``: the bytes of one
    record (a line, paragraph, JSON value, CSV cell, ``.bib`` value, Parquet cell) reading
    keeps in memory (``--max-record-size``), a longer record being a bad record;
    ``max_depth``: how deeply JSON may nest; ``sniffed``: the input was taken for a CSV or
    TSV table by its first line (its name told nothing, ``--input-format`` was not given), so
    an error in its header or first row says how to read it as text instead.
    """

    text_field: str = "abstract"
    title_field: str = "title"
    id_field: str = "id"
    encoding: str | None = None
    header: bool = True
    delimiter: str | None = None
    lenient: bool = True
    max_record_size: int = 4 << 20  # tagger.readers.stream.MAX_RECORD_SIZE
    max_depth: int = 100  # tagger.readers.json.MAX_DEPTH
    sniffed: bool = False
    warn: object = field(default=_no_warn, compare=False, repr=False)


#: input formats by file extension (after ``.gz``); ``.json`` and ``.jsonl`` are looked at
#: further (``tagger.readers.sniff_format``): an array or pretty-printed objects are ``json``;
#: ``xml`` is no format of its own: the content tells (a feed, PubMed XML, else an error)
EXTENSIONS = {".txt": "txt", ".text": "txt", ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json",
              ".csv": "csv", ".tsv": "tsv", ".tab": "tsv", ".bib": "bib", ".parquet": "parquet",
              ".ris": "ris", ".nbib": "medline", ".medline": "medline", ".atom": "feed", ".rss": "feed",
              ".xml": "xml"}


def source_stem(path: str) -> str:
    """File name without directories and extensions (``data/day.jsonl.gz`` -> ``day``); ``stdin`` for ``-``."""
    if path == "-":
        return "stdin"
    name = Path(path).name
    for _ in range(2):
        stem, dot, ext = name.rpartition(".")
        if dot and stem and ("." + ext.lower() in EXTENSIONS or ext.lower() == "gz"):
            name = stem
    return name
