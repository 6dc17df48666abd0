"""The pinned peers of `tagger evaluate --baseline` and the paired bootstrap."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tagger.evaluation.peers import best_global_threshold, plain_lr, svm
from tagger.evaluation.metrics import paired_bootstrap

TEXTS = ["images of cats and convolution networks for pixels"] * 12 + ["speech audio waveform and spoken words"] * 12


def test_peers_learn_two_separable_topics():
    Y = np.array([[1, 0]] * 12 + [[0, 1]] * 12)
    for peer in (plain_lr, svm):
        D = peer(TEXTS, Y, ["convolution networks on images", "spoken audio words"])
        assert D.tolist() == [[1, 0], [0, 1]], peer.__name__


def test_a_label_constant_in_training_is_predicted_constant():
    Y = np.array([[1, 0]] * 12 + [[1, 1]] * 12)
    D = plain_lr(TEXTS, Y, ["anything at all"])
    assert D[0, 0] == 1


def test_global_threshold_maximises_micro_f1():
    Y = np.array([[1, 0], [0, 1], [1, 1]])
    S = np.array([[0.3, -0.6], [-0.2, 0.4], [0.5, 0.1]])
    # every t in (-0.2, 0.1] separates them perfectly: the one nearest 0 is taken
    assert best_global_threshold(Y, S) == 0.0
    assert best_global_threshold(Y, S - 0.5) == -0.4


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000))
def test_paired_bootstrap_interval_holds_the_difference(seed):
    rng = np.random.default_rng(seed)
    Y = rng.integers(0, 2, size=(40, 5))
    A = np.where(rng.random((40, 5)) < 0.8, Y, 1 - Y)
    B = np.where(rng.random((40, 5)) < 0.6, Y, 1 - Y)
    c = paired_bootstrap(Y, A, B, n_boot=300, seed=seed)
    assert c["lo"] <= c["diff"] <= c["hi"] and c["documents"] == 40
    same = paired_bootstrap(Y, A, A, n_boot=50)
    assert same == {"diff": 0.0, "lo": 0.0, "hi": 0.0, "documents": 40}
