"""``tagger evaluate``: cross-validated figures, the baseline and the model card."""

from __future__ import annotations

import os
import sys

import click

from ..corpus import DEFAULT_CORPUS, need_corpus
from ..errors import TaggerError
from ._app import cli
from ._common import Progress, exit_code, model_options, quiet_broken_pipe, space_options


@cli.command(short_help="Cross-validate: precision, recall and F1 per facet and label.")
@click.option("--corpus", default=DEFAULT_CORPUS, show_default=True, metavar="FILE",
              help="Hand-tagged corpus to cross-validate on.")
@click.option("--test", "test_file", metavar="FILE", help="Instead: score the trained model on this hand-tagged file.")
@click.option("--folds", "-k", type=click.IntRange(2), default=5, show_default=True, help="Cross-validation folds.")
@click.option("--baseline", is_flag=True, help="Also run the tuned logistic-regression baseline and the two pinned "
              "peers (plain TF-IDF + LR, a LinearSVC) on the same folds, with paired bootstrap intervals.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the folds.")
@space_options("[default: package], as for `tagger train`")
@click.option("--first", type=click.IntRange(2), metavar="N",
              help="Also report the figures on the first N examples of the corpus (out-of-fold, from the same "
                   "folds), e.g. the corpus as it stood before rows were appended; N below the corpus's size, "
                   "not with --test.")
@click.option("--json", "json_out", metavar="FILE", help="Write all figures as JSON.")
@click.option("--per-label", metavar="FILE", help="Write the per-label table (TSV).")
@click.option("--card", metavar="DIR", help="Write the model card DIR/README.md from these figures.")
@click.option("--figures", "figures_in", metavar="FILE",
              help="Instead of computing them: read the figures a --json FILE of an earlier cross-validation "
                   "holds, to write the report, --card (after retraining on the same corpus with the same "
                   "settings), --html or --per-label anew.")
@click.option("--html", "html_out", metavar="FILE",
              help="Write the figures as one self-contained page (bars, threshold curves, confused pairs).")
@click.option("--learning-curve", metavar="FILE",
              help="A learning curve (JSON Lines, as benchmarks/learning_curve.py prints them) for --html and --json.")
@click.option("--bib-eval", "bib_eval_file", metavar="FILE",
              help="Hand tags of entries of real .bib files, texts read from the shared folder "
                   "($TAGGER_SHARED, else ../shared beside the repository); reported as a separate set, "
                   "never trained on [default: fixtures/bib-eval.jsonl when present].")
@click.option("--no-bib-eval", is_flag=True, help="Leave the bib-eval set out.")
@click.option("--jobs", "-j", type=click.IntRange(1), default=1, show_default=True,
              help="Run the outer folds (and the bib-eval fit) in this many processes; the figures do not change.")
