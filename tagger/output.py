"""Writing tagged records: text, JSON Lines, JSON, TSV, CSV and Annif-style pairs.

A :class:`Writer` takes ``(Record, Prediction)`` pairs one at a time, so output can start
before the input ends.  Formats (``--format``):

- ``text``: one block per record, its id then its tags grouped by facet with scores;
- ``jsonl``: every input field kept, in order, plus ``tags`` (label ids), ``scores``
  ({label: probability} of those tags), and ``reason`` (abstention) / ``explanations``
  when present; existing ``tags``/``scores`` fields are replaced in place;
- ``json``: one array of the ``jsonl`` objects;
- ``tsv``/``csv``: for CSV/TSV input, the input table with every column kept plus ``tags``
  (joined with ``;``) and ``scores`` (JSON); for other inputs, ``tsv`` is one header-less
  row ``id<TAB>tags`` per record and ``csv`` has the columns ``id,tags,scores``;
- ``pairs``: one ``id<TAB>label<TAB>score`` row per tag, as Annif prints suggestions; a
  record without tags gets one row with an empty label and score.
"""

from __future__ import annotations

import csv
import json

OUTPUT_FORMATS = ("text", "jsonl", "json", "tsv", "csv", "pairs")


def tagged_fields(fields: dict, pred) -> dict:
    """The input fields plus ``tags``/``scores`` (and ``reason``/``explanations`` if any)."""
    out = dict(fields)
    out["tags"] = pred.tags
    out["scores"] = pred.scores
    if pred.reason:
        out["reason"] = pred.reason
    else:
        out.pop("reason", None)
    if pred.explanations:
        out["explanations"] = pred.explanations
    return out


class Writer:
    """Streams tagged records to ``fh`` (a text file object) in format ``fmt``.

    ``facets`` is the model's ``[(facet id, kind, labels)]`` (for grouping ``text`` output);
    ``table_format`` is ``"csv"``/``"tsv"`` when the input was a table (then ``csv``/``tsv``
    output keeps every column); ``id_field`` names the id field.
    """

    def __init__(self, fh, fmt: str, facets=(), table_format: str | None = None, id_field: str = "id"):
        self.fh, self.fmt, self.facets = fh, fmt, list(facets)
        self.table_format, self.id_field = table_format, id_field
        self.count = 0
        self._csv = None
        self._header = None

    def write(self, rec, pred) -> None:
        fmt, fh = self.fmt, self.fh
        rid = rec.id(self.id_field)
        if fmt == "jsonl":
            fh.write(json.dumps(tagged_fields(rec.fields, pred), ensure_ascii=False) + "\n")
        elif fmt == "json":
            fh.write(("[\n" if self.count == 0 else ",\n") + json.dumps(tagged_fields(rec.fields, pred), ensure_ascii=False))
        elif fmt == "pairs":
            if pred.tags:
                for t in pred.tags:
                    fh.write(f"{_cell(rid)}\t{t}\t{pred.scores[t]:.4f}\n")
            else:
                fh.write(f"{_cell(rid)}\t\t\n")
        elif fmt in ("tsv", "csv") and (self.table_format or fmt == "csv"):
            self._write_table(rec, pred)
        elif fmt == "tsv":
            fh.write(f"{_cell(rid)}\t{';'.join(pred.tags)}\n")
        elif fmt == "text":
            fh.write(self._text_block(rid, pred))
        else:
            raise ValueError(f"unknown output format {fmt!r}")
        self.count += 1

    def _write_table(self, rec, pred) -> None:
        if self.table_format:
            row = {k: v for k, v in rec.fields.items()}
        else:
            row = {"id": rec.id(self.id_field)}
        row["tags"] = ";".join(pred.tags)
        row["scores"] = json.dumps(pred.scores, ensure_ascii=False)
        if self._csv is None:
            self._header = list(row)
            self._csv = csv.writer(self.fh, delimiter="\t" if self.fmt == "tsv" else ",", lineterminator="\n")
            self._csv.writerow(self._header)
        self._csv.writerow([_flat(row.get(k, "")) for k in self._header])

    def _text_block(self, rid: str, pred) -> str:
        lines = [rid]
        if pred.reason:
            lines.append(f"  (no tags: {pred.reason})")
        elif not pred.tags:
            lines.append("  (no label passed its threshold)")
        else:
            width = max(len(f[0]) for f in self.facets) + 1 if self.facets else 12
            for f_id, _, _ in self.facets:
                mine = [t for t in pred.tags if t.split(":", 1)[0] == f_id]
                if not mine:
                    continue
                shown = ", ".join(f"{t.split(':', 1)[1]} {pred.scores[t]:.2f}" for t in mine)
                lines.append(f"  {f_id + ':':<{width}} {shown}")
                for t in mine:
                    for gram, contrib in pred.explanations.get(t, []):
                        lines.append(f"  {'':<{width}}   {t.split(':', 1)[1]} <- \"{gram}\" (+{contrib:.2f})")
        return "\n".join(lines) + "\n\n"

    def close(self) -> None:
        """Finish the output (closes the JSON array); does not close ``fh``."""
        if self.fmt == "json":
            self.fh.write("[]\n" if self.count == 0 else "\n]\n")


def _cell(v: str) -> str:
    return str(v).replace("\t", " ").replace("\n", " ")


def _flat(v):
    if isinstance(v, (dict, list)):
        return json.dumps(v, ensure_ascii=False)
    return v
