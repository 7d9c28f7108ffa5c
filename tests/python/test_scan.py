"""Scans through Ferry: pyopencl.scan kernels and cumsum."""

import numpy as np


def test_inclusive_and_exclusive_scans_match_numpy(ctx, queue):
    import pyopencl.array as cla
    from pyopencl.scan import ExclusiveScanKernel, InclusiveScanKernel

    a = np.random.default_rng(3).integers(0, 100, 123_457).astype(np.int32)
    inclusive = InclusiveScanKernel(ctx, np.int32, "a+b", neutral="0")
    exclusive = ExclusiveScanKernel(ctx, np.int32, "a+b", neutral="0")
    x = cla.to_device(queue, a)
    np.testing.assert_array_equal(inclusive(x.copy()).get(), np.cumsum(a))
    expected = np.concatenate([[0], np.cumsum(a)[:-1]]).astype(np.int32)
    np.testing.assert_array_equal(exclusive(x.copy()).get(), expected)


def test_cumsum_matches_numpy(queue):
    import pyopencl.array as cla

    a = np.random.default_rng(4).uniform(0, 1, 50_000)
    np.testing.assert_allclose(cla.cumsum(cla.to_device(queue, a)).get(), np.cumsum(a), rtol=1e-10)


def test_generic_scan_with_segments(ctx, queue):
    import pyopencl.array as cla
    from pyopencl.scan import GenericScanKernel

    # Running maximum: a scan with a non-additive operator.
    scan = GenericScanKernel(ctx, np.int32, arguments="__global int *ary, __global int *out",
                             input_expr="ary[i]", scan_expr="max(a, b)", neutral="INT_MIN",
                             output_statement="out[i] = item;")
    a = np.random.default_rng(5).integers(-1000, 1000, 30_000).astype(np.int32)
    x = cla.to_device(queue, a)
    out = cla.empty_like(x)
    scan(x, out)
    np.testing.assert_array_equal(out.get(), np.maximum.accumulate(a))
