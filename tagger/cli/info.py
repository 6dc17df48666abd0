"""``tagger info``: the model card of a model directory."""

from __future__ import annotations

import click

from ..errors import TaggerError
from ..wording import one_line, plural
from ._app import cli
from ._common import echo_guarded, exit_code


def read_manifest(d) -> dict | None:
    """The parsed ``manifest.json`` of the model directory ``d``, or None when there is none
    that reads as a JSON object (the loading's own message then says what is wrong)."""
    import json

    try:
        man = json.loads((d / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return man if isinstance(man, dict) else None


def manifest_lines(d, man: dict) -> list[str]:
    """What the manifest of the model in ``d`` says, in a few lines: its labels, taxonomy,
    when and on how many abstracts it was trained, its format and the tagger that built it,
    and its out-of-fold micro-F1 per facet.  Fields an older or damaged manifest lacks, or
    holds in another shape, are left out."""
    import json

    labels = man.get("labels")
    head = [plural(len(labels), "label") if isinstance(labels, list) else "labels unknown"]
    if isinstance(man.get("taxonomy_name"), str):
        head[0] += f" (taxonomy {man['taxonomy_name']})"
    if man.get("created") is not None:
        head.append(f"trained {man['created']}")
    if isinstance(man.get("corpus_size"), int):
        head[-1] += f" on {plural(man['corpus_size'], 'abstract')}"
    built = man.get("versions", {}).get("tagger") if isinstance(man.get("versions"), dict) else None
    head.append(f"model format {man.get('format_version')}" + (f", built by tagger {built}" if built else ""))
    from ..model.modeldir import space_words

    if man.get("n_features") is not None:
        head.append(f"{man['n_features']} TF-IDF terms{space_words(man)}")
    lines = [f"{d}: " + ", ".join(head)]
    figs = man.get("figures", {}).get("out_of_fold") if isinstance(man.get("figures"), dict) else None
    if isinstance(figs, dict):
        micro = {k: v["f1_micro"] for k, v in figs.items() if isinstance(v, dict) and "f1_micro" in v}
        if micro:
            lines.append("out-of-fold figures: " + json.dumps(micro))
    return [one_line(line) for line in lines]


@cli.command(short_help="Print the model card of a model directory.")
@click.argument("directory", required=False)
@click.option("--model", "model", metavar="DIR",
              help="Model directory [default: $TAGGER_MODEL, else the packaged model]; as DIRECTORY.")
@exit_code
def info(directory, model):
    """Print the model card of a model directory [default: the model in use].

    The model is DIRECTORY or --model DIR (else $TAGGER_MODEL, else the packaged model).  A
    model this tagger cannot use (another format, a removed option: "please retrain") is
    described by what its manifest says, then the reason in one line, and exit 2.
    """
    from ..model import Model
    from ..model.loading import ModelError
    from ..resources import model_dir

    if directory and model and directory != model:
        raise TaggerError(f"two models named: DIRECTORY {directory} and --model {model}; name one")
    d = model_dir(model or directory)
    try:
        m = Model.load(d)
    except ModelError:
        man = read_manifest(d)
        if man is not None:  # what it is, then why it cannot be used (exit_code: one line, 2)
            echo_guarded("".join(line + "\n" for line in manifest_lines(d, man)))
        raise
    card = d / "README.md"
    if card.is_file():
        echo_guarded(card.read_text(encoding="utf-8"))
        return 0
    echo_guarded("".join(line + "\n" for line in manifest_lines(d, m.manifest))
                 + f"no model card; write one with `tagger evaluate --card {d}`\n")
    return 0