@model_options
@exit_code
def evaluate(corpus, test_file, folds, baseline, seed, space_dir, space_weight, space_trees, first, json_out, per_label, card,
             figures_in, html_out, learning_curve, bib_eval_file, no_bib_eval, jobs, model, taxonomy):
    """Cross-validated precision, recall and F1 (micro, macro, samples), per facet and label."""
    from ..model import Model
    from ..resources import model_dir, taxonomy_chosen, taxonomy_path
    from ..taxonomy import from_model_manifest, load_taxonomy
    from ._html import check_output_path

    if figures_in is not None:
        _refuse_run_options(click.get_current_context())
    _distinct_outputs(figures_in, json_out, per_label, html_out, card)
    if first is not None and test_file:
        raise TaggerError("--first goes with cross-validation, not --test")
    given = [o for o, v in (("--space", space_dir), ("--space-weight", space_weight),
                            ("--space-trees" if space_trees else "--no-space-trees", space_trees)) if v is not None]
    if given and test_file:
        raise TaggerError(f"{given[0]} goes with cross-validation; --test scores the model as it was trained")
    from ..model.space import describe_space, resolve_training_space, same_setting, space_setting

    space = None if test_file or figures_in is not None else resolve_training_space(space_dir, None, space_weight, space_trees)
    # every file written after the long part: refused now, not after it
    for out_path, option in ((json_out, "--json"), (per_label, "--per-label"), (html_out, "--html")):
        if out_path:
            check_output_path(out_path, option)
    if test_file and not taxonomy_chosen(taxonomy):  # score a model by the labels it was trained on
        trained = Model.load(model_dir(model))
        tax = from_model_manifest(trained.manifest)
    else:
        tax = load_taxonomy(taxonomy_path(taxonomy))
    saved = None
    if figures_in is not None:
        from ..evaluation.saved import load_saved_figures

        saved = load_saved_figures(figures_in, tax)
    if card:
        carded = Model.load(card, tax).manifest  # fail now, not after the cross-validation
        check_output_path(os.path.join(card, "README.md"), "--card")
        if saved is not None:
            from ..evaluation.saved import check_figures_fit_model

            warning = check_figures_fit_model(saved, carded, figures_in, card)
            if warning:
                click.echo(f"tagger: warning: {warning}", err=True)
        elif not test_file and not same_setting(carded.get("space"), space_setting(space, space_trees)):
            raise TaggerError(f"--card {card}: the model reads {describe_space(carded.get('space'))}, but this "
                              f"evaluation reads {describe_space(space_setting(space, space_trees))}; give evaluate "
                              "the model's --space options")
    if learning_curve:
        from ..evaluation.html import load_learning_curve

        curve = load_learning_curve(learning_curve)  # fail now, not after the cross-validation
    path = test_file or corpus
    if saved is not None:
        result = saved
    else:
        result = _compute(path, test_file, tax, folds, seed, baseline, space, space_trees, jobs, first, model,
                          bib_eval_file, no_bib_eval)
        result["source"] = os.path.basename(path)
    if learning_curve:
        result["learning_curve"] = curve
    _write(result, tax, json_out, per_label, html_out, card, figures_in)


def _distinct_outputs(figures_in, json_out, per_label, html_out, card) -> None:
    """Refuse two options naming one file (or an output naming the --figures file read)."""
    named = [(o, p) for o, p in (("--figures", figures_in), ("--json", json_out), ("--per-label", per_label),
                                 ("--html", html_out), ("--card", card and os.path.join(card, "README.md"))) if p]
    seen: dict[str, str] = {}
    for option, p in named:
        key = os.path.realpath(p)
        if key in seen:
            raise TaggerError(f"{seen[key]} and {option} name the same file {p}"
                              + ("; the figures would be lost" if seen[key] == "--figures" and option != "--json"
                                 else ""))
        seen[key] = option


def _refuse_run_options(ctx) -> None:
    """``--figures`` reads figures already made: refuse every option that shapes a run."""
    from click.core import ParameterSource

    shaping = {"test_file": "--test", "folds": "--folds", "baseline": "--baseline", "seed": "--seed",
               "space_dir": "--space", "space_weight": "--space-weight", "space_trees": "--space-trees",
               "first": "--first", "bib_eval_file": "--bib-eval", "no_bib_eval": "--no-bib-eval", "jobs": "--jobs",
               "corpus": "--corpus", "model": "--model"}
    for name, option in shaping.items():
        if ctx.get_parameter_source(name) not in (None, ParameterSource.DEFAULT):
            if name == "space_trees" and ctx.params.get(name) is False:
                option = "--no-space-trees"
            raise TaggerError(f"{option} shapes a run; --figures reads the figures of one already run")


