"""Load and validate a YAML taxonomy: facets, and the labels of each facet.

A taxonomy file looks like this (the full schema is in README.md)::

    version: 1
    name: ml-abstracts
    facets:
      - id: modality                 # lower-case kebab-case
        kind: multi                  # multi (any number of labels) | exclusive (at most one)
        threshold: 0.5               # optional, the facet's default decision threshold
        labels:
          - id: modality:text        # "<facet id>:<label>", lower-case kebab-case
            description: Natural language ...
            keywords: [text, corpus] # optional hints
            threshold: 0.4           # optional per-label threshold

Every problem is reported as ``FILE:LINE: message`` through :class:`TaxonomyError`, found by
walking the YAML node tree (which keeps line numbers) rather than the loaded dicts.
"""

from __future__ import annotations

from .wording import plural

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from .errors import TaggerError

ID_PART = r"[a-z0-9]+(?:-[a-z0-9]+)*"
FACET_ID_RE = re.compile(rf"^{ID_PART}$")
LABEL_ID_RE = re.compile(rf"^({ID_PART}):({ID_PART})$")
FACET_KINDS = ("multi", "exclusive")
TOP_KEYS = {"version", "name", "description", "facets"}
FACET_KEYS = {"id", "name", "kind", "description", "threshold", "labels"}
LABEL_KEYS = {"id", "name", "description", "keywords", "threshold"}
SCHEMA_VERSION = 1


class TaxonomyError(TaggerError):
    """A taxonomy file that cannot be used; ``str(err)`` is one line ``FILE:LINE: what``."""


@dataclass(frozen=True)
class Label:
    """One label: ``id`` is ``facet:label``; ``threshold`` is None unless set in the file."""

    id: str
    facet: str
    name: str
    description: str
    keywords: tuple[str, ...] = ()
    threshold: float | None = None


@dataclass(frozen=True)
class Facet:
    """One facet: ``kind`` is ``multi`` or ``exclusive``; labels keep file order."""

    id: str
    name: str
    kind: str
    description: str
    labels: tuple[Label, ...]
    threshold: float | None = None


@dataclass(frozen=True)
class Taxonomy:
    """A validated taxonomy; ``labels`` lists every label in taxonomy order (facet by facet)."""

    name: str
    facets: tuple[Facet, ...]
    description: str = ""
    path: str = ""
    labels: tuple[Label, ...] = field(init=False)

    def __post_init__(self):
        object.__setattr__(self, "labels", tuple(lb for f in self.facets for lb in f.labels))

    @property
    def label_ids(self) -> list[str]:
        """All label ids in taxonomy order; this order is the column order of every model."""
        return [lb.id for lb in self.labels]

    def facet(self, facet_id: str) -> Facet:
        """The facet with this id; raises KeyError naming the known facets."""
        for f in self.facets:
            if f.id == facet_id:
                return f
        raise KeyError(f"unknown facet {facet_id!r} (known: {', '.join(f.id for f in self.facets)})")

    def thresholds(self, default: float | None = None) -> dict[str, float]:
        """The decision thresholds the file sets: ``{label id: threshold}`` for every label
        with its own ``threshold:`` or in a facet with one (the label's own wins); with
        ``default``, every label, ``default`` for the others."""
        out = {}
        for f in self.facets:
            for lb in f.labels:
                th = lb.threshold if lb.threshold is not None else f.threshold
                if th is None:
                    th = default
                if th is not None:
                    out[lb.id] = th
        return out

    def fingerprint(self) -> str:
        """SHA-256 over facet ids, kinds and label ids (not descriptions or keywords).

        A model trained under one fingerprint is valid for any taxonomy file with the same
        fingerprint: rewording a description does not force a retrain, adding a label does.
        """
        spec = [[f.id, f.kind, [lb.id for lb in f.labels]] for f in self.facets]
        return hashlib.sha256(json.dumps(spec, separators=(",", ":")).encode()).hexdigest()


