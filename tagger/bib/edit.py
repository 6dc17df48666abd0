"""Planning the edit of each entry, applying the edits, and verifying them by re-parsing.

:func:`update_bib_text` is the whole in-memory pipeline for one file: read
(:mod:`.read`) -> model text -> ``predict`` once -> corrections -> merge (:mod:`.merge`) ->
plan (this module, :mod:`.layout`) -> splice -> verify.  The new or updated tag field is
spliced into the original text; everything outside it is copied byte for byte.  The edited
text is parsed again and compared block by block with the original; an entry whose edit
cannot be verified is left untouched and reported.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field as dc_field

from .layout import case_like, new_field
from .locate import NAME_RE, Entry, ScanError, parse_blocks, scan_entry
from .merge import (
    CORRECTIONS_FIELD,
    Corrections,
    Vocabulary,
    apply_corrections,
    merge_terms,
    parse_corrections,
    separator_of,
    split_field,
    tool_terms,
)
from .read import UNREADABLE, WARNING, Analysis, Cand, Problem

#: ``predict(records) -> per record: list of label ids, or None when the model abstains``
Predict = Callable[[list[dict]], Sequence[Sequence[str] | None]]

#: what happened to an entry (:attr:`EntryResult.status`), in the order of the summary line
STATUSES = ("tagged", "updated", "unchanged", "without abstract", "abstained", "unreadable", "untouched")


@dataclass
class EntryResult:
    """What :func:`update_bib_text` did (or, for ``--check``, would do) to one entry.

    ``status`` is one of :data:`STATUSES`: ``tagged`` (tool terms written where there were
    none), ``updated`` (tool terms changed), ``unchanged``, ``without abstract`` (no abstract
    and no corrections), ``abstained`` (the model declined; tool terms are removed),
    ``unreadable`` or ``untouched`` (left as it is because of a warning).  ``added`` /
    ``removed``: the tool terms the edit adds / removes, taxonomy order.
    """

    line: int
    key: str
    status: str
    added: list[str] = dc_field(default_factory=list)
    removed: list[str] = dc_field(default_factory=list)
    changed: bool = False


@dataclass
class BibReport:
    """Result of :func:`update_bib_text` for one file.

    Attributes:
        new_text: the edited text (equal to the input when nothing changes).
        entries: one :class:`EntryResult` per entry, file order.
        problems: every :class:`~tagger.bib.read.Problem`, one per block and kind, by line.
    """

    new_text: str
    entries: list[EntryResult] = dc_field(default_factory=list)
    problems: list[Problem] = dc_field(default_factory=list)
    #: entries with a correction that was ignored (an unknown label, a term without a sign, a
    #: label pinned and vetoed, two pins in an exclusive facet, an unreadable ``tagger`` field):
    #: these fail the run (exit 2), since a hook shows only a failing hook's output
    ignored_corrections: int = 0

    @property
    def changed_keys(self) -> list[str]:
        """Keys of the entries whose text differs in ``new_text``, file order."""
        return [e.key for e in self.entries if e.changed]

    @property
    def stale(self) -> list[EntryResult]:
        """The entries whose tags are missing or out of date in the input."""
        return [e for e in self.entries if e.changed]

    def counts(self) -> dict[str, int]:
        """``{status: number of entries}`` for every status of :data:`STATUSES`."""
        c = Counter(e.status for e in self.entries)
        return {s: c.get(s, 0) for s in STATUSES}


def _check_tags(tags, vocab: Vocabulary, key: str) -> list[str] | None:
    if tags is None:
        return None
    if isinstance(tags, str):
        raise ValueError(f"predict returned a string, not a list of tags, for {key!r}")
    for t in tags:
        if not isinstance(t, str) or not vocab.is_tool_term(t):
            raise ValueError(f"predict returned tag {t!r} for {key!r}, which is not a label id of the taxonomy")
    return vocab.sort(tags)


def _remove_span(ent: Entry, i: int) -> tuple[int, int]:
    if i > 0:
        return ent.fields[i - 1].value_end, ent.fields[i].value_end
    return ent.fields[0].name_start, ent.fields[1].name_start


class _Planner:
    """Plans the edit of one entry's tag field; ``style()`` is the file's separator."""

    def __init__(self, text: str, vocab: Vocabulary, field: str | None, cands: list[Cand], remove: bool = False):
        self.text, self.vocab, self.field, self.cands = text, vocab, field, cands
        self.target = (field or "keywords").casefold()
        self.remove = remove
        self._style: str | None = None

    def as_written(self, ent: Entry, i: int) -> bool:
        """Whether field ``i`` of ``ent`` is laid out as :func:`~.layout.new_field` writes a
        new one: the entry's last field, after the same separator as the field before it, its
        value without white space inside the delimiters.  ``--remove`` deletes such a field,
        with the line and comma the tool added, and empties any other."""
        f, text = ent.fields[i], self.text
        if i != len(ent.fields) - 1 or i < 1 or not f.pieces:
            return False
        prev = ent.fields[i - 1]
        before_prev = ent.fields[i - 2].value_end if i >= 2 else ent.key_end
        inner = text[f.pieces[0].start + 1 : f.pieces[0].end - 1]
        return (text[prev.value_end : f.name_start] == text[before_prev : prev.name_start]
                and inner == inner.strip())

    def style(self) -> str:
        """The separator most tag fields of the file use (without line breaks), else ``", "``."""
        if self._style is None:
            found: dict[str, Counter] = {self.target: Counter(), "keywords": Counter()}
            for c in self.cands:
                for f in c.entry.fields if c.entry is not None else ():
                    name = f.name.casefold()
                    if name in found and len(f.pieces) == 1 and f.pieces[0].kind != "bare":
                        sep = separator_of(self.text[f.pieces[0].start + 1 : f.pieces[0].end - 1])
                        if sep is not None and "\n" not in sep:
                            found[name][sep] += 1
            best = found[self.target] or found["keywords"]
            self._style = best.most_common(1)[0][0] if best else ", "
        return self._style

    def plan(self, ent: Entry, tags: list[str]) -> tuple[tuple[int, int, str] | None, str | None, list[str]]:
        """``((start, end, replacement) | None, warning | None, old tool terms)``."""
        text, vocab, field = self.text, self.vocab, self.field
        idx = [i for i, f in enumerate(ent.fields) if f.name.casefold() == self.target]
        if not idx:
            if not tags:
                return None, None, []
            tie = next((f for f in ent.fields if f.name.casefold() == "abstract"), None)
            name = field if field else case_like("keywords", ent.fields, tie)
            at, ins = new_field(text, ent, name, tags, self.style())
            return (at, at, ins), None, []
        i = idx[0]
        f = ent.fields[i]
        if not (len(f.pieces) == 1 and f.pieces[0].kind != "bare"):
            return None, f"the {f.name} field is a macro or a `#` concatenation; left untouched", []
        p = f.pieces[0]
        inner = text[p.start + 1 : p.end - 1]
        old = tool_terms(inner, vocab)
        if field is None:
            own_sep = separator_of(inner)
            new_inner, had_tool, has_user = merge_terms(inner, tags, vocab, own_sep or self.style())
            if new_inner == inner:
                return None, None, old
            if (not tags and had_tool and not has_user and len(ent.fields) > 1
                    and (not self.remove or self.as_written(ent, i))):
                a, b = _remove_span(ent, i)
                return (a, b, ""), None, old
            return (p.start + 1, p.end - 1, new_inner), None, old
        # a tool-owned field is replaced wholesale, but only when it holds nothing but tool
        # terms, so that --field author (or a user's keywords) is never overwritten
        terms, _, _ = split_field(inner)
        if any(t and not vocab.is_tool_term(t) for t in terms):
            return None, f"--field {field}: the field holds terms that are not the taxonomy's labels; left untouched", old
        if not tags:
            if len(ent.fields) > 1 and inner.strip():
                a, b = _remove_span(ent, i)
                return (a, b, ""), None, old
            return None, None, old
        if old == tags:
            return None, None, old
        return (p.start + 1, p.end - 1, (separator_of(inner) or self.style()).join(tags)), None, old


def _apply(text: str, edits: Iterable[tuple[int, int, str]]) -> str:
    out, pos = [], 0
    for a, b, r in sorted(edits):
        out.append(text[pos:a])
        out.append(r)
        pos = b
    out.append(text[pos:])
    return "".join(out)


def _corrections(an: Analysis, c: Cand, vocab: Vocabulary) -> tuple[Corrections | None, str | None]:
    """The entry's corrections, or a reason why its ``tagger`` field cannot be read."""
    fields = [f for f in c.entry.fields if f.name.casefold() == CORRECTIONS_FIELD]
    if not fields:
        return None, None
    f = fields[0]
    if not (len(f.pieces) == 1 and f.pieces[0].kind != "bare"):
        return None, f"the {f.name} field is a macro or a `#` concatenation; corrections unreadable, left untouched"
    return parse_corrections(an.text[f.pieces[0].start + 1 : f.pieces[0].end - 1], vocab), None


