"""The model behind ``tagger annotate --order active`` and ``--suggest``, and its retraining
in a background process.

Every ``retrain_every`` new examples (and once the corpus holds at least
:data:`MIN_EXAMPLES`), a child process (``python -m tagger.annotate.retrain SPEC``) trains a
model on the corpus file as it is then (``tagger.model.training.train`` with no threshold pass,
thresholds at the taxonomy's or 0.5, to keep it quick), and with it scores the records still
queued (:func:`tagger.annotate.queue.score_rows`).  The screen keeps answering meanwhile; it
polls the child twice a second and, when it is done, re-ranks the queue by the new scores
and suggests with the new model.  The models live in a temporary directory removed at the end.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile

#: no model is trained on fewer hand-tagged examples
MIN_EXAMPLES = 10


class Assistant:
    """``model``: a loaded :class:`tagger.model.Model` (or None); ``taxonomy_path``: the
    taxonomy file the retrained models use; ``active``: re-rank the queue by uncertainty;
    ``retrain_every``: new examples between retrains (0: never)."""

    def __init__(self, model, taxonomy_path, active, retrain_every=0, min_words=None):
        self.model, self.taxonomy_path = model, str(taxonomy_path)
        self.active, self.retrain_every, self.min_words = active, retrain_every, min_words
        self.proc, self.workdir, self.round = None, None, 0
        self.since = 0  # new examples saved since the last retrain started
        self.last_added = 0
        self.status = ""

    # -- the model's view ---------------------------------------------------------------
    def suggest(self, row) -> list[str] | None:
        """The labels the model predicts for a pool row, or None (no model yet, or it abstains)."""
        if self.model is None:
            return None
        pred = self.model.predict([row], min_words=self.min_words)[0]
        return None if pred.reason else list(pred.tags)

    def ranking(self, rows) -> dict:
        """``{id: uncertainty}`` of ``rows`` by the current model (abstained ones left out)."""
        from .queue import BATCH, score_rows

        out = {}
        for i in range(0, len(rows), BATCH):
            part = rows[i:i + BATCH]
            for r, s in zip(part, score_rows(self.model, part, self.min_words)):
                if s is not None:
                    out[r["id"]] = s[0]
        return out

    # -- retraining ---------------------------------------------------------------------
    def tick(self, session) -> str:
        """Called by the screen twice a second: collect a finished retrain, start one when
        due; returns a status line."""
        self.since += session.added - self.last_added
        self.last_added = session.added
        if self.proc is not None and self.proc.poll() is not None:
            self._collect(session)
        if (self.proc is None and self.retrain_every and self.since >= self.retrain_every
                and len(session.store.rows) >= MIN_EXAMPLES):
            self._start(session)
        return self.status

    def _start(self, session):
        if self.workdir is None:
            self.workdir = tempfile.mkdtemp(prefix="tagger-annotate-")
        self.round += 1
        d = os.path.join(self.workdir, str(self.round))
        os.mkdir(d)
        with open(os.path.join(d, "corpus.jsonl"), "w", encoding="utf-8") as fh:
            for r in session.store.rows:
                fh.write(json.dumps(r, ensure_ascii=False) + "\n")
        with open(os.path.join(d, "pool.jsonl"), "w", encoding="utf-8") as fh:
            for r in session.pending:
                fh.write(json.dumps({"id": r["id"], "title": r.get("title", ""), "abstract": r["abstract"]},
                                    ensure_ascii=False) + "\n")
        spec = {"taxonomy": self.taxonomy_path, "dir": d, "min_words": self.min_words}
        with open(os.path.join(d, "spec.json"), "w", encoding="utf-8") as fh:
            json.dump(spec, fh)
        self.n_training = len(session.store.rows)
        self.log = open(os.path.join(d, "log.txt"), "wb")
        self.proc = subprocess.Popen([sys.executable, "-m", "tagger.annotate.retrain", os.path.join(d, "spec.json")],
                                     stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT,
                                     start_new_session=True)
        self.since = 0
        self.status = f"retraining on {self.n_training} examples..."

    def _collect(self, session):
        from ..model import Model

        d = os.path.join(self.workdir, str(self.round))
        code, self.proc = self.proc.returncode, None
        self.log.close()
        if code != 0:
            with open(os.path.join(d, "log.txt"), encoding="utf-8", errors="replace") as fh:
                last = (fh.read().strip().splitlines() or ["no output"])[-1]
            self.status = f"retraining failed: {last[:120]}"
            return
        self.model = Model.load(os.path.join(d, "model"))
        if self.active:
            with open(os.path.join(d, "ranking.json"), encoding="utf-8") as fh:
                session.reorder(json.load(fh))
        self.status = f"model retrained on {self.n_training} examples" + (", queue re-ranked" if self.active else "")

    def close(self) -> None:
        """Stop a retrain still running and remove the temporary models."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        if self.proc is not None:
            self.log.close()
        if self.workdir:
            shutil.rmtree(self.workdir, ignore_errors=True)


def _child(spec_path: str) -> int:
    """The background process: train on ``corpus.jsonl``, score ``pool.jsonl``, write
    ``model/`` and ``ranking.json`` beside the spec."""
    with open(spec_path, encoding="utf-8") as fh:
        spec = json.load(fh)
    from ..corpus import load_corpus
    from ..model import Model
    from ..taxonomy import load_taxonomy
    from ..model.training import train

    d = spec["dir"]
    tax = load_taxonomy(spec["taxonomy"])
    train(load_corpus(os.path.join(d, "corpus.jsonl")), tax, os.path.join(d, "model"), threshold_folds=0)
    model = Model.load(os.path.join(d, "model"))
    rows = [json.loads(line) for line in open(os.path.join(d, "pool.jsonl"), encoding="utf-8")]
    ranking = Assistant(model, spec["taxonomy"], True, min_words=spec["min_words"]).ranking(rows)
    tmp = os.path.join(d, "ranking.json.tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump(ranking, fh)
    os.replace(tmp, os.path.join(d, "ranking.json"))
    return 0


if __name__ == "__main__":  # pragma: no cover  (run as the background process)
    try:
        sys.exit(_child(sys.argv[1]))
    except Exception as e:  # one line for the screen's status
        print(f"{type(e).__name__}: {e}", flush=True)
        sys.exit(1)
