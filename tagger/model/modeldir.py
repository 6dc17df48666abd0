"""Writing a model directory atomically (built in a temporary sibling, swapped in by rename)."""

from __future__ import annotations

import gzip
import json
import os
import shutil
import tempfile
from pathlib import Path

from .vocabulary import save_features
from .inference import ModelError

#: every name a model directory may hold (training replaces the directory as a whole;
#: ``space``: a text space, the packaged one or a model's own copy, carried over;
#: ``stage2.npz``: the removed second stage of older models, which loading refuses and
#: retraining over them must replace, not take for a user's file)
MODEL_FILES = frozenset({"manifest.json", "features.json", "trees.npz", "linear.npz", "linear_wt.npy", "stage2.npz",
                         "vocabulary.npz",
                         "boosters", "README.md", "space"})


def save_linear_base(directory, W, b) -> None:
    """Write the linear base: ``linear_wt.npy``, W (n_outputs, n_features) quantised per term
    to int8 and transposed (:func:`tagger.model.loading.quantize`; memory-mapped at label
    time), and ``linear.npz`` with the per-term ``scale`` and the intercepts ``b`` (float64)."""
    import numpy as np

    from .loading import quantize

    q, scale = quantize(W)
    directory = Path(directory)
    with open(directory / "linear_wt.npy", "wb") as fh:
        np.save(fh, q, allow_pickle=False)
    with open(directory / "linear.npz", "wb") as fh:
        np.savez_compressed(fh, b=np.asarray(b, dtype=np.float64), scale=scale)


def _old_manifest(out: Path) -> dict:
    """The manifest of the model in ``out`` about to be replaced; {} when there is none that
    reads as a JSON object."""
    try:
        old = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return old if isinstance(old, dict) else {}


def _same_training(old: dict, new: dict) -> bool:
    """True when the old model (its manifest ``old``) was trained on the same corpus, taxonomy
    and parameters, and read the same text space the same way (or none)."""
    if not old:
        return False
    from .space import same_setting

    keys = ("corpus_sha256", "taxonomy_fingerprint", "parameters", "format_version", "feature_version")
    return all(old.get(k) == new.get(k) for k in keys) and same_setting(old.get("space"), new.get("space"))


def space_words(manifest: dict) -> str:
    """`` and text space ppmi 02da7193640f (256 components, weight 0.5, linear base only)``
    for a model that reads one (:func:`tagger.model.space.describe_space`), empty otherwise."""
    from .space import describe_space

    return f" and {describe_space(manifest['space'])}" if isinstance(manifest.get("space"), dict) else ""


def card_header(manifest: dict) -> list[str]:
    """The model card's first two lines after its title: when and from what corpus the
    model was made, and its size and library versions (``evaluation.model_card``)."""
    return [
        f"Created {manifest.get('created')} from {manifest.get('corpus_size')} hand-tagged abstracts "
        f"(corpus sha256 `{manifest.get('corpus_sha256', '')[:16]}…`), taxonomy fingerprint "
        f"`{manifest.get('taxonomy_fingerprint', '')[:16]}…`, model format {manifest.get('format_version')}.",
        f"{manifest.get('n_features')} TF-IDF terms{space_words(manifest)}, {manifest.get('n_trees')} trees; versions: "
        + ", ".join(f"{k} {v}" for k, v in manifest.get("versions", {}).items()) + ".",
    ]


def refresh_card(card: str, manifest: dict) -> str:
    """``card`` (a model card's Markdown) with its ``Created ...`` and ``... trees; versions:``
    lines made anew from ``manifest``; the rest as it was."""
    created, sizes = card_header(manifest)
    lines = card.split("\n")
    for i, line in enumerate(lines):
        if line.startswith("Created "):
            lines[i] = created
        elif " TF-IDF terms" in line and " trees; versions: " in line:
            lines[i] = sizes
    return "\n".join(lines)


