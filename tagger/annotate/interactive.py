"""``tagger annotate`` in the terminal: the pool read and ordered, the session set up, the
screen run, the background retrains stopped at the end."""

from __future__ import annotations

import os
import sys

from ..errors import TaggerError


def _model_for(taxonomy, model_opt):
    """The model for this taxonomy: ``--model``/``$TAGGER_MODEL`` (an error when it does
    not fit the taxonomy), else the packaged one when it fits, else None."""
    from ..model import Model, ModelError
    from ..resources import model_dir

    if model_opt or os.environ.get("TAGGER_MODEL"):
        return Model.load(model_dir(model_opt), taxonomy)
    try:
        return Model.load(model_dir(None), taxonomy)
    except ModelError:
        return None


def order_rows(rows, order, seed=0, model=None, min_words=None):
    """Pool rows in the order to show them: ``as-is``; ``random`` (shuffled by ``seed``);
    ``active``: by the model's uncertainty, highest first, abstained ones last (shuffled by
    ``seed`` when there is no model yet)."""
    import random

    rows = list(rows)
    if order == "random" or (order == "active" and model is None):
        random.Random(seed).shuffle(rows)
    elif order == "active":
        from .retrain import Assistant

        rank = Assistant(model, "", True, min_words=min_words).ranking(rows)
        rows.sort(key=lambda r: -rank.get(r["id"], -1.0))
    return rows


def run_interactive(pool, out, annotator, *, order="as-is", seed=0, retrain_every=None, suggest=False,
                    licence="unknown", exclude=(), read=None, min_words=None, model_opt=None, taxonomy_opt=None,
                    warn=None) -> dict:
    """Run the annotator on the terminal until the user quits.

    Returns ``{"added": new records saved, "rows": rows in ``out``, "left": pool records not
    done}``, and ``"nothing"`` (the line to print; no screen is opened) when the pool holds no
    record or only excluded ones.  Raises TaggerError (one line) when stdin or stdout is not a terminal, for an
    unreadable pool, corpus or taxonomy, or a model that does not fit the taxonomy.
    """
    from ..resources import taxonomy_path
    from ..taxonomy import load_taxonomy
    from .pool import exclusions, pool_rows, text_key
    from .retrain import Assistant
    from .session import Session, label_keys
    from .store import CorpusStore

    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise TaggerError("tagger annotate needs a terminal on stdin and stdout (for batches without one: --queue N)")
    tax_file = taxonomy_path(taxonomy_opt)
    taxonomy = load_taxonomy(tax_file)
    label_keys(taxonomy)
    store = CorpusStore(out)
    ids, keys = exclusions(exclude)
    read_rows = list(pool_rows(pool, warn=warn, **(read or {})))
    rows = [r for r in read_rows if r["id"] not in ids and text_key(r["abstract"]) not in keys]
    if not rows:  # one line, not a full screen with nothing on it
        names = ", ".join("standard input" if p == "-" else str(p) for p in pool)
        why = f"no records read from {names}" if not read_rows else \
            f"nothing to tag: all {len(read_rows)} records of {names} are excluded (--exclude)"
        return {"added": 0, "rows": len(store.rows), "left": 0, "nothing": why}
    active = order == "active"
    model = _model_for(taxonomy, model_opt) if (active or suggest or model_opt) else None
    if retrain_every is None:
        retrain_every = 10 if active and model is None else 0
    rows = order_rows(rows, order, seed, model, min_words)
    assistant = Assistant(model, tax_file, active, retrain_every, min_words) if (active or suggest or retrain_every) else None
    session = Session(taxonomy, store, rows, annotator, order, licence,
                      suggest=assistant.suggest if (suggest and assistant) else None)
    from .tui import Screen

    try:
        Screen(session, assistant).run()
    finally:
        if assistant is not None:
            assistant.close()
    return {"added": session.added, "rows": len(store.rows), "left": len(session.pending)}
