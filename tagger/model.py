"""The tagging model: TF-IDF features + one LightGBM booster per label, saved as plain files.

A model directory holds::

    manifest.json      format version, labels in order, facet kinds, taxonomy fingerprint,
                       corpus hash, package versions, parameters, thresholds, training figures
    features.json      TF-IDF vocabulary (column order), idf, stop words, stem exceptions
    boosters/*.txt     one LightGBM model per label (a multiclass one per exclusive facet),
                       in LightGBM's own text format
    trees.npz          the same trees flattened for the numpy evaluator (:mod:`tagger.forest`)

Nothing is pickled, so loading a model never runs code.  Loading never imports scikit-learn,
nltk or lightgbm; :meth:`Model.booster` imports lightgbm on demand (explanations, tests).
"""

from __future__ import annotations

import json
import os
import zipfile
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from .errors import TaggerError
from .features import TfidfFeatures, dump_json
from .taxonomy import Taxonomy

MODEL_FORMAT = 1

#: LightGBM parameters for small hand-tagged corpora (hundreds to a few thousand abstracts,
#: tens of thousands of sparse TF-IDF columns, labels with as few as 15 positives):
#: - num_leaves=8 / max_depth=4: shallow trees; deeper ones memorise the few positives;
#: - min_data_in_leaf=3, min_sum_hessian_in_leaf=1e-3: a rare label's positives can still
#:   form a leaf (the default 20 would forbid most splits on a label with 15 positives);
#: - feature_fraction=0.5 with a fixed seed: decorrelates trees over the many weak n-grams;
#: - lambda_l2=1: mild shrinkage of leaf values on small leaves;
#: - num_threads=1, deterministic=True, seed: identical boosters on every run and machine;
#: - 60 rounds at learning_rate 0.15: chosen by cross-validation (fixtures/README.md), and kept
#:   small because prediction cost grows linearly with the tree count (perf-notes.md).
LGBM_PARAMS = {
    "learning_rate": 0.15,
    "num_leaves": 8,
    "max_depth": 4,
    "min_data_in_leaf": 3,
    "min_sum_hessian_in_leaf": 1e-3,
    "feature_fraction": 0.5,
    "lambda_l2": 1.0,
    "max_bin": 15,
    "num_threads": 1,
    "deterministic": True,
    "force_col_wise": True,
    "seed": 13,
    "verbose": -1,
}
NUM_ROUNDS = 60
#: Each binary label's trees boost from a linear base: an L2 logistic regression on the same
#: TF-IDF row (C=10), whose log-odds are the boosters' ``init_score``.  During training the
#: init score of every example is the out-of-fold log-odds of LINEAR_FOLDS regressions fitted
#: without it, so the trees learn what the linear model gets wrong on unseen text, not its
#: training fit.  The prediction is ``linear log-odds + trees``.  Cross-validated on the
#: corpus this raised micro-F1 from 0.802 to 0.814 and macro-F1 from 0.695 to 0.724 over
#: trees alone (and beat the regression alone, 0.798 / 0.696): fixtures/README.md.
LINEAR_C = 10.0
LINEAR_FOLDS = 5
#: folds of the out-of-fold pass that tunes thresholds in ``tagger train``
THRESHOLD_FOLDS = 5
#: a label's tuned threshold is shrunk toward its facet's: weight n_pos / (n_pos + SHRINK_K)
SHRINK_K = 10
DEFAULT_THRESHOLD = 0.5
#: abstention: fewer words than this is too short to judge (a title alone is ~10 words,
#: the shortest real abstracts in the corpora ~40); see README "Abstention"
MIN_WORDS = 20
#: abstention: share of a text's tokens (title and abstract) that are common English function
#: words (``text.FUNCTION_WORDS``: "the", "of", "we"...); over all 14,621 abstracts of
#: arxiv-2025-uniform (>= 20 words) the lowest share is 7.8% (0.1% quantile 10.2%, median
#: 19.8%), while German, French, Spanish, Italian and Portuguese abstracts score 0% and a
#: Dutch one 5.2% (tests/test_model.py)
MIN_ENGLISH_SHARE = 0.05


#: every name a model directory may hold (training replaces the directory as a whole)
MODEL_FILES = frozenset({"manifest.json", "features.json", "trees.npz", "linear.npz", "boosters", "README.md"})


