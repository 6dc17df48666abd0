"""Background retraining for tagger annotate --retrain-every: a child process trains on the
corpus file and ranks the queue while the session goes on."""

import json
import time

from tagger.annotate.pool import pool_rows
from tagger.annotate.queue import score_rows
from tagger.annotate.retrain import MIN_EXAMPLES, Assistant
from tagger.annotate.session import Session
from tagger.annotate.store import CorpusStore
from tagger.taxonomy import load_taxonomy

from conftest import CORPUS, EXAMPLES, ROOT


def test_retrain_in_the_background_reranks_the_queue(tmp_path):
    tax = load_taxonomy(ROOT / "taxonomy.yaml")
    seed = [json.loads(line) for line in open(CORPUS, encoding="utf-8")][:MIN_EXAMPLES - 1]
    out = tmp_path / "c.jsonl"
    with open(out, "w", encoding="utf-8") as fh:
        for r in seed:
            fh.write(json.dumps(r) + "\n")
    rows = list(pool_rows([str(EXAMPLES / "iclr-2026-abstracts.txt")]))
    a = Assistant(None, ROOT / "taxonomy.yaml", active=True, retrain_every=2)
    s = Session(tax, CorpusStore(str(out)), rows, "me", "active", suggest=a.suggest)
    assert s.labels == [] and not s.suggested  # no model yet: nothing to suggest
    s.toggle("modality:text")
    s.done()
    assert a.tick(s) == "" and a.proc is None  # 1 new example: not due
    s.done()  # 11 in the corpus, 2 new: due
    assert a.tick(s) == "retraining on 11 examples..." and a.proc is not None
    s.done()  # the session goes on meanwhile
    end = time.monotonic() + 300
    while a.proc is not None and time.monotonic() < end:
        time.sleep(0.2)
        status = a.tick(s)
    assert status == "model retrained on 11 examples, queue re-ranked", status
    try:
        assert a.model is not None and a.model.labels == tax.label_ids
        # the queue (but the record on screen) is in the new model's order of uncertainty
        rest = s.pending[1:]
        unc = [x[0] for x in score_rows(a.model, rest)]
        assert unc == sorted(unc, reverse=True)
        assert a.suggest(s.current) == a.model.predict([s.current])[0].tags
        assert a.since == 1  # the example saved during the retrain counts toward the next one
    finally:
        workdir = a.workdir
        a.close()
    import os

    assert not os.path.exists(workdir)


def test_a_failed_retrain_is_a_status_line(tmp_path):
    tax = load_taxonomy(ROOT / "taxonomy.yaml")
    out = tmp_path / "c.jsonl"
    with open(out, "w", encoding="utf-8") as fh:
        for i in range(MIN_EXAMPLES):  # texts with no term seen twice: the TF-IDF vocabulary is empty
            fh.write(json.dumps({"id": f"x{i}", "abstract": f"t{i}", "labels": ["modality:text"],
                                 "annotator": "me"}) + "\n")
    rows = [{"id": "p1", "title": "", "abstract": "one"}, {"id": "p2", "title": "", "abstract": "two"}]
    a = Assistant(None, ROOT / "taxonomy.yaml", active=True, retrain_every=1)
    s = Session(tax, CorpusStore(str(out)), rows, "me", "active")
    s.done()
    a.tick(s)
    end = time.monotonic() + 120
    while a.proc is not None and time.monotonic() < end:
        time.sleep(0.2)
        status = a.tick(s)
    a.close()
    assert status.startswith("retraining failed: ValueError: ") and a.model is None, status