def _loader():
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_taxonomy(path: str | Path) -> Taxonomy:
    """Read and validate the taxonomy at ``path``.

    Raises :class:`TaxonomyError` (one line, ``FILE:LINE: what``) for a missing or unreadable
    file, YAML syntax errors, unknown keys, missing or malformed ids, duplicate ids, label ids
    whose prefix is not their facet, empty facets, bad kinds and thresholds outside (0, 1).
    """
    path = Path(path)
    try:
        text = path.read_bytes().decode("utf-8")
    except FileNotFoundError:
        raise TaxonomyError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise TaxonomyError(f"{path}: is a directory, not a taxonomy file") from None
    except UnicodeDecodeError as e:
        raise TaxonomyError(f"{path}: not UTF-8 text (byte {e.start})") from None
    except OSError as e:
        raise TaxonomyError(f"{path}: cannot read: {e.strerror}") from None
    return parse_taxonomy(text, str(path))


def parse_taxonomy(text: str, source: str = "<taxonomy>") -> Taxonomy:
    """Validate taxonomy YAML ``text``; ``source`` names it in error messages."""
    import yaml

    try:
        root = yaml.compose(text, Loader=_loader())
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
        line = f":{mark.line + 1}" if mark else ""
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise TaxonomyError(f"{source}{line}: YAML syntax error: {problem}") from None

    def fail(node, msg):
        line = node.start_mark.line + 1 if node is not None else 1
        raise TaxonomyError(f"{source}:{line}: {msg}")

    def mapping(node, what, allowed):
        if not isinstance(node, yaml.MappingNode):
            fail(node, f"{what} must be a mapping")
        out = {}
        for k, v in node.value:
            key = k.value if isinstance(k, yaml.ScalarNode) else None
            if key not in allowed:
                fail(k, f"unknown key {key!r} in {what} (allowed: {', '.join(sorted(allowed))})")
            if key in out:
                fail(k, f"duplicate key {key!r} in {what}")
            out[key] = v
        return out

    def scalar(node, what, required=True):
        if node is None:
            return None
        if not isinstance(node, yaml.ScalarNode):
            fail(node, f"{what} must be a plain value")
        return node.value

    def threshold(node, what):
        if node is None:
            return None
        raw = scalar(node, what)
        try:
            t = float(raw)
        except ValueError:
            fail(node, f"{what} must be a number, not {raw!r}")
        if not 0.0 < t < 1.0:
            fail(node, f"{what} must lie strictly between 0 and 1, not {t}")
        return t

    if root is None:
        raise TaxonomyError(f"{source}:1: empty taxonomy file")
    top = mapping(root, "the taxonomy", TOP_KEYS)
    if "version" in top and scalar(top["version"], "version") != str(SCHEMA_VERSION):
        fail(top["version"], f"unsupported taxonomy version {top['version'].value!r} (this tagger reads version {SCHEMA_VERSION})")
    if "facets" not in top:
        fail(root, "missing key 'facets'")
    fnode = top["facets"]
    if not isinstance(fnode, yaml.SequenceNode) or not fnode.value:
        fail(fnode, "'facets' must be a non-empty list")
    seen: dict[str, int] = {}
    facets = []
    for fn in fnode.value:
        fm = mapping(fn, "a facet", FACET_KEYS)
        if "id" not in fm:
            fail(fn, "facet without an 'id'")
        fid = scalar(fm["id"], "facet id")
        if not FACET_ID_RE.match(fid or ""):
            fail(fm["id"], f"malformed facet id {fid!r}: use lower-case kebab-case, e.g. 'data-modality'")
        if fid in seen:
            fail(fm["id"], f"duplicate facet id {fid!r} (first at line {seen[fid]})")
        seen[fid] = fm["id"].start_mark.line + 1
        kind = scalar(fm.get("kind"), "kind") or "multi"
        if kind not in FACET_KINDS:
            fail(fm["kind"], f"facet kind must be one of {', '.join(FACET_KINDS)}, not {kind!r}")
        lnode = fm.get("labels")
        if lnode is None or not isinstance(lnode, yaml.SequenceNode) or not lnode.value:
            fail(lnode if lnode is not None else fn, f"facet {fid!r} has no labels")
        labels = []
        for ln in lnode.value:
            lm = mapping(ln, "a label", LABEL_KEYS)
            if "id" not in lm:
                fail(ln, f"label without an 'id' in facet {fid!r}")
            lid = scalar(lm["id"], "label id")
            m = LABEL_ID_RE.match(lid or "")
            if not m:
                fail(lm["id"], f"malformed label id {lid!r}: use '<facet>:<label>' in lower-case kebab-case, e.g. '{fid}:my-label'")
            if m.group(1) != fid:
                fail(lm["id"], f"label id {lid!r} does not start with its facet '{fid}:'")
            if lid in seen:
                fail(lm["id"], f"duplicate label id {lid!r} (first at line {seen[lid]})")
            seen[lid] = lm["id"].start_mark.line + 1
            kw = lm.get("keywords")
            keywords: tuple[str, ...] = ()
            if kw is not None:
                if not isinstance(kw, yaml.SequenceNode) or not all(isinstance(k, yaml.ScalarNode) for k in kw.value):
                    fail(kw, f"keywords of {lid!r} must be a list of strings")
                keywords = tuple(k.value for k in kw.value)
            labels.append(Label(
                id=lid, facet=fid, name=scalar(lm.get("name"), "name") or m.group(2),
                description=scalar(lm.get("description"), "description") or "",
                keywords=keywords, threshold=threshold(lm.get("threshold"), f"threshold of {lid!r}"),
            ))
        facets.append(Facet(
            id=fid, name=scalar(fm.get("name"), "name") or fid, kind=kind,
            description=scalar(fm.get("description"), "description") or "",
            labels=tuple(labels), threshold=threshold(fm.get("threshold"), f"threshold of facet {fid!r}"),
        ))
    return Taxonomy(
        name=scalar(top.get("name"), "name") or Path(source).stem,
        description=scalar(top.get("description"), "description") or "",
        facets=tuple(facets), path=source,
    )


