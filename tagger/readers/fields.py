"""The title and abstract of a record, as real sources write them.

- The text field may be absent, null, NaN (pandas, Parquet) or blank: the record has
  :data:`NO_ABSTRACT` (it is written out untagged with that reason).
- Without ``--text-field``, a record with no ``abstract`` takes the abstract column of a
  literature database's export, case-insensitively (:data:`TEXT_ALIASES`: Zotero's
  ``Abstract Note``, ``Abstract``, Web of Science's ``AB``), and without ``--title-field``
  a title from :data:`TITLE_ALIASES` (``Title``, IEEE Xplore's ``Document Title``, ``TI``);
  an OpenAlex work,
  whose abstract is an ``abstract_inverted_index`` (word -> positions), has its text rebuilt.
- A list of strings is joined (Crossref titles are lists); a list of sections with a
  ``text`` (S2ORC ``pdf_parses``, unarXive) gives the sections' texts separated by blank lines.
- Anything else (a number, an object, a list of something else) is an error naming the
  field and what it holds.
"""

from __future__ import annotations

from dataclasses import dataclass

from .base import InputError, find_column, named

#: the reason given to records without text
NO_ABSTRACT = "no abstract"
#: other names of the default text field ``abstract``, tried in order (case-insensitively) when
#: it is absent: Zotero's ``Abstract Note``, Scopus', IEEE Xplore's, Dimensions' and Lens'
#: ``Abstract``, Web of Science's ``AB``
TEXT_ALIASES = ("Abstract Note", "Abstract", "AB")
#: other names of the default title field ``title``: ``Title`` (Zotero, Scopus, Dimensions,
#: Lens), IEEE Xplore's ``Document Title``, Web of Science's ``TI`` and ``Article Title``
TITLE_ALIASES = ("Title", "Document Title", "TI", "Article Title")
#: OpenAlex's abstract: ``{word: [positions]}``
INVERTED_INDEX = "abstract_inverted_index"
#: a file whose first this many records all lack the text field is an error (a wrong
#: ``--text-field``), not that many records without an abstract
FIELD_CHECK_RECORDS = 1000


@dataclass
class Document:
    """What the model reads of one record: ``title`` and ``text`` (str, possibly empty);
    ``reason``: :data:`NO_ABSTRACT` when there is no text, else None; ``error``: why the
    record cannot be read (then it is a bad record), else None; ``has_field``: the text
    field (or an alias, or an inverted index) occurs in the record, even if null."""

    title: str = ""
    text: str = ""
    reason: str | None = None
    error: str | None = None
    has_field: bool = True


def text_fields(text_field: str = "abstract", title_field: str = "title") -> tuple[str, ...]:
    """Every field :func:`document` may read, for these options."""
    names = [text_field, title_field, INVERTED_INDEX]
    if text_field == "abstract":
        names += TEXT_ALIASES
    if title_field == "title":
        names += TITLE_ALIASES
    return tuple(names)


def _is_null(v) -> bool:
    """None, a float NaN (pandas, Parquet), or pandas' NA / NaT."""
    if v is None or (isinstance(v, float) and v != v):
        return True
    return type(v).__name__ in ("NAType", "NaTType")


def _kind(v) -> str:
    if isinstance(v, bool):
        return "true/false"
    if isinstance(v, (int, float)):
        return "a number"
    if isinstance(v, dict):
        return "an object"
    if isinstance(v, list):
        return "a list"
    return type(v).__name__


def rebuild_inverted_index(index) -> str:
    """OpenAlex's ``abstract_inverted_index`` (``{word: [positions]}``) as text, words in
    position order separated by spaces; raises ValueError when it is not such a mapping."""
    if not isinstance(index, dict):
        raise ValueError(f"is {_kind(index)}, not an inverted index (word -> positions)")
    at = []
    for word, positions in index.items():
        if not isinstance(positions, list) or not all(isinstance(p, int) and not isinstance(p, bool) for p in positions):
            raise ValueError(f"has {_kind(positions)} for {word!r}, not a list of positions")
        at.extend((p, word) for p in positions)
    at.sort()
    return " ".join(w for _, w in at)


