"""The logistic machine's per-row Numba kernels against plain NumPy: the pass's terms, the losses along a step,
and the Hessian weights, over margins from the flat middle to far past exp's range."""

import numpy as np
import pytest

from kernelmaps._solvers.logistic_passes import line_losses, pass_rows, row_weights


def _rows(seed=0, n=700, k=4):
    rng = np.random.default_rng(seed)
    Y = np.where(rng.random((n, k)) < 0.5, 1.0, -1.0)
    F = rng.standard_normal((n, k)) * np.array([0.1, 3.0, 40.0, 900.0])[:k]
    return Y, F, rng.standard_normal(k), rng.random((n, k)), rng


def _reference(Y, F, b, n, weights):
    margin = Y * (F + b)
    s = 1.0 / (1.0 + np.exp(np.clip(margin, -700, 700)))   # sigmoid(-margin)
    scale = 1.0 if weights is None else weights
    W, derivative, loss = s * (1 - s) * scale, -Y * s * scale, np.logaddexp(0.0, -margin) * scale
    return np.hstack([derivative / n, W]), W, np.stack([loss.sum(0), derivative.sum(0), W.sum(0)])


@pytest.mark.parametrize("weighted", [False, True])
def test_pass_rows_gives_numpys_terms(weighted):
    Y, F, b, weights, _ = _rows()
    weights = weights if weighted else None
    U, W, sums = pass_rows(Y, b, 7.0, F, weights)
    expected_U, expected_W, expected_sums = _reference(Y, F, b, 7.0, weights)
    np.testing.assert_allclose(U, expected_U, rtol=1e-13, atol=1e-300)
    np.testing.assert_allclose(W, expected_W, rtol=1e-13, atol=1e-300)
    np.testing.assert_allclose(sums, expected_sums, rtol=1e-12)
    # the loss of a margin of -900 is 900 (no overflow), of +900 about exp(-900): zero
    assert np.all(np.isfinite(U)) and np.all(np.isfinite(sums))


def test_pass_rows_writes_the_weights_in_place_and_takes_a_scalar_intercept():
    Y, F, _, _, _ = _rows(1)
    out = np.full(Y.shape, np.nan)
    _, W, _ = pass_rows(Y, 0.0, 3.0, F, W=out)
    assert W is out
    np.testing.assert_allclose(out, _reference(Y, F, 0.0, 3.0, None)[1], rtol=1e-13, atol=1e-300)


@pytest.mark.parametrize("weighted", [False, True])
def test_line_losses_are_numpys_losses_at_each_multiple(weighted):
    Y, F, _, weights, rng = _rows(2)
    F_step = rng.standard_normal(F.shape) * 5
    t = np.vstack([np.full(4, 1.0), [0.5, 2.0, 3.0, 0.0], rng.random(4)])
    weights = weights if weighted else None
    losses = line_losses(Y, F, F_step, t, weights)
    for row, multiples in enumerate(t):
        loss = np.logaddexp(0.0, -Y * (F - multiples * F_step))
        np.testing.assert_allclose(losses[row], (loss if weights is None else loss * weights).sum(0), rtol=1e-12)


def test_row_weights_have_the_bits_of_the_pass():
    Y, F, _, _, _ = _rows(3)
    np.testing.assert_array_equal(row_weights(Y, F), pass_rows(Y, 0.0, 1.0, F)[1])


def test_a_run_at_zero_takes_no_forward_product_and_gives_the_dense_point():
    from kernelmaps import exact_kernel
    from kernelmaps._solvers.kernel_operator import KernelOperator
    from kernelmaps._solvers.logistic_passes import LogisticPasses

    rng = np.random.default_rng(4)
    X = rng.standard_normal((200, 3))
    Y = np.where(rng.random((200, 2)) < 0.5, 1.0, -1.0)
    K = KernelOperator(X, X[:30], kernel="gaussian", gamma=0.4)
    forwards = []
    sweep = K.sweep
    K.sweep = lambda V, rows_map, n_columns=None: forwards.append(V is not None) or sweep(V, rows_map, n_columns)
    passes = LogisticPasses(K, Y)
    b = np.array([0.3, -0.2])
    dense = exact_kernel(X, X[:30], kernel="gaussian", gamma=0.4)
    for a in (np.zeros((30, 2)), rng.standard_normal((30, 2))):
        point = passes.run(a, b)
        U, _, sums = pass_rows(Y, b, 200.0, dense @ a)
        np.testing.assert_allclose(point.data_gradient, dense.T @ U[:, :2], rtol=1e-10, atol=1e-14)
        np.testing.assert_allclose(point.loss, sums[0] / 200, rtol=1e-12)
        np.testing.assert_allclose(passes.logits, dense @ a + b, rtol=1e-12, atol=1e-14)
    assert forwards == [False, True]
