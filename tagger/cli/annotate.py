"""``tagger annotate``: hand-tag records of a pool, interactively or as batches for a team.

The terminal UI library is imported only inside the interactive path, so that
``tagger --help`` and ``tagger annotate --queue`` do not pay for it.
"""

from __future__ import annotations

import click

from ..errors import TaggerError
from ._app import cli
from ._common import AtomicOutput, exit_code, load_model, model_options, plural


def _warn(msg):
    click.echo(f"tagger: warning: {msg}", err=True)


@cli.command()
@click.argument("pool", nargs=-1, required=True, metavar="POOL...")
@click.option("--queue", "queue_n", type=click.IntRange(1), metavar="N",
              help="Batch mode: write the N records the model is least sure about (texts only) and stop.")
@click.option("--exclude", multiple=True, metavar="CORPUS.jsonl",
              help="Leave out the records of this corpus or batch (by id, else by text); repeatable.")
@click.option("--scores", "scores_out", metavar="FILE",
              help="With --queue: write the model's scores of the queued records here (never into the batch).")
@click.option("--out", "-o", "out", metavar="FILE",
              help="With --queue: write the batch here (atomically) instead of stdout.")
@click.option("--input-format", type=click.Choice(["txt", "jsonl", "csv", "tsv"]),
              help="Pool format [default: from the extension, else sniffed as tagger label does].")
@click.option("--text-field", "--text-column", "text_field", default="abstract", show_default=True,
              help="Field or column holding the abstract.")
@click.option("--title-field", "--title-column", "title_field", default="title", show_default=True,
              help="Field or column holding the title.")
@click.option("--id-field", "--id-column", "id_field", default="id", show_default=True,
              help="Field or column holding the record id.")
@click.option("--min-words", type=click.IntRange(0), default=None,
              help="Leave out texts shorter than this many words (the model abstains on them) [default: 20].")
@model_options
@exit_code
def annotate(pool, queue_n, exclude, scores_out, out, input_format, text_field, title_field, id_field, min_words,
             model, taxonomy):
    """Hand-tag abstracts of POOL (anything tagger label reads).

    \b
    tagger annotate --queue 100 pool.jsonl --exclude corpus.jsonl > batch.jsonl
    """
    if queue_n is None:
        raise TaggerError("give --queue N (the interactive annotator is not built yet)")
    return _queue(pool, queue_n, exclude, scores_out, out, input_format, text_field, title_field, id_field,
                  min_words, model, taxonomy)


def _queue(pool, n, exclude, scores_out, out, input_format, text_field, title_field, id_field, min_words,
           model_opt, taxonomy_opt):
    import json

    from ..annotate.pool import exclusions, pool_rows, public_row
    from ..annotate.queue import queue

    model = load_model(model_opt, taxonomy_opt)
    ids, keys = exclusions(exclude)
    rows = pool_rows(pool, input_format, text_field, title_field, id_field, warn=_warn)
    chosen, counts = queue(model, rows, n, ids, keys, min_words)
    with AtomicOutput(out) as fh:
        for row, *_ in chosen:
            fh.write(json.dumps(public_row(row), ensure_ascii=False) + "\n")
    if scores_out:
        with AtomicOutput(scores_out) as fh:
            for row, unc, nearest, proba in chosen:
                tags, _ = model.decide(proba[None, :])[0]
                fh.write(json.dumps({"id": row["id"], "uncertainty": round(unc, 4), "nearest_label": nearest,
                                     "tags": tags, "scores": {lb: round(float(p), 4) for lb, p in zip(model.labels, proba)}},
                                    ensure_ascii=False) + "\n")
    click.echo(f"tagger: queued {plural(len(chosen), 'record')} of {counts['read']} read "
               f"({counts['excluded']} excluded or repeated, {counts['abstained']} too short or not English)", err=True)
    return 0
