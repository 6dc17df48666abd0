"""Text output, for people: one block per record, its id (and, on a terminal, its title or
first words), then its tags grouped by facet with scores, or why it has none."""

from __future__ import annotations

FORMATS = ("text",)

#: characters of a title shown beside the id on a terminal
TITLE_WIDTH = 70


def _cell(v) -> str:
    """``v`` on one line, without tabs."""
    return str(v).replace("\t", " ").replace("\r", " ").replace("\n", " ")


def headline(rec, renderer) -> str:
    """The record's title, else the first words of its text, shortened to :data:`TITLE_WIDTH`."""
    from ..readers.fields import document

    doc = document(rec.fields or {}, renderer.text_field, renderer.title_field)
    words = " ".join((doc.title or doc.text or "").split())
    if len(words) > TITLE_WIDTH:
        words = words[:TITLE_WIDTH - 1].rsplit(" ", 1)[0] + "…"
    return words


def render(rec, pred, renderer) -> str:
    """The block of one record, with a blank line after it."""
    lines = [_cell(rec.id(renderer.id_field))]
    if renderer.titles:
        title = headline(rec, renderer)
        if title:
            lines[0] += f"  {title}"
    if pred.reason:
        lines.append(f"  (no tags: {pred.reason})")
    elif not pred.tags:
        lines.append("  (no label passed its threshold)")
    else:
        facets = renderer.facets
        width = max(len(f[0]) for f in facets) + 1 if facets else 12
        for f_id, _, _ in facets:
            mine = [t for t in pred.tags if t.split(":", 1)[0] == f_id]
            if not mine:
                continue
            shown = ", ".join(t.split(":", 1)[1] + _score(pred.scores.get(t)) for t in mine)
            lines.append(f"  {f_id + ':':<{width}} {shown}")
            for t in mine:
                for gram, contrib in pred.explanations.get(t, []):
                    lines.append(f"  {'':<{width}}   {t.split(':', 1)[1]} <- \"{gram}\" (+{contrib:.2f})")
    if getattr(pred, "note", None):
        lines.append(f"  ({pred.note})")
    return "\n".join(lines) + "\n\n"


def _score(v) -> str:
    """`` 0.93`` for a score; nothing for a tag trusted from the record without one."""
    return f" {v:.2f}" if isinstance(v, (int, float)) and not isinstance(v, bool) else ""
