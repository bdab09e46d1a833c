"""The Nyström machines keep K(X, C) when it fits: the same coefficients, bit for bit,
with each later pass reading the kept blocks instead of evaluating the kernel."""

import numpy as np
import pytest

from kernelmaps import NystroemKernelRidge, NystroemKernelRidgeClassifier, NystroemLogisticRegression
from kernelmaps._core.validation import InsufficientMemoryError, available_memory_bytes
from kernelmaps._solvers.kernel_operator import KernelOperator


@pytest.fixture
def data():
    rng = np.random.default_rng(3)
    X = rng.standard_normal((1500, 4))
    return X, np.sin(X[:, 0]) + 0.1 * rng.standard_normal(1500), (X[:, 0] * X[:, 1] > 0).astype(int)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_kept_blocks_give_the_same_products_and_are_not_evaluated_again(data, dtype, monkeypatch):
    X = data[0].astype(dtype)
    C = X[:37].astype(np.float64)
    V = np.random.default_rng(0).standard_normal((37, 3))
    fresh = KernelOperator(X, C, kernel="gaussian", gamma=0.4)
    kept = KernelOperator(X, C, kernel="gaussian", gamma=0.4, keep_blocks=True)
    kept.block = fresh.block = 64  # many blocks, in groups on both threads
    kept.group = fresh.group = 4 * 64
    kept._block_kept = np.zeros(-(-X.shape[0] // 64), dtype=bool)
    expected = fresh.normal_matvec(V)
    np.testing.assert_array_equal(kept.normal_matvec(V), expected)
    assert kept._block_kept.all() and kept.kept.dtype == dtype
    evaluations = []
    original = kept.blocks.block
    monkeypatch.setattr(kept.blocks, "block", lambda rows: evaluations.append(len(rows)) or original(rows))
    np.testing.assert_array_equal(kept.normal_matvec(V), expected)
    np.testing.assert_array_equal(kept @ V, fresh @ V)
    assert evaluations == []


@pytest.mark.parametrize("make, target, entry_bytes", [
    (lambda **kw: NystroemKernelRidge(200, alpha=1e-3, gamma=0.5, random_state=0, **kw), 1, 8),
    (lambda **kw: NystroemKernelRidgeClassifier(200, alpha=1e-3, gamma=0.5, random_state=0, **kw), 2, 8),
    # float64 blocks for the points, float32 blocks for the Hessian products
    (lambda **kw: NystroemLogisticRegression(100, alpha=1e-1, max_iter=40, gamma=0.5, random_state=0, **kw), 2, 12),
    (lambda **kw: NystroemLogisticRegression(100, alpha=1e-1, max_iter=40, gamma=0.5, random_state=0,
                                             hessian_dtype="float64", **kw), 2, 8),
    (lambda **kw: NystroemKernelRidge(200, alpha=1e-3, gamma=0.5, early_stopping=True, random_state=0, **kw), 1, 8),
])
def test_the_fit_is_the_same_with_and_without_the_kept_blocks(data, make, target, entry_bytes):
    X, y = data[0], data[target]
    kept = make(kernel_cache="auto").fit(X, y)
    fresh = make(kernel_cache=None).fit(X, y)
    assert kept.kernel_cache_ == X.shape[0] * kept.n_components_ * entry_bytes
    assert fresh.kernel_cache_ == 0
    np.testing.assert_array_equal(kept.coef_, fresh.coef_)
    np.testing.assert_array_equal(kept.predict(X[:50]), fresh.predict(X[:50]))


def test_the_logistic_fit_keeps_its_float32_hessian_blocks_first(data):
    """A budget for the float32 Hessian blocks alone keeps them alone, and gives the same coefficients, bit
    for bit, as keeping both or neither."""
    X, y = data[0], data[2]
    make = lambda budget: NystroemLogisticRegression(100, alpha=1e-1, gamma=0.5, random_state=0,  # noqa: E731
                                                     kernel_cache=budget).fit(X, y)
    single = X.shape[0] * 100 * 4
    fits = {budget: make(budget) for budget in (None, single, 3 * single - 1, 3 * single)}
    assert [fit.kernel_cache_ for fit in fits.values()] == [0, single, single, 3 * single]
    for fit in fits.values():
        np.testing.assert_array_equal(fit.coef_, fits[None].coef_)


def test_a_float32_logistic_fit_keeps_float32_blocks_once(data):
    """float32 rows are float32 throughout: one set of blocks, 4 bytes per entry."""
    X, y = data[0].astype(np.float32), data[2]
    fit = NystroemLogisticRegression(100, alpha=1e-1, gamma=0.5, random_state=0).fit(X, y)
    assert fit.kernel_cache_ == X.shape[0] * 100 * 4


def test_held_out_blocks_are_kept_only_beside_the_training_rows_float64_blocks(data, monkeypatch):
    """With a budget for the float32 Hessian blocks alone, early stopping's held-out rows keep no float64
    blocks either; with room for both, they do."""
    X, y = data[0], data[2]
    kept = []
    original = NystroemLogisticRegression._operator

    def recording(self, rows, keep_blocks=False):
        kept.append((rows.shape[0], rows.dtype, keep_blocks))
        return original(self, rows, keep_blocks=keep_blocks)

    monkeypatch.setattr(NystroemLogisticRegression, "_operator", recording)
    single = int(0.9 * X.shape[0]) * 100 * 4
    for budget, keeps in ((single, False), (4 * single, True)):
        kept.clear()
        NystroemLogisticRegression(100, alpha=1e-1, gamma=0.5, early_stopping=True, random_state=0,
                                   kernel_cache=budget).fit(X, y)
        held_out = [keep for rows, dtype, keep in kept if dtype == np.float64 and rows < 0.5 * X.shape[0]]
        assert held_out == [keeps], kept


def test_a_budget_below_the_block_evaluates_the_kernel_in_every_pass(data):
    X, y = data[0].astype(np.float32), data[1]
    needed = X.shape[0] * 100 * 4
    assert NystroemKernelRidge(100, random_state=0, kernel_cache=needed).fit(X, y).kernel_cache_ == needed
    assert NystroemKernelRidge(100, random_state=0, kernel_cache=needed - 1).fit(X, y).kernel_cache_ == 0


@pytest.mark.parametrize("bad", [-1, np.nan, np.inf, True, "big", [1e6]])
def test_a_budget_that_is_not_a_budget_is_refused(data, bad):
    with pytest.raises(ValueError, match="kernel_cache must be"):
        NystroemKernelRidge(10, kernel_cache=bad).fit(*data[:2])


def test_a_budget_beyond_the_memory_is_refused_before_any_work(data):
    with pytest.raises(InsufficientMemoryError, match="kernel_cache"):
        NystroemLogisticRegression(10, kernel_cache=4 * available_memory_bytes()).fit(data[0], data[2])