def _own_space(old: dict) -> bool:
    """Whether the old model's ``space/`` is its own copy of its space (its manifest ``old``
    says ``location`` ``"model"``), which goes with it, rather than a space kept there for
    others (the packaged ``models/space``)."""
    sp = old.get("space")
    return isinstance(sp, dict) and sp.get("location") == "model"


def check_out_dir(out_dir) -> None:
    """Raise :class:`ModelError` unless ``out_dir`` may be (re)written by training: absent, an
    empty directory, or an existing model directory (it has a ``manifest.json``).  Nothing
    else is ever replaced, so a mistyped ``--out`` cannot delete a user's files."""
    out = Path(out_dir)
    if out.resolve() == Path.cwd().resolve() or out.resolve() in Path.cwd().resolve().parents:
        raise ModelError(f"{out_dir}: cannot replace the current directory or one above it; name a model directory")
    if not out.exists():
        return
    if not out.is_dir():
        raise ModelError(f"{out_dir}: exists and is not a directory; choose another --out")
    if not (out / "manifest.json").is_file() and any(out.iterdir()):
        raise ModelError(f"{out_dir}: exists, is not empty and is not a tagger model directory; choose another --out")
    other = sorted(p.name for p in out.iterdir() if p.name not in MODEL_FILES)
    if other:
        raise ModelError(f"{out_dir}: holds files that are not model files ({', '.join(other[:3])}); "
                         "they would be lost: move them or choose another --out")


def write_model_dir(out_dir, manifest: dict, fm, forest) -> None:
    """Write all model files of ``fm`` (a :class:`tagger.model.training.FittedModel`) and ``forest``
    (a :class:`tagger.model.forest.Forest`) into a temporary sibling of ``out_dir``, then swap it in.

    A model card ``README.md`` (``tagger evaluate --card``) is carried over from the old
    directory when it still describes this training (:func:`_same_training`).  A model whose
    space's ``location`` is ``"model"`` gets a copy of that space in ``space/``; else an old
    ``space/`` stays unless it was the old model's own copy (:func:`_own_space`): the packaged
    model directory holds the packaged space, which ``--space package`` refers to.
    """
    out = Path(out_dir)
    check_out_dir(out)
    old_manifest = _old_manifest(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.new-", dir=out.parent))
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o777 & ~umask)  # mkdtemp makes 0700; a model directory is ordinary data
    try:
        (tmp / "boosters").mkdir()
        for stem, b in fm.boosters.items():  # gzip without a time stamp: the same bytes on every run
            data = gzip.compress(b.model_to_string().encode("utf-8"), compresslevel=9, mtime=0)
            (tmp / "boosters" / f"{stem}.txt.gz").write_bytes(data)
        save_features(tmp, fm.features)
        forest.save(tmp / "trees.npz")
        if fm.linear is not None:
            save_linear_base(tmp, *fm.linear)
        space = getattr(fm, "space", None)
        if space is not None and getattr(space, "location", "package") == "model":
            shutil.copytree(space.source, tmp / "space")
        elif (out / "space").is_dir() and not _own_space(old_manifest):
            shutil.copytree(out / "space", tmp / "space")  # e.g. models/ holds the packaged space: it stays
        with open(tmp / "manifest.json", "w", encoding="utf-8") as fh:
            json.dump(manifest, fh, ensure_ascii=False, indent=1, sort_keys=True)
            fh.write("\n")
        if (out / "README.md").is_file() and _same_training(old_manifest, manifest):
            # the card's figures still describe this model; its date, corpus and versions lines are this run's
            card = (out / "README.md").read_text(encoding="utf-8")
            as_written = json.loads((tmp / "manifest.json").read_text(encoding="utf-8"))  # keys sorted, as evaluate reads them
            (tmp / "README.md").write_text(refresh_card(card, as_written), encoding="utf-8")
        old = None
        if out.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
            os.rmdir(old)
            os.rename(out, old)
        os.rename(tmp, out)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
