"""pyopencl.clrandom through Ferry: plausible statistics, reproducible streams, and the
same numbers as the same generator on the native platform."""

import numpy as np
import pytest

N = 1_000_000


@pytest.fixture(params=["philox", "threefry"])
def generator_class(request):
    import pyopencl.clrandom as clrandom

    return {"philox": clrandom.PhiloxGenerator, "threefry": clrandom.ThreefryGenerator}[request.param]


def test_uniform_and_normal_statistics(ctx, queue, generator_class):
    gen = generator_class(ctx, seed=12345)
    u = gen.uniform(queue, N, np.float32).get()
    assert u.min() >= 0.0 and u.max() < 1.0
    assert abs(u.mean() - 0.5) < 0.005
    assert abs(u.std() - np.sqrt(1 / 12)) < 0.005
    g = gen.normal(queue, N, np.float64, mu=2.0, sigma=3.0).get()
    assert abs(g.mean() - 2.0) < 0.03
    assert abs(g.std() - 3.0) < 0.03


def test_same_seed_gives_the_same_stream(ctx, queue, generator_class):
    first = generator_class(ctx, seed=777).uniform(queue, 10_000, np.float32).get()
    second = generator_class(ctx, seed=777).uniform(queue, 10_000, np.float32).get()
    other = generator_class(ctx, seed=778).uniform(queue, 10_000, np.float32).get()
    np.testing.assert_array_equal(first, second)
    assert not np.array_equal(first, other)


def test_stream_equals_the_native_platform(ctx, queue, native_ctx, native_queue, generator_class):
    ferry_gen = generator_class(ctx, seed=4242)
    native_gen = generator_class(native_ctx, seed=4242)
    np.testing.assert_array_equal(ferry_gen.uniform(queue, 100_000, np.float32).get(),
                                  native_gen.uniform(native_queue, 100_000, np.float32).get())
    np.testing.assert_array_equal(ferry_gen.uniform(queue, 50_000, np.int32, a=0, b=1000).get(),
                                  native_gen.uniform(native_queue, 50_000, np.int32, a=0, b=1000).get())
    np.testing.assert_allclose(ferry_gen.normal(queue, 50_000, np.float64).get(),
                               native_gen.normal(native_queue, 50_000, np.float64).get(), rtol=1e-12, atol=1e-12)
