"""pyopencl.array arithmetic through Ferry, checked against numpy."""

import numpy as np
import pytest


@pytest.fixture(scope="module")
def operands(cl, queue):
    import pyopencl.array as cla

    rng = np.random.default_rng(7)
    a = rng.uniform(0.5, 2.0, 50_000).astype(np.float32)
    b = rng.uniform(0.5, 2.0, 50_000).astype(np.float32)
    return a, b, cla.to_device(queue, a), cla.to_device(queue, b)


@pytest.mark.parametrize(
    "name, host, device",
    [
        ("add", lambda a, b: a + b, lambda x, y: x + y),
        ("subtract", lambda a, b: a - b, lambda x, y: x - y),
        ("multiply", lambda a, b: a * b, lambda x, y: x * y),
        ("divide", lambda a, b: a / b, lambda x, y: x / y),
        ("power", lambda a, b: a**b, lambda x, y: x**y),
        ("scalar", lambda a, b: 3 * a - 1.5, lambda x, y: 3 * x - 1.5),
    ],
)
def test_elementwise_arithmetic_matches_numpy(operands, name, host, device):
    a, b, x, y = operands
    np.testing.assert_allclose(device(x, y).get(), host(a, b), rtol=2e-6, err_msg=name)


def test_sin_matches_numpy(operands):
    import pyopencl.clmath as clmath

    a, _, x, _ = operands
    np.testing.assert_allclose(clmath.sin(x).get(), np.sin(a), rtol=1e-6, atol=1e-7)


def test_integer_arrays_are_exact(queue):
    import pyopencl.array as cla

    a = np.arange(-5000, 5000, dtype=np.int64)
    x = cla.to_device(queue, a)
    np.testing.assert_array_equal((x * 3 + 7).get(), a * 3 + 7)
    np.testing.assert_array_equal((x * x - abs(x)).get(), a * a - np.abs(a))