def format_tree(tax: Taxonomy, descriptions: bool = True) -> str:
    """The taxonomy as an indented text tree (facets, then their labels), for ``taxonomy show``."""
    lines = [f"{tax.name}: {plural(len(tax.facets), 'facet')}, {plural(len(tax.labels), 'label')}"]
    for f in tax.facets:
        kind = "at most one label" if f.kind == "exclusive" else "multi-label"
        lines.append(f"{f.id} ({kind}, {plural(len(f.labels), 'label')})")
        for lb in f.labels:
            lines.append(f"  {lb.id}" + (f"  {lb.description}" if descriptions and lb.description else ""))
    return "\n".join(lines) + "\n"


def from_model_manifest(manifest: dict) -> Taxonomy:
    """The facets and labels a model was trained on, as a :class:`Taxonomy` without
    descriptions (for evaluating a model whose taxonomy file is not at hand)."""
    facets = tuple(Facet(id=f["id"], name=f["id"], kind=f["kind"], description="",
                         labels=tuple(Label(id=lb, facet=f["id"], name=lb.split(":", 1)[1], description="")
                                      for lb in f["labels"]))
                   for f in manifest["facets"])
    return Taxonomy(name=manifest.get("taxonomy_name", "model"), facets=facets, path="(model manifest)")


def difference_from_model(manifest: dict, taxonomy: "Taxonomy") -> str:
    """What differs between a model's facets and labels (its manifest) and ``taxonomy``'s, in a few words."""
    have = list(manifest.get("labels", []))
    want = taxonomy.label_ids
    new = [lb for lb in want if lb not in have]
    gone = [lb for lb in have if lb not in want]

    def few(ids):
        return ", ".join(ids[:5]) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")

    parts = ([f"labels only in the taxonomy: {few(new)}"] if new else []) + (
        [f"labels only in the model: {few(gone)}"] if gone else [])
    if not parts:
        kinds = {f["id"]: f.get("kind") for f in manifest.get("facets", [])}
        changed = [f.id for f in taxonomy.facets if kinds.get(f.id) != f.kind]
        parts = [f"facet kinds differ: {few(changed)}"] if changed else ["the same labels in another order or facets"]
    return "; ".join(parts)