def update_bib_text(text: str, predict: Predict | None, *, facets, field: str | None = None,
                    verify: bool = True, remove: bool = False) -> BibReport:
    """Bring the tags of every readable entry up to date, in memory.

    Args:
        text: the whole file, decoded (a BOM stays as ``"\\ufeff"``; CRLF is kept).
        predict: called at most once, with a list of ``{"key", "title", "abstract"}`` dicts
            (macros resolved, text through :func:`tagger.text.normalize`), one per readable
            entry with a non-blank abstract, file order; returns a sequence of the same
            length whose items are lists of label ids (empty: no label passed), or None
            when the model abstains.
        facets: the taxonomy, ``[(facet id, kind, [label ids])]`` (as ``Model.facets``), or
            a :class:`~tagger.bib.merge.Vocabulary`.  Only its label ids are tool terms.
        field: ``None`` to merge into ``keywords``; a field name to own that field instead.
            Must not be ``abstract``, ``title`` or ``tagger``.
        verify: re-parse the edited text and drop the edits that do not come out as planned
            (what is written is always verified; ``--check``, which writes nothing, skips it).
        remove: ``tagger bib --remove``: take every tool term out of the tag fields (no
            prediction, corrections not applied; ``predict`` may be None).  A field left
            empty is deleted when it is laid out as the tool writes a new one
            (:meth:`_Planner.as_written`), so tagging then removing gives the file back.

    Returns:
        A :class:`BibReport`; ``new_text`` differs from ``text`` only inside tag fields.

    Raises:
        ValueError: ``predict`` returned a different number of results or a tag that is not
            a label id, or ``field`` is not allowed.
    """
    vocab = facets if isinstance(facets, Vocabulary) else Vocabulary(facets)
    if field is not None and field.casefold() in ("abstract", "title", CORRECTIONS_FIELD):
        raise ValueError(f"the tag field must not be {field!r}" + (
            f" (the {CORRECTIONS_FIELD} field holds your corrections; the tool never writes it)"
            if field.casefold() == CORRECTIONS_FIELD else ""))
    if field is not None and not NAME_RE.fullmatch(field):
        raise ValueError(f"invalid field name {field!r}")
    try:
        an = Analysis(text)
    except Exception as exc:  # bibtexparser crashed or mis-located: touch nothing
        return BibReport(text, problems=[Problem(1, "-", UNREADABLE, f"file cannot be parsed safely ({exc}); left untouched")])

    problems: dict[tuple[int, str, str], list[str]] = {}

    def problem(line: int, key: str, kind: str, reason: str) -> None:
        lst = problems.setdefault((line, key, kind), [])
        if reason not in lst:
            lst.append(reason)

    for p in an.block_problems:
        problem(*p)
    planner = _Planner(text, vocab, field, an.cands, remove=remove)
    results: list[EntryResult] = []
    todo = []  # (cand, result, corrections, needs prediction)
    ignored = 0  # entries with an ignored correction
    records = []
    for c in an.cands:
        line = an.line(c.start)
        res = EntryResult(line, c.shown_key, "unchanged")
        results.append(res)
        for kind, reason in c.problems:
            problem(line, c.shown_key, kind, reason)
        if not c.editable or c.entry is None:
            res.status = "unreadable" if any(k == UNREADABLE for k, _ in c.problems) else "untouched"
            continue
        if remove:
            todo.append((c, res, None, False))
            continue
        corr, why = _corrections(an, c, vocab)
        if why:
            problem(line, c.shown_key, WARNING, why)
            res.status = "untouched"
            ignored += 1
            continue
        for w in corr.warnings if corr else ():
            problem(line, c.shown_key, WARNING, w)
        ignored += bool(corr and corr.warnings)
        abstract = an.value(c, "abstract")
        if abstract:
            records.append({"key": c.entry.key, "title": an.value(c, "title") or "", "abstract": abstract})
        elif corr is None:
            res.status = "without abstract"
            continue
        todo.append((c, res, corr, bool(abstract)))

    predicted: list = []
    if records:
        predicted = list(predict(records))
        if len(predicted) != len(records):
            raise ValueError(f"predict returned {len(predicted)} results for {len(records)} entries")
    it = iter(predicted)
    edits: dict[int, tuple[Cand, tuple[int, int, str]]] = {}
    for c, res, corr, has_abstract in todo:
        tags = _check_tags(next(it), vocab, c.key) if has_abstract else []
        abstained = tags is None
        final = apply_corrections(tags or [], corr, vocab)
        try:
            edit, why, old = planner.plan(c.entry, final)
        except Exception as exc:  # a bug here must not damage the file: skip the entry
            edit, why, old = None, f"internal error while planning the edit ({exc!r}); left untouched", []
        if why:
            problem(res.line, res.key, WARNING, why)
            res.status = "untouched"
            continue
        res.added = [t for t in final if t not in old]
        res.removed = vocab.sort(t for t in old if t not in final)
        if abstained and not (corr and corr.pins):
            res.status = "abstained"
        elif edit is not None:
            res.status = "updated" if old else "tagged"
        if edit is not None:
            res.changed = True
            edits[c.index] = (c, edit)

    by_index = {c.index: r for c, r in zip(an.cands, results)}
    while True:  # apply, verify, and drop unverifiable edits until the result is verified
        new_text = _apply(text, [e for _, e in edits.values()])
        if not edits or not verify:
            break
        bad = _verify(an, new_text, edits, field)
        if not bad:
            break
        for idx in bad:
            c = edits.pop(idx)[0]
            r = by_index[idx]
            r.status, r.changed, r.added, r.removed = "unreadable", False, [], []
            problem(r.line, r.key, UNREADABLE, "the edit could not be verified by re-parsing; left untouched")
    report = BibReport(new_text, results, ignored_corrections=ignored)
    report.problems = sorted((Problem(ln, k, kind, "; ".join(rs)) for (ln, k, kind), rs in problems.items()),
                             key=lambda p: (p.line, p.kind != UNREADABLE))
    return report


