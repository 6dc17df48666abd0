"""Progress of long commands: a bar on a terminal, a line per step otherwise (train,
evaluate); a count after 2 s, on a terminal only (label, bib)."""

import io
from pathlib import Path

from click.testing import CliRunner

from tagger.cli import cli
from tagger.cli._common import Progress, Ticker

from conftest import write_jsonl


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_progress_is_a_line_per_step_off_a_terminal_and_a_bar_on_one():
    log = io.StringIO()
    p = Progress("training", stream=log)
    p(1, 3, "out-of-fold pass, fold 1 of 2")
    p(3, 3)
    p.close()
    assert log.getvalue() == "tagger: training: out-of-fold pass, fold 1 of 2\ntagger: training: 3 of 3\n"
    tty = Terminal()
    p = Progress("training", stream=tty)
    p(1, 2, "fold 1")
    p(2, 2, "fold 2")
    p.close()
    assert "training" in tty.getvalue() and "100%" in tty.getvalue() and "tagger: training:" not in tty.getvalue()


def test_ticker_shows_after_two_seconds_on_a_terminal_only():
    now = [0.0]
    tty = Terminal()
    t = Ticker("records tagged", stream=tty, clock=lambda: now[0])
    t.update(100)
    assert tty.getvalue() == ""  # not in the first 2 s
    now[0] = 2.5
    t.update(12345)
    now[0] = 2.6
    t.update(12400)  # not again within 0.2 s
    assert tty.getvalue() == "\rtagger: 12,345 records tagged\x1b[K"
    t.clear()
    assert tty.getvalue().endswith("\r\x1b[K")
    log = io.StringIO()
    off = Ticker("records tagged", stream=log, clock=lambda: now[0] + 10)
    off.update(5)
    off.clear()
    assert log.getvalue() == ""


def test_train_and_evaluate_say_each_step_when_not_on_a_terminal(tmp_path, corpus_sample):
    rows = [{k: v for k, v in r.items() if k != "_line"} for r in corpus_sample[::20]]
    corpus = write_jsonl(tmp_path / "c.jsonl", rows)
    r = CliRunner().invoke(cli, ["train", "--corpus", str(corpus), "--out", str(tmp_path / "m"), "--folds", "2",
                                 "--rounds", "3"])
    assert r.exit_code == 0, r.output
    steps = [ln for ln in r.output.splitlines() if ln.startswith("tagger: training: ")]
    assert steps == ["tagger: training: out-of-fold pass, fold 1 of 2", "tagger: training: out-of-fold pass, fold 2 of 2",
                     f"tagger: training: final model on all {len(rows)} abstracts"]
    assert "trained 40 labels on" in r.output
    case = Path(__file__).parent / "bib_eval_case"  # a bib-eval set of 6 entries with its own shared folder
    r = CliRunner(env={"TAGGER_SHARED": str(case / "shared")}).invoke(
        cli, ["evaluate", "--corpus", str(corpus), "--folds", "2", "--baseline", "--bib-eval", str(case / "bib-eval.jsonl")])
    assert r.exit_code == 0, r.output
    steps = [ln for ln in r.output.splitlines() if ln.startswith("tagger: 2-fold cross-validation: ")]
    inner = [f"fold {f} of 2: tagger, inner fold {n} of 3 done" for f in (1, 2) for n in (1, 2, 3)]
    assert [s.split(": ", 2)[2] for s in steps] == [f"{len(rows)} documents, 2 folds of 3 inner folds each; "
                                                    "starting fold 1 of 2", *inner[:3],
                                                    "fold 1 of 2: tagger", "fold 1 of 2: baseline",
                                                    "fold 1 of 2: plain_lr", "fold 1 of 2: svm", *inner[3:],
                                                    "fold 2 of 2: tagger", "fold 2 of 2: baseline",
                                                    "fold 2 of 2: plain_lr", "fold 2 of 2: svm",
                                                    "bib-eval entries: tagger", "bib-eval entries: baseline",
                                                    "bib-eval entries: plain_lr", "bib-eval entries: svm"]