class ModelError(TaggerError):
    """A model directory that cannot be used; the message is one line and says what to do."""


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


def _sigmoid(x):
    import numpy as np

    return 1.0 / (1.0 + np.exp(-x))


class Model:
    """A loaded model directory.

    ``labels`` (list of str, length L) fixes the column order of every score matrix;
    ``facets`` is [(facet id, kind, [label ids])]; ``thresholds`` is a float array (L,).
    """

    def __init__(self, path, manifest: dict, features: TfidfFeatures, forest, linear=None):
        import numpy as np

        self.path = Path(path)
        self.manifest = manifest
        self.features = features
        self.forest = forest
        #: (W, b): the linear base, W (n_outputs, n_features) and b (n_outputs,) float64, or None
        self.linear = linear
        self.labels: list[str] = manifest["labels"]
        self.facets = [(f["id"], f["kind"], f["labels"]) for f in manifest["facets"]]
        self.thresholds = np.array([manifest["thresholds"][lb] for lb in self.labels])
        self._col = {lb: j for j, lb in enumerate(self.labels)}
        self._boosters = {}
        self._WT = None  # the linear base's weights, transposed (n_features, n_outputs), on first use

    # -- loading --------------------------------------------------------------------------
    @classmethod
    def load(cls, path, taxonomy: Taxonomy | None = None) -> "Model":
        """Load the model in directory ``path``; raises :class:`ModelError` (one line) when
        it is missing, of another format version, or trained for another taxonomy."""
        from .forest import Forest

        path = Path(path)
        mf = path / "manifest.json"
        if not mf.is_file():
            raise ModelError(f"{path}: not a tagger model directory (no manifest.json); train one with `tagger train --out {path}`")
        try:
            manifest = json.loads(mf.read_text(encoding="utf-8"))
        except (ValueError, OSError) as e:
            raise ModelError(f"{mf}: unreadable manifest ({e}); retrain with `tagger train`") from None
        fmt = manifest.get("format_version")
        if fmt != MODEL_FORMAT:
            raise ModelError(f"{path}: model format {fmt}, but this tagger reads format {MODEL_FORMAT}: please retrain with `tagger train`")
        if taxonomy is not None and manifest.get("taxonomy_fingerprint") != taxonomy.fingerprint():
            raise ModelError(f"{path}: model was trained for another taxonomy than {taxonomy.path} (facets or labels differ): retrain with `tagger train --taxonomy {taxonomy.path}`")
        try:
            features = TfidfFeatures.from_json(json.loads((path / "features.json").read_text(encoding="utf-8")))
            forest = Forest.load(path / "trees.npz")
            linear = load_linear(path / "linear.npz") if (path / "linear.npz").exists() else None
            model = cls(path, manifest, features, forest, linear)
            model._check_shapes()
        except (OSError, ValueError, KeyError, TypeError, IndexError, EOFError, zipfile.BadZipFile) as e:
            raise ModelError(f"{path}: damaged model files ({e}); retrain with `tagger train`") from None
        return model

    def _check_shapes(self) -> None:
        """Raise ValueError when the model files do not fit each other."""
        n_out = len(self.forest.bias)
        outs = list(self.manifest["binary_outputs"].values()) + [o for v in self.manifest["exclusive_outputs"].values() for o in v]
        if sorted(outs) != list(range(n_out)) or sorted(self.labels) != sorted(lb for f in self.facets for lb in f[2]):
            raise ValueError("manifest outputs and labels do not match the trees")
        if self.forest.used_features.size and self.forest.used_features.max() >= self.features.n_features:
            raise ValueError("trees use features the vocabulary does not have")
        if self.linear is not None and (self.linear[0].shape != (n_out, self.features.n_features)
                                        or self.linear[1].shape != (n_out,)):
            raise ValueError("linear.npz does not fit the vocabulary and outputs")

    # -- scoring --------------------------------------------------------------------------
    def predict_proba(self, texts) -> "np.ndarray":
        """Probabilities, shape (n_texts, L), float64, columns in ``self.labels`` order.

        Binary labels: sigmoid of the booster's raw score.  Exclusive facets: softmax over the
        facet's classes (its labels plus "none"), each label's column its class probability.
        """
        return self._link(self.raw_scores(texts))

    def raw_scores(self, texts) -> "np.ndarray":
        """Raw scores (log-odds; logits for exclusive facets), shape (n_texts, n_outputs):
        the linear base plus the trees."""
        return self.raw_scores_of(self.features.transform(texts))

    def raw_scores_of(self, batch) -> "np.ndarray":
        """:meth:`raw_scores` of a :class:`~tagger.features.FeatureBatch` (n_rows, n_outputs)."""
        import numpy as np

        raw = self.forest.raw_scores(batch.n_rows, batch.row, batch.col, batch.value)
        if self.linear is not None and batch.row.size:
            # sum over each row's entries of value * W[:, col]: numpy gathers, no BLAS (whose
            # threads would spin beside a single-threaded pipeline)
            if self._WT is None:
                from .forest import Scratch

                self._WT, self._scratch = np.ascontiguousarray(self.linear[0].T), Scratch()
            row = batch.row
            starts = np.flatnonzero(np.concatenate(([True], row[1:] != row[:-1])))  # row is sorted
            terms = np.take(self._WT, batch.col, axis=0,
                            out=self._scratch("terms", row.size * self._WT.shape[1], np.float64).reshape(row.size, -1))
            terms *= batch.value[:, None]
            raw[row[starts]] += np.add.reduceat(terms, starts, axis=0)
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

        ``thresholds``: one float for every label, or None for the model's per-label ones.
        ``facets``: facet ids to keep (None: all).  An exclusive facet yields at most its
        most probable label, and only when that passes its threshold.
        """
        import numpy as np

        n = proba.shape[0]
        th = self.thresholds if thresholds is None else np.full(len(self.labels), float(thresholds))
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

    def predict(self, records, *, text_field="abstract", title_field="title", thresholds=None,
                facets=None, min_words=MIN_WORDS, explain=0) -> list[Prediction]:
        """Tag a batch of records (dicts with the text in ``text_field``).

        Records too short (< ``min_words`` words) or not English get an empty prediction with a
        ``reason`` (abstention, never a guessed label).  ``explain`` > 0 adds, per tag, the
        ``explain`` n-grams that raised its score most (LightGBM's SHAP contributions).
        """
        from .text import document_text

        if min_words is None:
            min_words = MIN_WORDS
        preds: list[Prediction | None] = [None] * len(records)
        todo, texts = [], []
        for i, r in enumerate(records):
            reason = too_short_reason(r.get(text_field) or "", min_words)
            if reason:
                preds[i] = Prediction([], {}, reason)
            else:
                todo.append(i)
                texts.append(document_text(r, text_field, title_field))
        if not todo:
            return preds
        batch = self.features.transform(texts)
        decided = self.decide(self._link(self.raw_scores_of(batch)), thresholds, facets)
        for k, i in enumerate(todo):
            reason = not_english_reason(int(batch.n_tokens[k]), int(batch.n_function_words[k]))
            preds[i] = Prediction([], {}, reason) if reason else Prediction(*decided[k])
        if explain:
            from .explain import explain_batch

            for k, i in enumerate(todo):
                if preds[i].tags:
                    preds[i].explanations = explain_batch(self, texts[k], preds[i].tags, explain)
        return preds

    def booster(self, label: str):
        """The LightGBM Booster of ``label``'s model file (imports lightgbm)."""
        import lightgbm as lgb

        name = self.manifest["booster_files"][label]
        if name not in self._boosters:
            self._boosters[name] = lgb.Booster(model_file=str(self.path / "boosters" / name))
        return self._boosters[name]


def too_short_reason(abstract: str, min_words: int = MIN_WORDS) -> str | None:
    """"too short to judge: ..." when ``abstract`` has fewer than ``min_words``
    whitespace-separated words, else None."""
    n_words = len(abstract.split(None, min_words))  # stops splitting at min_words (exact below it)
    if n_words >= min_words:
        return None
    return f"too short to judge: {n_words} word{'' if n_words == 1 else 's'}, fewer than {min_words}"


def not_english_reason(n_tokens: int, n_function_words: int) -> str | None:
    """"not English: ..." when under ``MIN_ENGLISH_SHARE`` of a text's ``n_tokens`` tokens
    are common English function words (``text.FUNCTION_WORDS``), else None."""
    if n_tokens == 0:
        return "not English: no words in Latin letters"
    share = n_function_words / n_tokens
    if share < MIN_ENGLISH_SHARE:
        return f"not English: {share:.1%} English function words, fewer than {MIN_ENGLISH_SHARE:.0%}"
    return None


def abstain_reason(abstract: str, min_words: int = MIN_WORDS, title: str = "") -> str | None:
    """Why a record should not be tagged, or None: the rule :meth:`Model.predict` applies.

    Two cheap tests: fewer than ``min_words`` words in the abstract ("too short"), and, over
    the tokens of title and abstract (the model's own tokens, stop words included), a share
    of common English function words below ``MIN_ENGLISH_SHARE`` ("not English").
    """
    from .text import FUNCTION_WORDS, RUN_RE, document_text, is_token, token_text

    reason = too_short_reason(abstract, min_words)
    if reason:
        return reason
    tokens = [r for r in RUN_RE.findall(token_text(document_text({"abstract": abstract, "title": title}))) if is_token(r)]
    return not_english_reason(len(tokens), sum(t in FUNCTION_WORDS for t in tokens))


# ---------------------------------------------------------------------------------------
# training


def label_matrix(records, labels: list[str]):
    """Binary indicator matrix, shape (n_records, L), int8, from each record's ``labels``."""
    import numpy as np

    index = {lb: j for j, lb in enumerate(labels)}
    Y = np.zeros((len(records), len(labels)), dtype=np.int8)
    for i, r in enumerate(records):
        for lb in r.get("labels", []):
            if lb in index:
                Y[i, index[lb]] = 1
    return Y


@dataclass
class FittedModel:
    """What :func:`fit` returns: features, one booster per label/exclusive facet, and the
    raw-output layout that :class:`Model` and :mod:`tagger.forest` use."""

    features: TfidfFeatures
    boosters: dict  # booster file stem -> lightgbm.Booster
    binary_outputs: dict  # label -> raw column
    exclusive_outputs: dict  # facet -> [raw columns: none, *labels]
    booster_outputs: dict  # booster file stem -> raw columns of its classes
    bias: list
    n_outputs: int
    linear: tuple = None  # (W (n_outputs, n_features), b (n_outputs,)): the linear base


def _linear_base(X, y, folds, C=LINEAR_C):
    """Out-of-fold log-odds (n,) of L2 logistic regressions on ``X``, and the (w, b) of one
    fitted on all rows.  A label constant within a training part gets its prior log-odds."""
    import numpy as np
    from sklearn.linear_model import LogisticRegression

    def fit_lr(Xa, ya):
        if ya.min() == ya.max():
            return np.zeros(X.shape[1]), (8.0 if ya[0] else -8.0)
        lr = LogisticRegression(C=C, solver="liblinear", max_iter=2000).fit(Xa, ya)
        return lr.coef_[0].astype(np.float64), float(lr.intercept_[0])

    oof = np.zeros(X.shape[0])
    for a, b in folds:
        w, b0 = fit_lr(X[a], y[a])
        oof[b] = X[b] @ w + b0
    w, b0 = fit_lr(X, y)
    return oof, w, b0


def fit(texts, Y, taxonomy: Taxonomy, params=None, num_rounds=NUM_ROUNDS, tfidf_params=None,
        linear=True) -> FittedModel:
    """Fit TF-IDF and the boosters on ``texts`` (list of str) and ``Y`` (n, L) int.

    Binary boosters per label of a multi-label facet; one multiclass booster (classes: none,
    then the facet's labels) per exclusive facet.  A label with no positive example gets no
    booster and a constant raw score of -30 (probability ~1e-13).  ``linear`` (default True)
    gives every binary label's trees the logistic-regression base of :data:`LINEAR_C`.
    """
    import lightgbm as lgb
    import numpy as np

    from .features import fit_tfidf

    p = {**LGBM_PARAMS, **(params or {})}
    feats, X = fit_tfidf(texts, tfidf_params)
    X = X.astype(np.float64).tocsr()
    labels = taxonomy.label_ids
    inner = stratified_folds(Y, LINEAR_FOLDS, seed=1) if linear and len(texts) >= 2 * LINEAR_FOLDS else None
    n_out = len(labels) + sum(1 for f in taxonomy.facets if f.kind == "exclusive")
    W, b_lin = np.zeros((n_out, X.shape[1])), np.zeros(n_out)
    # one binned Dataset serves every booster: binning does not depend on the label
    ds_params = {"verbose": -1, "min_data_in_leaf": p["min_data_in_leaf"],
                 "min_sum_hessian_in_leaf": p["min_sum_hessian_in_leaf"], "max_bin": p["max_bin"]}
    ds = lgb.Dataset(X, label=np.zeros(X.shape[0]), params=ds_params, free_raw_data=False).construct()
    boosters, booster_outputs, binary_outputs, exclusive_outputs, bias = {}, {}, {}, {}, []
    for facet in taxonomy.facets:
        cols = [labels.index(lb.id) for lb in facet.labels]
        if facet.kind == "exclusive":
            y = np.zeros(len(texts), dtype=np.int64)
            for k, j in enumerate(cols, 1):
                y[Y[:, j] == 1] = k
            outs = list(range(len(bias), len(bias) + len(cols) + 1))
            bias.extend([0.0] * len(outs))
            exclusive_outputs[facet.id] = outs
            if len(set(y.tolist())) < 2:
                bias[outs[0]] = 30.0  # nothing to learn: always "none"
                continue
            ds.set_label(y.astype(np.float64))
            ds.set_init_score(None)
            b = lgb.train({**p, "objective": "multiclass", "num_class": len(outs)}, ds, num_boost_round=num_rounds)
            boosters[facet.id] = b
            booster_outputs[facet.id] = outs
        else:
            for lb, j in zip(facet.labels, cols):
                out = len(bias)
                bias.append(0.0)
                binary_outputs[lb.id] = out
                y = Y[:, j].astype(np.float64)
                if y.sum() == 0 or y.sum() == len(y):
                    bias[out] = -30.0 if y.sum() == 0 else 30.0
                    continue
                ds.set_label(y)
                if inner is not None:
                    oof, W[out], b_lin[out] = _linear_base(X, y, inner)
                    ds.set_init_score(oof)
                else:
                    ds.set_init_score(None)
                b = lgb.train({**p, "objective": "binary"}, ds, num_boost_round=num_rounds)
                stem = lb.id.replace(":", "__")
                boosters[stem] = b
                booster_outputs[stem] = [out]
    assert len(bias) == n_out
    return FittedModel(feats, boosters, binary_outputs, exclusive_outputs, booster_outputs, bias, len(bias),
                       (W, b_lin) if inner is not None else None)


def fitted_proba(fm: FittedModel, taxonomy: Taxonomy, texts):
    """Probabilities (n, L) of a :class:`FittedModel` through the numpy path (no files)."""
    from .forest import flatten_boosters

    forest = flatten_boosters([(b.dump_model(), fm.booster_outputs[k]) for k, b in fm.boosters.items()],
                              fm.n_outputs, fm.bias)
    manifest = _layout_manifest(fm, taxonomy)
    m = Model(".", manifest, fm.features, forest, fm.linear)
    return m.predict_proba(texts)


def _layout_manifest(fm: FittedModel, taxonomy: Taxonomy, thresholds=None) -> dict:
    return {
        "format_version": MODEL_FORMAT,
        "labels": taxonomy.label_ids,
        "facets": [{"id": f.id, "kind": f.kind, "labels": [lb.id for lb in f.labels]} for f in taxonomy.facets],
        "binary_outputs": fm.binary_outputs,
        "exclusive_outputs": fm.exclusive_outputs,
        "thresholds": thresholds or {lb: DEFAULT_THRESHOLD for lb in taxonomy.label_ids},
        "booster_files": {**{lb: f"{lb.replace(':', '__')}.txt" for lb in fm.binary_outputs},
                          **{lb.id: f"{f.id}.txt" for f in taxonomy.facets if f.kind == "exclusive" for lb in f.labels}},
    }


def tune_thresholds(Y, P, taxonomy: Taxonomy, shrink_k: float = SHRINK_K) -> tuple[dict, dict]:
    """Per-label thresholds from out-of-fold probabilities.

    For each facet, one threshold maximising the facet's micro-F1 (from a grid 0.05..0.95);
    then per label the threshold maximising that label's F1, shrunk toward the facet's with
    weight ``n_pos / (n_pos + shrink_k)``, so labels with few examples stay near the facet
    value.  A threshold set in the taxonomy file wins over both.  Returns
    ``(thresholds by label, thresholds by facet)``.
    """
    import numpy as np

    grid = np.round(np.arange(0.05, 0.951, 0.025), 3)
    labels = taxonomy.label_ids

    def f1(tp, fp, fn):
        return 0.0 if tp == 0 else 2 * tp / (2 * tp + fp + fn)

    out, facet_th = {}, {}
    for facet in taxonomy.facets:
        cols = [labels.index(lb.id) for lb in facet.labels]
        y, p = Y[:, cols].astype(bool), P[:, cols]
        if facet.threshold is not None:
            ft = facet.threshold
        else:
            scores = [f1((y & (p >= t)).sum(), (~y & (p >= t)).sum(), (y & (p < t)).sum()) for t in grid]
            ft = float(grid[int(np.argmax(scores))]) if max(scores) > 0 else DEFAULT_THRESHOLD
        facet_th[facet.id] = ft
        for lb, j in zip(facet.labels, cols):
            if lb.threshold is not None:
                out[lb.id] = lb.threshold
                continue
            yj, pj = Y[:, j].astype(bool), P[:, j]
            n_pos = int(yj.sum())
            if n_pos == 0:
                out[lb.id] = ft
                continue
            s = [f1((yj & (pj >= t)).sum(), (~yj & (pj >= t)).sum(), (yj & (pj < t)).sum()) for t in grid]
            best = float(grid[int(np.argmax(s))])
            w = n_pos / (n_pos + shrink_k)
            out[lb.id] = round(w * best + (1 - w) * ft, 4)
    return out, facet_th


def stratified_folds(Y, k: int, seed: int = 0):
    """``k`` (train_idx, test_idx) pairs by multi-label iterative stratification
    (Sechidis et al. 2011, via the iterative-stratification package)."""
    import numpy as np
    from iterstrat.ml_stratifiers import MultilabelStratifiedKFold

    mskf = MultilabelStratifiedKFold(n_splits=k, shuffle=True, random_state=seed)
    return list(mskf.split(np.zeros((len(Y), 1)), Y))


def out_of_fold_proba(texts, Y, taxonomy, k=THRESHOLD_FOLDS, seed=0, params=None, num_rounds=NUM_ROUNDS,
                      tfidf_params=None, progress=None):
    """Out-of-fold probabilities (n, L): each row scored by a model fitted without it
    (features and boosters refitted inside every training fold)."""
    import numpy as np

    P = np.zeros(Y.shape)
    for n, (tr, te) in enumerate(stratified_folds(Y, k, seed)):
        fm = fit([texts[i] for i in tr], Y[tr], taxonomy, params, num_rounds, tfidf_params)
        P[te] = fitted_proba(fm, taxonomy, [texts[i] for i in te])
        if progress:
            progress(n + 1, k)
    return P


def corpus_hash(records) -> str:
    """SHA-256 over (id, title, abstract, sorted labels) of every record, in order."""
    import hashlib

    h = hashlib.sha256()
    for r in records:
        h.update(json.dumps([r.get("id"), r.get("title") or "", r.get("abstract"), sorted(r.get("labels", []))],
                            ensure_ascii=False).encode())
    return h.hexdigest()


def train(records, taxonomy: Taxonomy, out_dir, *, params=None, num_rounds=NUM_ROUNDS,
          tfidf_params=None, threshold_folds=THRESHOLD_FOLDS, progress=None, created=None) -> dict:
    """Train on hand-tagged ``records`` and write the model directory ``out_dir`` atomically.

    Steps: an out-of-fold pass (``threshold_folds`` folds) gives the probabilities that tune
    per-label thresholds (:func:`tune_thresholds`); then the final model is fitted on all
    records.  The directory is built in a temporary sibling and swapped in by rename, so an
    interrupted run leaves the old model intact.  Returns the manifest.
    """
    import importlib.metadata as md
    import time

    from .forest import flatten_boosters
    from .text import document_text

    texts = [document_text(r) for r in records]
    Y = label_matrix(records, taxonomy.label_ids)
    figures = {}
    if threshold_folds and threshold_folds > 1 and len(records) >= threshold_folds * 2:
        P = out_of_fold_proba(texts, Y, taxonomy, threshold_folds, 0, params, num_rounds, tfidf_params, progress)
        thresholds, facet_th = tune_thresholds(Y, P, taxonomy)
        from .metrics import scores_by_facet

        figures = {"out_of_fold": scores_by_facet(Y, P, taxonomy, thresholds), "folds": threshold_folds}
    else:
        thresholds = {lb.id: lb.threshold or DEFAULT_THRESHOLD for lb in taxonomy.labels}
        facet_th = {}
    fm = fit(texts, Y, taxonomy, params, num_rounds, tfidf_params)
    forest = flatten_boosters([(b.dump_model(), fm.booster_outputs[k]) for k, b in fm.boosters.items()],
                              fm.n_outputs, fm.bias)
    manifest = _layout_manifest(fm, taxonomy, thresholds)
    from . import __version__

    versions = {"tagger": __version__}
    for pkg in ("lightgbm", "scikit-learn", "nltk", "numpy", "snowballstemmer"):
        try:
            versions[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            versions[pkg] = None
    manifest.update({
        "taxonomy_name": taxonomy.name,
        "taxonomy_fingerprint": taxonomy.fingerprint(),
        "corpus_sha256": corpus_hash(records),
        "corpus_size": len(records),
        "label_counts": {lb: int(c) for lb, c in zip(taxonomy.label_ids, Y.sum(axis=0))},
        "facet_thresholds": facet_th,
        "parameters": {"lightgbm": {**LGBM_PARAMS, **(params or {})}, "num_rounds": num_rounds,
                       "tfidf": {**__import__("tagger.features", fromlist=["x"]).DEFAULT_TFIDF, **(tfidf_params or {})},
                       "threshold_folds": threshold_folds, "shrink_k": SHRINK_K,
                       "linear_base": {"C": LINEAR_C, "folds": LINEAR_FOLDS, "solver": "liblinear", "penalty": "l2"}},
        "n_features": fm.features.n_features,
        "n_trees": int(forest.n_trees),
        "figures": figures,
        "versions": versions,
        "created": created or time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    })
    write_model_dir(out_dir, manifest, fm, forest)
    return manifest


def save_linear(path, W, b) -> None:
    """Write the linear base as ``linear.npz`` (plain arrays, float64)."""
    import numpy as np

    with open(path, "wb") as fh:
        np.savez_compressed(fh, W=W, b=b)


def load_linear(path):
    """``(W, b)`` from ``linear.npz``, loaded without pickle."""
    import numpy as np

    with np.load(path, allow_pickle=False) as z:
        return z["W"], z["b"]


def _same_training(old_manifest_path, new: dict) -> bool:
    """True when the old model was trained on the same corpus, taxonomy and parameters."""
    try:
        old = json.loads(Path(old_manifest_path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    keys = ("corpus_sha256", "taxonomy_fingerprint", "parameters", "format_version")
    return all(old.get(k) == new.get(k) for k in keys)


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


def write_model_dir(out_dir, manifest: dict, fm: FittedModel, forest) -> None:
    """Write all model files into a temporary sibling of ``out_dir``, then swap it in.

    Files not produced by training (e.g. a model card ``README.md`` written by
    ``tagger evaluate --card``) are carried over from the old directory.
    """
    out = Path(out_dir)
    check_out_dir(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.new-", dir=out.parent))
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o777 & ~umask)  # mkdtemp makes 0700; a model directory is ordinary data
    try:
        (tmp / "boosters").mkdir()
        for stem, b in fm.boosters.items():
            (tmp / "boosters" / f"{stem}.txt").write_text(b.model_to_string(), encoding="utf-8")
        with open(tmp / "features.json", "w", encoding="utf-8") as fh:
            dump_json(fm.features.to_json(), fh)
        forest.save(tmp / "trees.npz")
        if fm.linear is not None:
            save_linear(tmp / "linear.npz", *fm.linear)
        with open(tmp / "manifest.json", "w", encoding="utf-8") as fh:
            json.dump(manifest, fh, ensure_ascii=False, indent=1, sort_keys=True)
            fh.write("\n")
        if out.is_dir() and (out / "README.md").is_file() and _same_training(out / "manifest.json", manifest):
            shutil.copy2(out / "README.md", tmp / "README.md")  # the card still describes this model
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
