"""numba-cuda: out = a + b over 4M float32 (argv[1] sets n), one thread per element.

The inputs are small multiples of 1/2, so the sums are exact: the device's result must equal
numpy's bit for bit.
"""
import sys

import numpy as np

from _ferry_numba import cuda, device_word, fail

NAME = "numba_vector_add"


@cuda.jit
def vector_add(a, b, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = a[i] + b[i]


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1 << 22
    where = device_word(NAME)
    index = np.arange(n, dtype=np.int64)
    a = ((index % 1000) * 0.5).astype(np.float32)
    b = ((index % 777) * 0.5).astype(np.float32)
    d_a, d_b = cuda.to_device(a), cuda.to_device(b)
    d_out = cuda.device_array(n, dtype=np.float32)
    threads = 256
    vector_add[(n + threads - 1) // threads, threads](d_a, d_b, d_out)
    out = d_out.copy_to_host()
    want = a + b
    bad = np.flatnonzero(out != want)
    if bad.size:
        i = int(bad[0])
        fail(NAME, f"{bad.size} wrong element(s), the first out[{i}] = {out[i]!r}, want {want[i]!r}")
    print(f"{NAME} n={n} device={where} max_err=0 checksum={float(np.sum(out, dtype=np.float64)):.2f}")


if __name__ == "__main__":
    main()
