"""A text space learned from unlabelled abstracts: what words mean, from how they are used.

A :class:`TextSpace` maps a text to ``k`` dense, signed components.  It is learned without
labels from pools of abstracts (``tagger space build``) and is independent of any taxonomy, so
one space serves every model: the linear base and the LightGBM boosters read its components
beside the model's own TF-IDF terms (:mod:`tagger.model.training`).

What a space holds (a directory, package data under ``models/space/``):

``space.json``
    its own vocabulary (``terms``: stemmed unigrams, the column order), their ``idf``, the stop
    words, the kind (``lsa``, ``ppmi`` or ``lsa+ppmi``), ``blocks`` and the build settings;
``components.npy``
    float16 array, shape (n_terms, k), memory-mapped when loaded (no pickle);
``SHA256``
    the sha256 of the two files above (:func:`space_sha256`), which a model records: loading
    reads this line instead of hashing 20 MB.

A text's components: its TF-IDF row over the space's vocabulary (``tf = 1 + ln(count)``, the
space's idf, unit L2 norm, as :mod:`tagger.model.features` computes for the model's terms) times
``components``, each block of columns then scaled to unit L2 norm (a text with no vocabulary
term gets zeros).  Kinds:

* ``lsa``: latent semantic analysis, the top ``k`` right singular vectors of the pools' TF-IDF
  matrix (scikit-learn's ``TruncatedSVD``, randomized, fixed seed; Deerwester et al. 1990);
* ``ppmi``: word vectors from a truncated SVD of the positive pointwise-mutual-information
  matrix of words and their contexts (window ``WINDOW`` either side, context distribution
  smoothed by ``CDS_ALPHA``, vectors ``U * sqrt(S)``, rows unit length), pooled per text with
  its TF-IDF weights (Levy, Goldberg & Dagan 2015, "Improving distributional similarity with
  lessons learned from word embeddings", TACL 3);
* ``lsa+ppmi``: both, ``k / 2`` columns each, each block normalised on its own.

The space's stems are its own: snowballstemmer's English stemmer (PyStemmer), at build and at
label time alike, so no nltk is needed and the two always agree.
Built twice from the same pools on the same machine and library versions, the files are
byte-identical (one BLAS thread during the build, fixed seeds, sorted vocabulary).  Building
is :mod:`tagger.model.space_build`; this module reads, projects and ties spaces to models.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from ..errors import TaggerError

#: version of the space format and projection; a model records its space's sha256 and this
SPACE_FORMAT = 1
KINDS = ("lsa", "ppmi", "lsa+ppmi")
#: defaults of ``tagger space build``: 40,000 terms x 256 components = 10.2 million float16
#: values (20 MB), within the package's size budget
DEFAULT_K = 256
MAX_TERMS = 40_000
MIN_DF = 5
MAX_DF = 0.5
WINDOW = 5
CDS_ALPHA = 0.75
SEED = 0
#: how `tagger train` and `evaluate` read a space unless told: at half weight, by the linear
#: base only (kept by the 3-seed screen of fixtures/README.md, "The text space at a weight")
DEFAULT_WEIGHT = 0.5
DEFAULT_IN_TREES = False
FILES = ("space.json", "components.npy")


class SpaceError(TaggerError, ValueError):
    """A space directory that cannot be read (missing file, wrong shape, other format)."""


class TextSpace:
    """A fitted text space (see the module docstring).

    Attributes
    ----------
    features : TfidfFeatures
        The space's own vocabulary and idf (unigrams; stop words; no stem exceptions).
    components : ndarray, shape (n_terms, k), float16
    blocks : list of (start, end)
        Column ranges normalised separately.
    kind : str
    sha256 : str
        Of ``space.json`` and ``components.npy`` as stored; models record it.
    weight : float
        What :meth:`project` multiplies the normalised components by (1.0 as built).  It
        belongs to a model, not to the space: ``tagger train --space-weight`` sets it, the
        manifest records it, and :func:`space_for_model` restores it.  Unit-norm components
        are as large as a whole TF-IDF row; at a weight below 1 the learners, tuned for
        TF-IDF, lean on them less (fixtures/README.md, "The text space at a weight").
    """

    #: up to this many entries x components, :meth:`project` sums in numpy; beyond, scipy
    CHUNK = 1 << 21

    def __init__(self, features, components, blocks, kind: str, meta: dict | None = None, sha256: str = ""):
        if components.ndim != 2 or components.shape[0] != len(features.terms):
            raise SpaceError(f"components of shape {components.shape} do not fit {len(features.terms)} terms")
        self.features, self.components, self.blocks, self.kind = features, components, list(blocks), kind
        self.meta, self.sha256 = dict(meta or {}), sha256
        #: where a model trained with this space finds it: "package" (the packaged
        #: models/space) or "model" (a copy of ``source``, a directory, in the model's space/)
        self.location, self.source = "package", None
        self.weight = 1.0

    @property
    def k(self) -> int:
        return int(self.components.shape[1])

    @property
    def names(self) -> list[str]:
        """Feature names of the components (``~lsa0``, ``~ppmi3``, ...), as models list them."""
        out = []
        kinds = self.kind.split("+")
        for (a, b), kd in zip(self.blocks, kinds):
            out += [f"~{kd}{i}" for i in range(b - a)]
        return out

    # -- projection ----------------------------------------------------------------------
    def project(self, batch) -> "np.ndarray":
        """Components of a :class:`~tagger.model.features.FeatureBatch` over the space's
        vocabulary: float64 array, shape (batch.n_rows, k).

        Only the rows of ``components`` that the batch's terms touch are read (memory-mapped,
        float16, converted to float64 exactly), multiplied by the entries and summed per row in
        row order (numpy for a few abstracts, scipy's sparse product for more: equal within 1e-12);
        each block of columns is then scaled to unit L2 norm (rows without terms stay zero),
        and the whole by :attr:`weight`."""
        import numpy as np

        if batch.row.size:
            # the distinct columns in order and each entry's place among them: np.unique's
            # (cols, inverse), by marking the vocabulary rather than sorting the entries
            n_terms = self.components.shape[0]
            seen = np.zeros(n_terms, dtype=bool)
            seen[batch.col] = True
            cols = np.flatnonzero(seen)
            place = np.empty(n_terms, dtype=np.int64)
            place[cols] = np.arange(cols.size)
            sub = self.components[cols].astype(np.float64)
            at = place[batch.col]
            if at.size * self.k <= self.CHUNK:  # a few abstracts (`tagger label` of one): numpy only,
                # as scipy's import would double the start (equal to scipy's product within 1e-12)
                rows = batch.row
                starts = np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]])  # row is sorted
                Z = np.zeros((batch.n_rows, self.k))
                Z[rows[starts]] = np.add.reduceat(sub[at] * batch.value[:, None], starts, axis=0)
            else:  # a stream's batches: one sparse-by-dense product, no temporary of nnz x k
                import scipy.sparse as sp

                indptr = np.zeros(batch.n_rows + 1, dtype=np.int64)
                np.cumsum(np.bincount(batch.row, minlength=batch.n_rows), out=indptr[1:])
                X = sp.csr_matrix((batch.value, at, indptr), shape=(batch.n_rows, cols.size))
                Z = np.asarray(X @ sub)
        else:
            Z = np.zeros((batch.n_rows, self.k))
        for a, b in self.blocks:
            norm = np.sqrt(np.einsum("ij,ij->i", Z[:, a:b], Z[:, a:b]))
            norm[norm == 0] = 1.0
            Z[:, a:b] /= norm[:, None]
        if self.weight != 1.0:
            Z *= self.weight
        return Z

    def transform(self, texts) -> "np.ndarray":
        """Components of ``texts`` (sequence of str): float64, shape (n_texts, k)."""
        return self.project(self.features.transform(list(texts)))

    # -- files ---------------------------------------------------------------------------
    def save(self, out_dir) -> str:
        """Write ``space.json`` and ``components.npy`` into ``out_dir``; returns the sha256."""
        import numpy as np

        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        f = self.features
        data = {"format": SPACE_FORMAT, "kind": self.kind, "k": self.k, "blocks": self.blocks,
                "terms": f.terms, "idf": f.idf, "stop_words": f.stop_words, **self.meta}
        (out / "space.json").write_text(json.dumps(data, ensure_ascii=False, sort_keys=True,
                                                   separators=(",", ":")) + "\n", encoding="utf-8")
        np.save(out / "components.npy", np.ascontiguousarray(self.components, dtype=np.float16),
                allow_pickle=False)
        self.sha256 = space_sha256(out)
        (out / "SHA256").write_text(self.sha256 + "\n", encoding="ascii")
        return self.sha256

    @classmethod
    def load(cls, path) -> "TextSpace":
        """Read a space directory; the components are memory-mapped.  Raises :class:`SpaceError`."""
        import numpy as np

        from .features import TfidfFeatures

        p = Path(path)
        if not p.is_dir():
            raise SpaceError(f"{p}: " + ("a file, not a text space directory" if p.exists() else "no such directory")
                             + " (a text space is a directory written by `tagger space build`)")
        if (p / "manifest.json").is_file() and not (p / "space.json").exists():
            raise SpaceError(f"{p}: a model directory, not a text space"
                             + (f"; its space is {p / 'space'}" if (p / "space" / "space.json").is_file() else ""))
        try:
            data = json.loads((p / "space.json").read_text(encoding="utf-8"))
            comp = np.load(p / "components.npy", mmap_mode="r", allow_pickle=False)
        except FileNotFoundError as e:
            raise SpaceError(f"{p}: not a text space ({Path(e.filename).name} is missing)") from None
        except (OSError, ValueError) as e:
            raise SpaceError(f"{p}: unreadable text space ({e})") from None
        if data.get("format") != SPACE_FORMAT:
            raise SpaceError(f"{p}: text space format {data.get('format')} (this tagger reads {SPACE_FORMAT}); "
                             "rebuild it with `tagger space build`")
        feats = TfidfFeatures(terms=data["terms"], idf=data["idf"], stop_words=data["stop_words"],
                              stem_exceptions={}, ngram_max=1, sublinear_tf=True, stem=True)
        meta = {k: v for k, v in data.items() if k not in ("format", "kind", "k", "blocks", "terms", "idf", "stop_words")}
        space = cls(feats, comp, [tuple(b) for b in data["blocks"]], data["kind"], meta, recorded_sha256(p))
        space.source = p
        return space


def space_for_model(model_dir, info: dict) -> TextSpace:
    """The space a model's manifest names (``info`` = ``manifest["space"]``): ``location``
    ``"model"`` is the model directory's ``space/``, ``"package"`` the packaged
    ``models/space``; its ``SHA256`` must be ``info["sha256"]``, as a model's trees read the
    components of the space it was trained with.  Raises :class:`SpaceError` saying to retrain."""
    from ..resources import packaged

    where = Path(model_dir) / "space" if info.get("location") == "model" else packaged("models") / "space"
    try:
        sha = recorded_sha256(where)
    except SpaceError as e:
        raise SpaceError(f"{model_dir}: the model's text space is missing or damaged ({e}); please retrain with "
                         "`tagger train`") from None
    if sha != info.get("sha256"):
        raise SpaceError(f"{model_dir}: the model was trained with text space {str(info.get('sha256'))[:12]}, "
                         f"but {where} holds {sha[:12]}: please retrain with `tagger train`")
    space = TextSpace.load(where)
    space.location = info.get("location", "package")
    space.weight = float(info.get("weight", 1.0))
    return space


def resolve_training_space(option: str | None, out_dir, weight: float | None = None,
                           in_trees: bool | None = None) -> TextSpace | None:
    """The space ``tagger train --space`` names: the packaged ``models/space`` for no option
    (the default) or ``package``; None for ``none``; else the directory, copied into the model
    directory (``location`` ``"model"``) unless it is the packaged space.  ``weight``
    (``--space-weight``, default :data:`DEFAULT_WEIGHT`) becomes the space's
    :attr:`TextSpace.weight`.  Raises :class:`SpaceError` for a directory that is no space
    (or ``package`` named when the package has none), and for ``weight`` or ``in_trees``
    given with ``none``.  With no option and no packaged space (a trimmed installation): None."""
    from ..resources import packaged

    pkg = packaged("models") / "space"
    if option is not None and option.lower() == "none":
        if weight is not None or in_trees is not None:
            flag = "--space-weight" if weight is not None else ("--space-trees" if in_trees else "--no-space-trees")
            raise SpaceError(f"{flag} needs a text space (not --space none)")
        return None
    if option is None or option.lower() == "package":
        if not (pkg / "SHA256").is_file():
            if option is None and weight is None and in_trees is None:
                return None
            raise SpaceError(f"{pkg}: this installation has no packaged text space")
        option = str(pkg)
    space = TextSpace.load(option)
    same = Path(option).resolve() == pkg.resolve()
    space.location = "package" if same else "model"
    space.weight = DEFAULT_WEIGHT if weight is None else float(weight)
    if not same and out_dir is not None and Path(option).resolve() == (Path(out_dir) / "space").resolve():
        raise SpaceError(f"{option}: the space to train with lies inside the model directory {out_dir}, "
                         "which training replaces; build it elsewhere")
    return space


def space_setting(space: "TextSpace | None", in_trees: bool | None) -> dict | None:
    """What a model or an evaluation records of the text space it reads: ``{"sha256", "kind",
    "k", "weight", "in_trees"}`` (``in_trees`` None: the default, :data:`DEFAULT_IN_TREES`),
    or None for none."""
    if space is None:
        return None
    return {"sha256": space.sha256, "kind": space.kind, "k": space.k, "weight": float(space.weight),
            "in_trees": DEFAULT_IN_TREES if in_trees is None else bool(in_trees)}


def describe_space(setting) -> str:
    """``text space ppmi 02da7193640f (256 components, weight 0.5, linear base only)``: a
    recorded setting (a manifest's ``space``, :func:`space_setting`) in words, for the model
    card, ``tagger info``, ``train``'s summary and ``evaluate``'s report; ``no text space`` for
    none.  Fields of another shape (an old or damaged manifest) are shown as they are."""
    if not isinstance(setting, dict):
        return "no text space"
    weight = setting.get("weight", 1.0)
    weight = f"{weight:g}" if isinstance(weight, (int, float)) and not isinstance(weight, bool) else repr(weight)
    learners = "linear base only" if setting.get("in_trees", True) is False else "linear base and trees"
    return (f"text space {setting.get('kind')} {str(setting.get('sha256', ''))[:12]} "
            f"({setting.get('k')} components, weight {weight}, {learners})")


def same_setting(a: dict | None, b: dict | None) -> bool:
    """Whether two recorded settings (a manifest's ``space``, :func:`space_setting`) read the
    same space the same way (older manifests: weight 1, trees reading it)."""
    if not a or not b:
        return not a and not b
    key = lambda d: (d.get("sha256"), d.get("weight", 1.0), d.get("in_trees", True))  # noqa: E731
    return key(a) == key(b)


def recorded_sha256(path) -> str:
    """The sha256 a space directory's ``SHA256`` file records; raises :class:`SpaceError`."""
    try:
        sha = (Path(path) / "SHA256").read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        raise SpaceError(f"{path}: not a text space (no readable SHA256 file)") from None
    if len(sha) != 64 or any(c not in "0123456789abcdef" for c in sha):
        raise SpaceError(f"{path}/SHA256: not a sha256 (64 hexadecimal digits)")
    return sha


def space_sha256(path) -> str:
    """sha256 (hex) over the space's files, in :data:`FILES` order, each as stored."""
    h = hashlib.sha256()
    for name in FILES:
        h.update(name.encode() + b"\0")
        with open(Path(path) / name, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
    return h.hexdigest()


# -- building --------------------------------------------------------------------------------
