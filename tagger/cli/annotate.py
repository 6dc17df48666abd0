"""``tagger annotate``: hand-tag records of a pool, interactively or as batches for a team.

The terminal UI library is imported only inside the interactive path, so that
``tagger --help`` and ``tagger annotate --queue`` do not pay for it.
"""

from __future__ import annotations

import click

from ..errors import TaggerError
from ..wording import plural
from ..writers.target import Target
from ._app import cli
from ._common import exit_code, model_options


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
@click.option("--out", "-o", "out", metavar="CORPUS.jsonl",
              help="The corpus file the annotator writes (each record as soon as it is done; run again to resume); "
                   "with --queue, where the batch goes instead of stdout.")
@click.option("--annotator", metavar="NAME", help="Who is tagging: the 'annotator' of every record written.")
@click.option("--order", type=click.Choice(["as-is", "random", "active"]), default="as-is", show_default=True,
              help="Order of the pool: as read, shuffled (--seed), or the model's least sure first.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of --order random.")
@click.option("--retrain-every", type=click.IntRange(0), default=None, metavar="N",
              help="Retrain the model in a background process every N new examples [default: 10 with --order active "
                   "and no model for the taxonomy, else never].")
@click.option("--suggest", is_flag=True,
              help="Start each record from the model's predicted labels (rows then carry \"suggested\": true).")
@click.option("--licence", default="unknown", show_default=True,
              help="The 'licence' of the texts, for records whose pool row names none.")
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
def annotate(pool, queue_n, exclude, scores_out, out, annotator, order, seed, retrain_every, suggest, licence,
             input_format, text_field, title_field, id_field, min_words, model, taxonomy):
    """Hand-tag abstracts in the terminal, or queue a batch for a team.

    POOL: anything tagger label reads.

    \b
    tagger annotate pool.txt --out corpus.jsonl --annotator me     tag, one screen per record
    tagger annotate --queue 100 pool.jsonl --exclude corpus.jsonl > batch.jsonl
    """
    if queue_n is not None:
        return _queue(pool, queue_n, exclude, scores_out, out, input_format, text_field, title_field, id_field,
                      min_words, model, taxonomy)
    if scores_out:
        raise TaggerError("--scores goes with --queue N")
    if not out or out == "-":
        raise TaggerError("name the corpus file to write with --out CORPUS.jsonl")
    if not annotator or not annotator.strip():
        raise TaggerError("say who is tagging with --annotator NAME")
    from ..annotate.interactive import run_interactive

    stats = run_interactive(
        pool, out, annotator.strip(), order=order, seed=seed, retrain_every=retrain_every, suggest=suggest,
        licence=licence, exclude=exclude, read=dict(input_format=input_format, text_field=text_field,
                                                    title_field=title_field, id_field=id_field),
        min_words=min_words, model_opt=model, taxonomy_opt=taxonomy, warn=_warn)
    if stats.get("nothing"):
        click.echo(f"tagger: {stats['nothing']}", err=True)
        return 0
    click.echo(f"{out}: {plural(stats['added'], 'record')} tagged in this run, {stats['rows']} in the file, "
               f"{stats['left']} left in the pool", err=True)
    return 0


def _queue(pool, n, exclude, scores_out, out, input_format, text_field, title_field, id_field, min_words,
           model_opt, taxonomy_opt):
    import json

    from ..annotate.pool import exclusions, pool_rows, public_row
    from ..annotate.queue import queue
    from ..api import load_model

    model = load_model(model_opt, taxonomy_opt)
    ids, keys = exclusions(exclude)
    rows = pool_rows(pool, input_format, text_field, title_field, id_field, warn=_warn)
    chosen, counts = queue(model, rows, n, ids, keys, min_words)
    with Target(out, option="--out") as fh:
        for row, *_ in chosen:
            fh.write(json.dumps(public_row(row), ensure_ascii=False) + "\n")
    if scores_out:
        with Target(scores_out, option="--scores") as fh:
            for row, unc, nearest, proba in chosen:
                tags, _ = model.decide(proba[None, :])[0]
                fh.write(json.dumps({"id": row["id"], "uncertainty": round(unc, 4), "nearest_label": nearest,
                                     "tags": tags, "scores": {lb: round(float(p), 4) for lb, p in zip(model.labels, proba)}},
                                    ensure_ascii=False) + "\n")
    click.echo(f"tagger: queued {plural(len(chosen), 'record')} of {counts['read']} read "
               f"({counts['excluded']} excluded or repeated, {counts['abstained']} too short or not English)", err=True)
    return 0
