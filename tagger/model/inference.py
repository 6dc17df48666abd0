"""The tagging model: TF-IDF features + one LightGBM booster per label, saved as plain files.

A model directory holds::

    manifest.json      format version, labels in order, facet kinds, taxonomy fingerprint,
                       corpus hash, package versions, parameters, thresholds, training figures
    features.json      TF-IDF settings, stop words, stem exceptions (older models: terms and idf too)
    vocabulary.npz     the terms in column order, their idf and lookup tables (:mod:`tagger.model.vocabulary`)
    boosters/*.txt.gz  one LightGBM model per label (a multiclass one per exclusive facet),
                       in LightGBM's own text format, gzip-compressed (``.txt`` in older models);
                       read only for ``--explain`` and tests
    trees.npz          the same trees flattened for the numpy evaluator (:mod:`tagger.model.forest`)
    linear_wt.npy      the linear base's weights, int8 per term (n_features, n_outputs), memory-mapped
    linear.npz         their per-term scales and the intercepts (older models: the weights, float64)

Nothing is pickled, so loading a model never runs code.  Loading never imports scikit-learn,
nltk or lightgbm; :meth:`Model.booster` imports lightgbm on demand (explanations, tests).
Training (fitting, threshold tuning, out-of-fold passes) is :mod:`tagger.model.training`; writing
a model directory atomically is :mod:`tagger.model.modeldir`.  This module is what ``tagger label``
imports: loading, scoring through the numpy path and thresholds; abstention is
:mod:`tagger.model.abstain`.
"""

from __future__ import annotations

import json
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from .abstain import MIN_WORDS, not_english_reason, too_short_reason
from ..errors import TaggerError
from .features import TfidfFeatures
from .vocabulary import load_features
from .loading import (ModelError, QuantizedWeights, check_feature_version,  # noqa: F401 (ModelError re-exported)
                      check_removed_options, load_linear, load_space)
from ..taxonomy import Taxonomy, difference_from_model

MODEL_FORMAT = 1
DEFAULT_THRESHOLD = 0.5


@dataclass
class Prediction:
    """Tags of one document.

    ``tags``: label ids in taxonomy order; ``scores``: {label id: probability} for those tags;
    ``reason``: why the model abstained (then ``tags`` is empty), else None.
    """

    tags: list[str]
    scores: dict[str, float]
    reason: str | None = None
    explanations: dict[str, list] = field(default_factory=dict)
    #: with ``explain``: what the model did not read (a text cut at :data:`MODEL_TEXT_CHARS`)
    note: str | None = None


#: characters of a record's text (and of its title) the model reads; the rest is cut.  An
#: abstract is a few thousand; this bounds the time and memory of tagging any record
MODEL_TEXT_CHARS = 100_000


def _sigmoid(x):
    import numpy as np

    return 1.0 / (1.0 + np.exp(-x))


