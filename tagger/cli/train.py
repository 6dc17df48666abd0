"""``tagger train``: fit a model directory on a hand-tagged corpus."""

from __future__ import annotations

import click

from ..corpus import DEFAULT_CORPUS, need_corpus
from ..errors import TaggerError
from ..wording import plural
from ._app import cli
from ._common import Progress, exit_code, space_options


@cli.command(short_help="Train TF-IDF + LightGBM models on a hand-tagged corpus.")
@click.option("--corpus", default=DEFAULT_CORPUS, show_default=True, metavar="FILE",
              help="Hand-tagged corpus (JSON Lines with abstract, labels, annotator).")
@click.option("--taxonomy", metavar="FILE", help="Taxonomy [default: $TAGGER_TAXONOMY, else the packaged one].")
@click.option("--out", default="models", show_default=True, metavar="DIR", help="Model directory to (re)write atomically, relative to the current directory (in a "
                   "checkout, models/ is what the package ships; `tagger label` uses the installed copy "
                   "unless given --model DIR or $TAGGER_MODEL).")
@click.option("--folds", type=click.IntRange(0), default=5, show_default=True,
              help="Folds of the out-of-fold pass that tunes per-label thresholds (0: no tuning).")
@click.option("--rounds", type=click.IntRange(1), default=None, help="Boosting rounds per label [default: the model's].")
@space_options("[default: package]; a directory is copied into the model directory")
@exit_code
def train(corpus, taxonomy, out, folds, rounds, space_dir, space_weight, space_trees):
    """Train TF-IDF + LightGBM models on a hand-tagged corpus and write a model directory.

    Per-label thresholds are tuned on out-of-fold scores; a `threshold:` in the taxonomy (of a
    label, or of a facet for its labels) replaces the tuned one.  The model card (README.md of
    the directory) is kept when corpus, taxonomy and parameters are unchanged, with its date,
    corpus and versions lines made anew; `tagger evaluate --card DIR` writes its figures.
    """
    from ..corpus import check_corpus, load_corpus
    from ..model.training import NUM_ROUNDS
    from ..model.training import train as train_model
    from ..resources import taxonomy_path
    from ..taxonomy import load_taxonomy

    tax = load_taxonomy(taxonomy_path(taxonomy))
    need_corpus(corpus)
    problems = check_corpus(corpus, tax)
    if problems:
        raise TaggerError(f"{problems[0]} (and {len(problems) - 1} more problems; see `tagger corpus check {corpus}`)"
                          if len(problems) > 1 else problems[0])
    records = load_corpus(corpus)
    if len(records) < 10:
        raise TaggerError(f"{corpus}: {len(records)} examples; training needs at least 10 hand-tagged abstracts")
    if folds > len(records) // 2:
        raise TaggerError(f"--folds {folds} is too many for {len(records)} examples (at most {len(records) // 2})")
    from ..model.modeldir import check_out_dir
    from ..model.modeldir import space_words
    from ..model.space import resolve_training_space

    check_out_dir(out)
    space = resolve_training_space(space_dir, out, space_weight, space_trees)
    steps = Progress("training")
    try:
        manifest = train_model(records, tax, out, num_rounds=rounds or NUM_ROUNDS, threshold_folds=folds, progress=steps,
                               space=space, space_in_trees=space_trees)
    finally:
        steps.close()
    figs = manifest.get("figures", {}).get("out_of_fold", {})
    click.echo(f"trained {plural(len(manifest['labels']), 'label')} on {manifest['corpus_size']} abstracts "
               f"({manifest['n_features']} terms{space_words(manifest)}, {manifest['n_trees']} trees) -> {out}")
    if figs:
        click.echo(f"out-of-fold F1 (micro/macro): {figs['all']['f1_micro']:.3f} / {figs['all']['f1_macro']:.3f}")
    return 0