def _verify(an: Analysis, new_text: str, edits: dict, field: str | None) -> list[int]:
    """Indices of edited blocks whose edit is not confirmed by re-parsing ``new_text``."""
    old = an.located
    all_idx = sorted(edits)
    try:
        new = parse_blocks(new_text)
    except Exception:
        return all_idx
    if len(new) != len(old):
        return _first_culprits(old, new, all_idx)
    text = an.text
    bad: list[int] = []
    target = (field or "keywords").casefold()
    for i, ((ob, os_, oe), (nb, ns, ne_)) in enumerate(zip(old, new)):
        if type(ob) is not type(nb):
            return _first_culprits(old, new, all_idx, upto=i)
        if i not in edits:
            if ob.raw != nb.raw:
                return _first_culprits(old, new, all_idx, upto=i)
            continue
        c, (a, b, r) = edits[i]
        if nb.raw != text[os_:a] + r + text[b:oe]:
            bad.append(i)
            continue
        # the fields must be the old ones, with only the tag field changed
        try:
            ne = scan_entry(new_text, ns, c.entry.mode, limit=ne_)
            if c.recovered and scan_entry(new_text, ns, "none", limit=ne_).spans() != ne.spans():
                raise ScanError(0, "modes disagree")
        except ScanError:
            bad.append(i)
            continue
        if not c.recovered:
            inner = getattr(nb, "ignore_error_block", None) or nb  # duplicates (e.g. empty keys) wrap the entry
            bp = [(f.key, f.value) for f in getattr(inner, "fields", [])]
            if bp != [(f.name, new_text[f.value_start : f.value_end]) for f in ne.fields]:
                bad.append(i)
                continue
        oldf = [(f.name, text[f.value_start : f.value_end]) for f in c.entry.fields]
        newf = [(f.name, new_text[f.value_start : f.value_end]) for f in ne.fields]
        if [x for x in oldf if x[0].casefold() != target] != [x for x in newf if x[0].casefold() != target]:
            bad.append(i)
            continue
        if ne.type != c.entry.type or ne.key != c.entry.key:
            bad.append(i)
    return bad


def _first_culprits(old, new, edited: list[int], upto: int | None = None) -> list[int]:
    """When the block structure differs, blame the last edit at or before the divergence."""
    if upto is None:
        upto = next((i for i, (o, n) in enumerate(zip(old, new)) if o[0].raw != n[0].raw), len(old) - 1)
    before = [i for i in edited if i <= upto]
    return [before[-1]] if before else edited[:1]