class Model:
    """A loaded model directory.

    ``labels`` (list of str, length L) fixes the column order of every score matrix;
    ``facets`` is [(facet id, kind, [label ids])]; ``thresholds`` is a float array (L,).
    """

    def __init__(self, path, manifest: dict, features: TfidfFeatures, forest, linear=None, space=None):
        import numpy as np

        self.path = Path(path)
        self.manifest = manifest
        self.features = features
        self.forest = forest
        #: (W, b): the linear base, W (n_outputs, n_features) float64 or :class:`QuantizedWeights`, b (n_outputs,), or None
        self.linear = linear
        #: the text space (:class:`tagger.model.space.TextSpace`) whose components follow the TF-IDF
        #: columns, or None
        self.space = space
        self.labels: list[str] = manifest["labels"]
        self.facets = [(f["id"], f["kind"], f["labels"]) for f in manifest["facets"]]
        self.thresholds = np.array([manifest["thresholds"][lb] for lb in self.labels])
        self._col = {lb: j for j, lb in enumerate(self.labels)}
        self._boosters = {}
        self._WT = None  # the linear base's weights, transposed (n_features, n_outputs), on first use
        self._WD = None  # the same for the text space's components (k, n_outputs)

    # -- loading --------------------------------------------------------------------------
    @classmethod
    def load(cls, path, taxonomy: Taxonomy | None = None) -> "Model":
        """Load the model in directory ``path``; raises :class:`ModelError` (one line) when
        it is missing, of another format version, uses an option whose code was removed
        (:func:`~tagger.model.loading.check_removed_options`), or trained for another taxonomy."""
        from .forest import Forest

        path = Path(path)
        mf = path / "manifest.json"
        if path.exists() and not path.is_dir():
            raise ModelError(f"{path}: a file, not a model directory (--model and $TAGGER_MODEL name the directory "
                             "that holds manifest.json)")
        if not mf.is_file():
            raise ModelError(f"{path}: not a tagger model directory (no manifest.json); train one with `tagger train --out {path}`")
        try:
            manifest = json.loads(mf.read_text(encoding="utf-8"))
        except (ValueError, OSError) as e:
            raise ModelError(f"{mf}: unreadable manifest ({e}); retrain with `tagger train`") from None
        if not isinstance(manifest, dict):
            raise ModelError(f"{mf}: unreadable manifest (a JSON {type(manifest).__name__}, not an object); "
                             "retrain with `tagger train`")
        fmt = manifest.get("format_version")
        if fmt is None:
            raise ModelError(f"{mf}: the manifest has no format_version: please retrain with `tagger train`")
        if fmt != MODEL_FORMAT or type(fmt) is not int:
            raise ModelError(f"{path}: model format {json.dumps(fmt)}, but this tagger reads format {MODEL_FORMAT}: "
                             "please retrain with `tagger train`")
        check_feature_version(path, manifest)
        check_removed_options(path, manifest)
        if taxonomy is not None and manifest.get("taxonomy_fingerprint") != taxonomy.fingerprint():
            raise ModelError(f"{path}: model was trained for another taxonomy than {taxonomy.path} "
                             f"({difference_from_model(manifest, taxonomy)}): retrain with "
                             f"`tagger train --taxonomy {taxonomy.path}`")
        try:
            features = load_features(path)
            forest = Forest.load(path / "trees.npz")
            linear = load_linear(path / "linear.npz") if (path / "linear.npz").exists() else None
            space = load_space(path, manifest)
            model = cls(path, manifest, features, forest, linear, space)
            model._check_shapes()
        except (OSError, ValueError, KeyError, TypeError, IndexError, EOFError, zipfile.BadZipFile) as e:
            raise ModelError(f"{path}: damaged model files ({e}); retrain with `tagger train`") from None
        if taxonomy is not None:  # the thresholds the taxonomy file sets replace the model's
            for lb, th in taxonomy.thresholds().items():
                model.thresholds[model._col[lb]] = th
        return model

    def _check_shapes(self) -> None:
        """Raise ValueError when the model files do not fit each other."""
        n_out = len(self.forest.bias)
        outs = list(self.manifest["binary_outputs"].values()) + [o for v in self.manifest["exclusive_outputs"].values() for o in v]
        if sorted(outs) != list(range(n_out)) or sorted(self.labels) != sorted(lb for f in self.facets for lb in f[2]):
            raise ValueError("manifest outputs and labels do not match the trees")
        n_feat = self.n_features
        if self.forest.used_features.size and self.forest.used_features.max() >= n_feat:
            raise ValueError("trees use features the vocabulary does not have")
        if self.space is not None and self.forest.n_sparse not in (None, self.features.n_features):
            raise ValueError("trees.npz does not fit the vocabulary and the text space")
        if self.linear is not None and (self.linear[0].shape != (n_out, n_feat)
                                        or self.linear[1].shape != (n_out,)):
            raise ValueError("linear.npz does not fit the vocabulary and outputs")

    @property
    def n_features(self) -> int:
        """Columns the learners read: the TF-IDF terms, then the text space's components."""
        return self.features.n_features + (self.space.k if self.space is not None else 0)

    def transform(self, texts) -> "FeatureBatch":
        """The features of ``texts`` (sequence of str): the TF-IDF rows as a sparse
        :class:`~tagger.features.FeatureBatch` with, when the model has a text space, its
        components in ``components`` (float64, (n, k))."""
        texts = list(texts)
        if self.space is None:
            return self.features.transform(texts)
        batch, space_batch = self.features.transform_pair(self.space.features, texts)  # one pass for both
        batch.components = self.space.project(space_batch)
        return batch

    # -- scoring --------------------------------------------------------------------------
    def predict_proba(self, texts) -> "np.ndarray":
        """Probabilities, shape (n_texts, L), float64, columns in ``self.labels`` order.

        Binary labels: sigmoid of the booster's raw score.  Exclusive facets: softmax over the
        facet's classes (its labels plus "none"), each label's column its class probability.
        """
        return self.proba_of_raw(self.raw_scores(texts))

    def proba_of_raw(self, raw) -> "np.ndarray":
        """Probabilities (n, L) from raw scores (n, n_outputs): the link."""
        return self._link(raw)

    def raw_scores(self, texts) -> "np.ndarray":
        """Raw scores (log-odds; logits for exclusive facets), shape (n_texts, n_outputs):
        the linear base plus the trees."""
        return self.raw_scores_of(self.transform(texts))

    def raw_scores_of(self, batch) -> "np.ndarray":
        """:meth:`raw_scores` of a :class:`~tagger.model.features.FeatureBatch` (n_rows, n_outputs)."""
        import numpy as np

        raw = self.forest.raw_scores(batch.n_rows, batch.row, batch.col, batch.value, batch.components)
        if self.linear is not None and batch.row.size:
            # sum over each row's entries of value * W[:, col]: numpy gathers, no BLAS (whose
            # threads would spin beside a single-threaded pipeline)
            if self._WT is None:
                from .forest import Scratch

                W = self.linear[0]
                self._WT, self._scratch = W if isinstance(W, QuantizedWeights) else np.ascontiguousarray(W.T), Scratch()
            row = batch.row
            starts = np.flatnonzero(np.concatenate(([True], row[1:] != row[:-1])))  # row is sorted
            n_out = len(self.linear[1])
            out = self._scratch("terms", row.size * n_out, np.float64).reshape(row.size, n_out)
            if isinstance(self._WT, QuantizedWeights):  # memory-mapped: only these terms' rows are read
                terms = self._WT.terms(batch.col, batch.value, out)
            else:
                terms = np.take(self._WT, batch.col, axis=0, out=out)
                terms *= batch.value[:, None]
            raw[row[starts]] += np.add.reduceat(terms, starts, axis=0)
        if self.linear is not None and batch.components is not None:
            if self._WD is None:
                W, n = self.linear[0], self.features.n_features
                self._WD = (W.q[n:] * W.scale[n:, None] if isinstance(W, QuantizedWeights)
                            else np.ascontiguousarray(W[:, n:].T))
            raw += batch.components @ self._WD
        if self.linear is not None:
            raw += self.linear[1]
        return raw

    def _link(self, raw):
        import numpy as np

        L = len(self.labels)
        proba = np.empty((raw.shape[0], L))
        for f_id, kind, labs in self.facets:
            cols = [self.labels.index(lb) for lb in labs]
            if kind == "exclusive":
                outs = self.manifest["exclusive_outputs"][f_id]  # raw columns: [none, *labels]
                z = raw[:, outs]
                z = np.exp(z - z.max(axis=1, keepdims=True))
                z /= z.sum(axis=1, keepdims=True)
                proba[:, cols] = z[:, 1:]
            else:
                proba[:, cols] = _sigmoid(raw[:, [self.manifest["binary_outputs"][lb] for lb in labs]])
        return proba

    def decide(self, proba, thresholds=None, facets=None) -> list[tuple[list[str], dict[str, float]]]:
        """Turn probabilities (n, L) into ``(tags, scores)`` per row.

        ``thresholds``: as :meth:`threshold_vector`.  ``facets``: facet ids to keep (None:
        all).  An exclusive facet yields at most its most probable label, and only when that
        passes its threshold.
        """
        import numpy as np

        n = proba.shape[0]
        th = self.threshold_vector(thresholds)
        order = [self._col[lb] for _, _, labs in self.facets for lb in labs]  # taxonomy order
        names = [self.labels[j] for j in order]
        P = proba[:, order]
        chosen = P >= th[order]
        rows = np.arange(n)
        pos = 0
        for f_id, kind, labs in self.facets:
            cols = slice(pos, pos + len(labs))
            pos += len(labs)
            if facets and f_id not in facets:
                chosen[:, cols] = False
            elif kind == "exclusive":  # only the most probable label can pass
                best = cols.start + P[:, cols].argmax(axis=1)
                passed = chosen[rows, best]
                chosen[:, cols] = False
                chosen[rows, best] = passed
        r, c = np.nonzero(chosen)  # row-major: each row's tags in taxonomy order
        tags = [names[j] for j in c.tolist()]
        scores = [round(v, 4) for v in P[r, c].tolist()]
        out, k = [], 0
        for m in np.bincount(r, minlength=n).tolist():
            out.append((tags[k:k + m], dict(zip(tags[k:k + m], scores[k:k + m]))))
            k += m
        return out

    def threshold_vector(self, thresholds=None) -> "np.ndarray":
        """The thresholds to apply, float array (L,) in ``self.labels`` order.

        ``thresholds``: None for the model's per-label ones; a float in [0, 1] for every
        label; or a dict ``{label id: float}`` replacing those labels' thresholds (the others
        keep the model's).  Raises :class:`TaggerError` for an unknown label id or a value
        outside [0, 1].
        """
        import numpy as np

        if thresholds is None:
            return self.thresholds
        if isinstance(thresholds, dict):
            th = self.thresholds.copy()
            for lb, v in thresholds.items():
                if lb not in self._col:
                    from ..wording import close_matches, did_you_mean

                    raise TaggerError(f"threshold for unknown label {lb!r}" + did_you_mean(
                        close_matches(str(lb), self.labels),
                        f" (labels are facet:label ids, e.g. {self.labels[0]})"))
                th[self._col[lb]] = _unit(v, f"threshold of {lb}")
            return th
        return np.full(len(self.labels), _unit(thresholds, "threshold"))

    def predict(self, records, *, text_field="abstract", title_field="title", thresholds=None,
                facets=None, min_words=MIN_WORDS, explain=0) -> list[Prediction]:
        """Tag a batch of records (dicts with the text in ``text_field``).

        Records too short (< ``min_words`` words) or not English get an empty prediction with a
        ``reason`` (abstention, never a guessed label).  ``explain`` > 0 adds, per tag, the
        ``explain`` n-grams that raised its score most (LightGBM's SHAP contributions).
        """
        from ..text import document_text

        if min_words is None:
            min_words = MIN_WORDS
        preds: list[Prediction | None] = [None] * len(records)
        todo, texts = [], []
        cut: dict[int, int] = {}  # record -> characters of its text, when cut
        for i, r in enumerate(records):
            text, title = r.get(text_field) or "", r.get(title_field) or ""
            if (isinstance(text, str) and len(text) > MODEL_TEXT_CHARS) or (
                    isinstance(title, str) and len(title) > MODEL_TEXT_CHARS):
                cut[i] = len(text) if isinstance(text, str) else 0
                r = {**r, text_field: text[:MODEL_TEXT_CHARS] if isinstance(text, str) else text,
                     title_field: title[:MODEL_TEXT_CHARS] if isinstance(title, str) else title}
            reason = too_short_reason(r.get(text_field) or "", min_words)
            if reason:
                preds[i] = Prediction([], {}, reason)
            else:
                todo.append(i)
                texts.append(document_text(r, text_field, title_field))
        if not todo:
            return preds
        batch = self.transform(texts)
        decided = self.decide(self.proba_of_raw(self.raw_scores_of(batch)), thresholds, facets)
        for k, i in enumerate(todo):
            reason = not_english_reason(int(batch.n_tokens[k]), int(batch.n_function_words[k]))
            preds[i] = Prediction([], {}, reason) if reason else Prediction(*decided[k])
        if explain:
            from .explain import explain_batch

            for k, i in enumerate(todo):
                if preds[i].tags:
                    preds[i].explanations = explain_batch(self, texts[k], preds[i].tags, explain)
            for i, n in cut.items():
                preds[i].note = (f"the model read the first {MODEL_TEXT_CHARS:,} characters of the text "
                                 f"({n:,}) and of the title")
        return preds

    def booster_input(self, X):
        """``X`` (n_rows, n_columns: the terms, then any text space's components) as the
        LightGBM boosters read it: only the columns they were trained on, when they were
        trained on a subset (:attr:`Forest.booster_columns <tagger.model.forest.Forest>`)."""
        cols = self.forest.booster_columns
        return X if cols is None else X[:, cols]

    def booster(self, label: str):
        """The LightGBM Booster of ``label``'s model file (imports lightgbm).  Raises
        :class:`ModelError` (one line) for a missing or damaged booster file."""
        import lightgbm as lgb

        name = self.manifest["booster_files"][label]
        if name not in self._boosters:
            import gzip

            path = self.path / "boosters" / name
            try:
                if name.endswith(".gz"):  # gzip-compressed text (models since 2026-12), a third of the size
                    self._boosters[name] = lgb.Booster(model_str=gzip.decompress(path.read_bytes()).decode("utf-8"))
                else:
                    self._boosters[name] = lgb.Booster(model_file=str(path))
            except FileNotFoundError:
                raise ModelError(f"{path}: no such file: the model is incomplete (reinstall it, or retrain "
                                 "with `tagger train`)") from None
            except (OSError, EOFError, UnicodeDecodeError, gzip.BadGzipFile, lgb.basic.LightGBMError) as e:
                raise ModelError(f"{path}: damaged booster file ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else 'cut short'}); "
                                 "reinstall the model, or retrain with `tagger train`") from None
        return self._boosters[name]


def _unit(v, what: str) -> float:
    """``v`` as a float in [0, 1], else TaggerError naming ``what``."""
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 <= v <= 1:
        raise TaggerError(f"{what} must be a number from 0 to 1, not {v!r}")
    return float(v)
