"""Sorting through Ferry: RadixSort and BitonicSort against numpy.sort."""

import numpy as np


def test_radix_sort_matches_numpy(ctx, queue):
    import pyopencl.array as cla
    from pyopencl.algorithm import RadixSort

    sort = RadixSort(ctx, "unsigned *ary", key_expr="ary[i]", sort_arg_names=["ary"], key_dtype=np.uint32)
    a = np.random.default_rng(8).integers(0, 2**32, 100_000, dtype=np.uint64).astype(np.uint32)
    (result,), event = sort(cla.to_device(queue, a), key_bits=32)
    event.wait()
    np.testing.assert_array_equal(result.get(), np.sort(a))


def test_bitonic_sort_matches_numpy(ctx, queue):
    import pyopencl.array as cla
    from pyopencl.bitonic_sort import BitonicSort

    sort = BitonicSort(ctx)
    a = np.random.default_rng(9).standard_normal(2**15).astype(np.float32)
    x = cla.to_device(queue, a)
    result, event = sort(x, axis=0)
    event.wait()
    np.testing.assert_array_equal(result.get(), np.sort(a))
