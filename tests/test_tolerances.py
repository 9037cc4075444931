"""tests/tolerances.py, the bounds every model-output comparison uses: its arithmetic by hand, and each
check fails where it should (a helper that cannot fail would make every test using it pass)."""

import numpy as np
import pytest

import tolerances
from tolerances import EPS32, K


def test_the_bound_by_hand():
    assert EPS32 == 1 / 8388608
    assert tolerances.bound(1, 256) == pytest.approx(4 * 256 / 8388608, rel=1e-15)
    # 12 summed tokens and a value of -40: K x C x eps x 12 + eps x 40; no token (an empty sum) counts as one
    assert tolerances.bound([12, 0], 128, [-40.0, 0.0]).tolist() == pytest.approx([(K * 128 * 12 + 40) * EPS32, K * 128 * EPS32])


def test_each_check_fails_just_beyond_its_bound():
    reference = np.array([-3.0, -12.5])
    allowed = tolerances.bound([1, 5], 128, reference)
    tolerances.assert_near_float64(reference + 0.99 * allowed, reference, [1, 5], 128)
    with pytest.raises(AssertionError, match="1 of 2 values farther from the float64 value"):
        tolerances.assert_near_float64(reference + [0, 1.01 * allowed[1]], reference, [1, 5], 128)
    tolerances.assert_two_paths_agree(reference + 0.99 * allowed, reference - 0.99 * allowed, [1, 5], 128)
    with pytest.raises(AssertionError, match="differ by more than twice"):
        tolerances.assert_two_paths_agree(reference + 1.1 * allowed, reference - 1.1 * allowed, [1, 5], 128)


def test_decisions_must_agree_where_the_margin_is_clear_only():
    step = tolerances.bound(1, 128, 2.0)
    reference = np.array([[-1.0, -1.0 - 3 * step], [-2.0, -2.0 - step]])  # a clear winner; a margin inside rounding
    tolerances.assert_same_decisions([[0, -1], [-2.0 - step, -2.0]], reference, 1, 128)  # the second may flip
    with pytest.raises(AssertionError, match=r"rows \[0\] decide otherwise"):
        tolerances.assert_same_decisions([[-1, 0], [-2.0, -2.0 - step]], reference, 1, 128)
    tolerances.assert_same_decisions([[-1, 0], [-2.0, -2.0]], reference, 1, 128, float32_reference=True)  # 3 bounds < 4
