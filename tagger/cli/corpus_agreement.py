"""``tagger corpus agreement``: inter-annotator agreement between two tagged batches."""

from __future__ import annotations

import click

from ..errors import TaggerError
from ..wording import plural
from ..writers.target import Target
from ._common import exit_code
from .corpus import corpus


@corpus.command("agreement", short_help="Measure how two taggings of the same ids agree (micro-F1, kappa).")
@click.argument("first", metavar="A.jsonl")
@click.argument("second", metavar="B.jsonl")
@click.option("--by", metavar="FIELD", help="Also split the figures by this field of the rows (e.g. sample).")
@click.option("--disagreements", metavar="FILE",
              help="Write the ids whose label sets differ, with both sets, as JSON Lines (for adjudication).")
@click.option("--taxonomy", metavar="FILE",
              help="Compare every label of this taxonomy, in its order [default: $TAGGER_TAXONOMY, else the "
                   "labels the files use].")
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON instead of tables.")
@exit_code
def corpus_agreement(first, second, by, disagreements, taxonomy, as_json):
    """Agreement over the ids both files hold: micro-F1 overall and per facet, Cohen's kappa per label."""
    import json

    from ..annotate.agreement import agreement, disagreements as differing, format_agreement, to_json
    from ..annotate.batches import read_tagged
    from ..resources import taxonomy_chosen, taxonomy_path

    a, b = read_tagged(first, need_annotator=False), read_tagged(second, need_annotator=False)
    labels = None
    if taxonomy_chosen(taxonomy):
        from ..taxonomy import load_taxonomy

        tax = load_taxonomy(taxonomy_path(taxonomy))
        labels, known = tax.label_ids, set(tax.label_ids)
        for r in a + b:
            bad = [lb for lb in r["labels"] if lb not in known]
            if bad:
                raise TaggerError(f"{r['_file']}:{r['_line']}: {r['id']}: unknown label {bad[0]!r} "
                                  f"(not in {tax.path or 'the taxonomy'})")
    try:
        result = agreement(a, b, labels, by)
    except ValueError as e:
        raise TaggerError(f"{first}, {second}: {e}") from None
    click.echo(to_json(result) if as_json else format_agreement(result, first, second), nl=False)
    if disagreements:
        rows = differing(a, b)
        with Target(disagreements, option="--disagreements") as fh:
            for r in rows:
                fh.write(json.dumps(r, ensure_ascii=False) + "\n")
        click.echo(f"{disagreements}: {plural(len(rows), 'id')} with different label sets", err=True)
    return 0
