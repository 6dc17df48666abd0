"""``tagger taxonomy show|check``."""

from __future__ import annotations

import click

from ..wording import plural
from ._app import cli
from ._common import echo_guarded, exit_code


@cli.group()
def taxonomy():
    """Show or check a taxonomy file."""


@taxonomy.command("show", short_help="Print the facets and labels of a taxonomy.")
@click.argument("file", required=False)
@exit_code
def taxonomy_show(file):
    """Print the facets and labels of FILE [default: $TAGGER_TAXONOMY; else, with $TAGGER_MODEL,
    the taxonomy that model was trained on; else the packaged one]."""
    import json
    import os

    from ..errors import TaggerError
    from ..resources import model_dir, taxonomy_chosen, taxonomy_path
    from ..taxonomy import format_tree, from_model_manifest, load_taxonomy

    if taxonomy_chosen(file) or not os.environ.get("TAGGER_MODEL"):
        echo_guarded(format_tree(load_taxonomy(taxonomy_path(file))))
        return 0
    # the model in use: its own facets and labels (with the packaged descriptions when they agree)
    where = model_dir() / "manifest.json"
    if model_dir().exists() and not model_dir().is_dir():
        raise TaggerError(f"{model_dir()}: a file, not a model directory ($TAGGER_MODEL names the directory that "
                          "holds manifest.json)")
    try:
        manifest = json.loads(where.read_text(encoding="utf-8"))
        facets = [(f["id"], f["kind"], list(f["labels"])) for f in manifest["facets"]]
    except FileNotFoundError:
        raise TaggerError(f"{where}: no such file ($TAGGER_MODEL names {model_dir()}, not a model directory)") from None
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise TaggerError(f"{where}: not a model manifest ({type(e).__name__}: {e})") from None
    packaged = load_taxonomy(taxonomy_path())
    if [(f.id, f.kind, [lb.id for lb in f.labels]) for f in packaged.facets] == facets:
        echo_guarded(format_tree(packaged))
    else:
        echo_guarded(f"(the labels of the model {model_dir()}, from its manifest; no descriptions)\n"
              + format_tree(from_model_manifest(manifest)))
    return 0


@taxonomy.command("check")
@click.argument("file")
@exit_code
def taxonomy_check(file):
    """Validate FILE; report the first problem with its line."""
    from ..taxonomy import load_taxonomy

    tax = load_taxonomy(file)
    echo_guarded(f"{file}: ok ({plural(len(tax.facets), 'facet')}, {plural(len(tax.labels), 'label')})\n")
    return 0
