"""Timing statistics and the noise-aware acceptance rule, on synthetic sample sets."""

from __future__ import annotations

import numpy as np
import pytest

from asmevo.device.timing import AcceptRule, Samples, accept_faster, paired_samples


def S(xs):
    return Samples(tuple(float(x) for x in xs))


def test_statistics():
    s = S([10, 11, 9, 10, 10])
    assert s.median == 10 and s.spread == 2 and s.n == 5
    assert s.cv == pytest.approx(np.std([10, 11, 9, 10, 10], ddof=1) / 10)
    with pytest.raises(ValueError):
        S([])
    with pytest.raises(ValueError):
        S([1.0, float("nan")])
    with pytest.raises(ValueError):
        S([1.0, -2.0])


def test_clear_speedup_accepted():
    k0 = S([100, 100.5, 99.8, 100.2, 100.1])
    cand = S([90, 90.2, 89.9, 90.1, 90.0])
    d = accept_faster(k0, k0, cand)
    assert d.accepted and d.s_candidate == pytest.approx(100.1 / 90.0, rel=1e-3)


def test_within_noise_refused():
    k0 = S([98, 99, 100, 101, 102])            # cv about 1.6 %
    cand = S([97.5, 98.5, 99.5, 100.5, 101.5])  # 0.5 % faster: inside k*cv
    d = accept_faster(k0, k0, cand)
    assert not d.accepted and "required" in d.reason


def test_too_noisy_refused_even_if_much_faster():
    k0 = S([100, 140, 80, 120, 95])
    cand = S([50, 52, 49, 51, 50])
    d = accept_faster(k0, k0, cand)
    assert not d.accepted and "too noisy" in d.reason


def test_too_few_samples_refused():
    d = accept_faster(S([100] * 4), S([100] * 4), S([50] * 4))
    assert not d.accepted and "too few" in d.reason


def test_parent_relative_and_floor():
    k0 = S([100] * 5)
    parent = S([80] * 5)               # parent already 1.25x
    cand = S([79.9] * 5)               # 0.1 % faster than parent: below eps 0.2 %
    assert not accept_faster(k0, parent, cand).accepted
    assert accept_faster(k0, parent, S([79.0] * 5)).accepted
    slower = S([101] * 5)              # floor: never accept slower than K0
    assert not accept_faster(k0, S([102] * 5), slower).accepted
    assert accept_faster(k0, S([102] * 5), slower, AcceptRule(s_floor=0.9)).accepted


def test_paired_samples_interleave():
    order = []

    def mk(tag, t):
        def f():
            order.append(tag)
            return t
        return f
    a, b = paired_samples([mk("a", 2.0), mk("b", 3.0)], n=3, warmup=1)
    assert order == ["a", "b"] * 4
    assert a.times_us == (2.0, 2.0, 2.0) and b.median == 3.0
