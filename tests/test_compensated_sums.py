"""The compensated sums of the kernel passes: order-independent, and compiled bit for bit as NumPy spells them."""

import math

import numpy as np
import pytest

from kernelmaps._numba.compensated import CompensatedSum, two_sum_into


def test_compensated_sums_do_not_depend_on_the_order():
    """The block products summed in any order, or merged from any split, give the correctly rounded sum."""
    rng = np.random.default_rng(6)
    terms = rng.standard_normal((200, 40)) * 10.0 ** rng.integers(-8, 8, size=(200, 1))
    forward = CompensatedSum((40,))
    for term in terms:
        forward.add(term)
    halves = [CompensatedSum((40,)), CompensatedSum((40,))]
    for index in rng.permutation(200):
        halves[index % 2].add(terms[index])
    merged = halves[1].merge(halves[0]).result()
    exact = np.array([math.fsum(column) for column in terms.T])
    np.testing.assert_array_equal(forward.result(), exact)
    np.testing.assert_array_equal(merged, exact)
    assert not np.array_equal(terms.sum(axis=0), terms[::-1].sum(axis=0))  # plain sums do depend on it


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_compiled_two_sum_is_numpys_bit_for_bit(dtype):
    """The compiled step of the compensated sums against the same operations in NumPy."""
    rng = np.random.default_rng(8)
    value, error = np.zeros((300, 7)), np.zeros((300, 7))
    reference_value, reference_error = value.copy(), error.copy()
    for _ in range(40):
        term = (rng.standard_normal((300, 7)) * 10.0 ** rng.integers(-8, 8)).astype(dtype)
        carried = rng.standard_normal((300, 7)) * 1e-17
        two_sum_into(value, error, term, carried)
        total = reference_value + term
        virtual = total - reference_value
        reference_error += (reference_value - (total - virtual)) + (term - virtual)
        reference_error += carried
        reference_value = total
    np.testing.assert_array_equal(value, reference_value)
    np.testing.assert_array_equal(error, reference_error)
    assert np.abs(error).max() > 0  # the error terms are carried, not cancelled by reassociation
    with pytest.raises(TypeError, match="C-contiguous float64"):
        two_sum_into(np.zeros(3, np.float32), np.zeros(3, np.float32), np.ones(3))