def _compute(path, test_file, tax, folds, seed, baseline, space, space_trees, jobs, first, model, bib_eval_file,
             no_bib_eval) -> dict:
    """Cross-validate on the corpus ``path``, or score the model on ``test_file``: the result dict."""
    from ..corpus import check_corpus, load_corpus
    from ..evaluation.bibeval import DEFAULT_BIB_EVAL, load_bib_eval
    from ..evaluation.crossval import cross_validate, evaluate_model
    from ..model import Model
    from ..resources import model_dir

    need_corpus(path)
    warnings: list[str] = []
    problems = check_corpus(path, tax, test_set=bool(test_file), warnings=warnings)
    for w in warnings:  # a test set: duplicates are worth knowing, not a reason to refuse it
        click.echo(f"tagger: warning: {w}", err=True)
    if problems:
        raise TaggerError(problems[0] + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""))
    records = load_corpus(path)
    if not records:
        raise TaggerError(f"{path}: no hand-tagged examples")
    if not test_file and len(records) < 2 * folds:
        raise TaggerError(f"{path}: {len(records)} examples are too few for {folds}-fold cross-validation")
    if first is not None and first >= len(records):
        raise TaggerError(f"--first {first}: the corpus has only {len(records)} examples")
    bib_eval, note = None, None
    if not no_bib_eval and (bib_eval_file or os.path.exists(DEFAULT_BIB_EVAL)):
        bib_eval, note = load_bib_eval(bib_eval_file or DEFAULT_BIB_EVAL, tax,  # before the long part
                                       other_taxonomy_skips=not bib_eval_file)
    elif not no_bib_eval:
        note = f"bib-eval: skipped (no {DEFAULT_BIB_EVAL} here; name one with --bib-eval FILE)"
    if test_file:
        result = evaluate_model(Model.load(model_dir(model), tax), records, tax, bib_eval, note)
    else:
        steps = Progress(f"{folds}-fold cross-validation")
        try:
            result = cross_validate(records, tax, k=folds, seed=seed, baseline=baseline, progress=steps,
                                    bib_eval=bib_eval, bib_eval_note=note, space=space, space_in_trees=space_trees,
                                    jobs=jobs, first=first)
        finally:
            steps.close()
    return result


def _write(result, tax, json_out, per_label, html_out, card, figures_in) -> None:
    """Every file asked for, each replaced atomically, then the report on stdout (a closed
    pipe loses only the report). All are rendered first: figures read by ``--figures`` that
    cannot be rendered are refused before any file is touched."""
    import io
    import json

    from ..evaluation.report import format_report, model_card, write_per_label
    from ..model import Model
    from ..writers.target import Target

    out = []  # (path, option, text)
    try:
        report = format_report(result, tax)
        if json_out:
            out.append((json_out, "--json", json.dumps(result, indent=1) + "\n"))
        if per_label:
            fh = io.StringIO()
            write_per_label(fh, result["tagger"]["per_label"])
            out.append((per_label, "--per-label", fh.getvalue()))
        if html_out:
            from ..evaluation.html import render_html

            title = result.get("source") if isinstance(result.get("source"), str) else os.path.basename(figures_in)
            out.append((html_out, "--html", render_html(result, tax, title)))
        if card:
            out.append((os.path.join(card, "README.md"), "--card", model_card(Model.load(card, tax).manifest, result, tax)))
        for text in [report] + [t for _, _, t in out]:
            text.encode("utf-8")
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, ZeroDivisionError) as e:
        if figures_in is None:
            raise
        raise TaggerError(f"--figures {figures_in}: figures that cannot be rendered ({type(e).__name__}: {e})") from None
    written, failed = [], []
    for path, option, text in out:  # one that cannot be written does not cost the others or the report
        try:
            with Target(path, option=option) as fh:
                fh.write(text)
            written.append((path, option))
        except TaggerError as e:
            failed.append(e)
    try:
        click.echo(report, nl=False)
        for path, option in written:
            if option in ("--html", "--card"):
                click.echo(f"{'evaluation page' if option == '--html' else 'model card'} written to {path}")
        sys.stdout.flush()
    except BrokenPipeError:
        quiet_broken_pipe()
    except OSError as e:
        raise TaggerError(f"standard output: cannot write the report ({e.strerror or e}); "
                          "the files asked for are written") from None
    if failed:
        raise failed[0] if len(failed) == 1 else TaggerError(f"{failed[0]} (and {len(failed) - 1} more)")
