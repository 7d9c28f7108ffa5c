"""Reductions through Ferry: sum, max, dot and a custom ReductionKernel."""

import numpy as np


def test_sum_max_dot_match_numpy(queue):
    import pyopencl.array as cla

    rng = np.random.default_rng(11)
    a = rng.standard_normal(200_001)
    b = rng.standard_normal(200_001)
    x, y = cla.to_device(queue, a), cla.to_device(queue, b)
    np.testing.assert_allclose(cla.sum(x).get(), a.sum(), rtol=1e-10)
    assert cla.max(x).get() == a.max()
    assert cla.min(x).get() == a.min()
    np.testing.assert_allclose(cla.dot(x, y).get(), np.dot(a, b), rtol=1e-10)


def test_integer_sum_is_exact(queue):
    import pyopencl.array as cla

    a = np.arange(1_000_000, dtype=np.int64)
    assert cla.sum(cla.to_device(queue, a)).get() == a.sum()


def test_reduction_kernel_matches_numpy(ctx, queue):
    import pyopencl.array as cla
    from pyopencl.reduction import ReductionKernel

    norm = ReductionKernel(ctx, np.float64, neutral="0", reduce_expr="a+b", map_expr="x[i]*x[i]",
                           arguments="__global const double *x")
    a = np.linspace(-3, 3, 77_777)
    np.testing.assert_allclose(norm(cla.to_device(queue, a)).get(), (a * a).sum(), rtol=1e-12)