def _text_of(v, name: str):
    """``(text, error)`` of a field's value (not null)."""
    if isinstance(v, str):
        return v, None
    if isinstance(v, list):
        if all(isinstance(x, str) for x in v):
            return "\n\n".join(v), None
        if all(isinstance(x, dict) and isinstance(x.get("text"), str) for x in v):
            return "\n\n".join(x["text"] for x in v), None
        kinds = ", ".join(sorted({type(x).__name__ for x in v}))
        return "", f"{name!r} must be a string, a list of strings or of sections with a 'text', not a list of {kinds}"
    return "", f"{name!r} must be a string, not {type(v).__name__}"


def document(fields: dict, text_field: str = "abstract", title_field: str = "title") -> Document:
    """The :class:`Document` of a record's ``fields`` (module docstring)."""
    doc = Document()
    name = text_field
    if text_field not in fields:  # `` abstract`` of a header ``title, abstract`` too
        name = (find_column(fields, text_field, TEXT_ALIASES) if text_field == "abstract"
                else named(fields, text_field)) or text_field
    if name in fields:
        v = fields[name]
        if not _is_null(v):
            doc.text, doc.error = _text_of(v, name)
    elif INVERTED_INDEX in fields:
        v = fields[INVERTED_INDEX]
        if not _is_null(v):
            try:
                doc.text = rebuild_inverted_index(v)
            except ValueError as e:
                doc.error = f"{INVERTED_INDEX!r} {e}"
    else:
        doc.has_field = False
    if doc.error:
        return doc
    if not doc.text.strip():
        doc.text, doc.reason = "", NO_ABSTRACT
    tname = title_field
    if title_field not in fields:
        tname = (find_column(fields, title_field, TITLE_ALIASES) if title_field == "title"
                 else named(fields, title_field)) or title_field
    t = fields.get(tname)
    if isinstance(t, str):
        doc.title = t
    elif isinstance(t, list) and all(isinstance(x, str) for x in t):
        doc.title = " ".join(t)
    return doc


# --- is the text field there at all? ----------------------------------------------------

@dataclass
class FieldCheck:
    """What a batch tells of its file's text field: ``source``; ``first``: the index in the
    batch of its first record that has the field (or an alias), None if none has;
    ``count``: the batch's records that could be read (not counting bad records); ``fields``: the field names of its first record read."""

    source: str
    first: int | None
    count: int
    fields: list | None


class FieldWatch:
    """Holds the results of a file back until one of its records has the text field, and
    raises :class:`InputError` when none of its first :data:`FIELD_CHECK_RECORDS` has (so a
    wrong ``--text-field`` is one clear error, not every record written without tags)."""

    def __init__(self, text_field: str):
        self.text_field = text_field
        self.pending: list = []
        self.source, self.ok, self.fields, self.seen = None, True, None, 0

    def feed(self, check: FieldCheck, item) -> list:
        """The items that may be written now, ``item`` (a batch's results) among them or not."""
        if check.source != self.source:
            self.finish()
            self.source, self.ok, self.fields, self.seen = check.source, False, None, 0
        if self.fields is None:
            self.fields = check.fields
        if not self.ok:
            if check.first is not None and self.seen + check.first < FIELD_CHECK_RECORDS:
                self.ok = True
            else:
                self.seen += check.count
                if self.seen >= FIELD_CHECK_RECORDS:
                    self._fail()
                self.pending.append(item)
                return []
        out, self.pending = self.pending + [item], []
        return out

    def release(self) -> list:
        """What is held back, to be written before an error that ends the input."""
        out, self.pending = self.pending, []
        return out

    def finish(self) -> None:
        """End of a file: raises if none of its records had the field."""
        if self.source is not None and not self.ok and self.seen:
            self._fail()

    def _fail(self):
        self.pending = []
        name = repr(self.text_field)
        if self.seen >= FIELD_CHECK_RECORDS:
            what = f"the field {name} is in none of the first 1,000 records"
        elif self.seen == 1:
            what = f"the field {name} is not in its one record"
        else:
            what = f"the field {name} is in none of its {self.seen} records"
        have = ", ".join(repr(f) for f in (self.fields or [])[:12]) or "none"
        raise InputError(f"{self.source}: {what} (the fields there: {have}); name the field of abstracts "
                         "with --text-field")
