"""numba-cuda reductions: each block sums its part in shared memory (a tree with
syncthreads), then adds its sum to a global total with cuda.atomic.add and its largest value
to a global maximum with cuda.atomic.max. argv[1] sets n (default 4M).

The values are integers (int64 sums, int32 max), so the results are exact whatever order the
blocks finish in, and must equal numpy's.
"""
import sys

import numpy as np

from _ferry_numba import cuda, device_word, fail  # first: it sets numba's environment
from numba import int32, int64  # noqa: E402

NAME = "numba_reduction"
THREADS = 256


@cuda.jit
def block_sums(values, partial, total, largest):
    shared = cuda.shared.array(THREADS, dtype=int64)
    best = cuda.shared.array(THREADS, dtype=int32)
    tid = cuda.threadIdx.x
    i = cuda.grid(1)
    v = values[i] if i < values.size else 0
    shared[tid] = v
    best[tid] = v
    cuda.syncthreads()
    step = THREADS // 2
    while step > 0:
        if tid < step:
            shared[tid] += shared[tid + step]
            if best[tid + step] > best[tid]:
                best[tid] = best[tid + step]
        cuda.syncthreads()
        step //= 2
    if tid == 0:
        partial[cuda.blockIdx.x] = shared[0]
        cuda.atomic.add(total, 0, shared[0])
        cuda.atomic.max(largest, 0, best[0])


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1 << 22
    where = device_word(NAME)
    # Deterministic values in [0, 2^20), from a multiplicative hash of the index.
    index = np.arange(n, dtype=np.uint64)
    values = (((index * np.uint64(2654435761)) >> np.uint64(7)) % np.uint64(1 << 20)).astype(np.int32)
    blocks = (n + THREADS - 1) // THREADS
    d_values = cuda.to_device(values)
    d_partial = cuda.device_array(blocks, dtype=np.int64)
    d_total = cuda.to_device(np.zeros(1, dtype=np.int64))
    d_largest = cuda.to_device(np.zeros(1, dtype=np.int32))
    block_sums[blocks, THREADS](d_values, d_partial, d_total, d_largest)
    partial = d_partial.copy_to_host()
    total = int(d_total.copy_to_host()[0])
    largest = int(d_largest.copy_to_host()[0])

    padded = np.zeros(blocks * THREADS, dtype=np.int64)
    padded[:n] = values
    want_partial = padded.reshape(blocks, THREADS).sum(axis=1)
    bad = np.flatnonzero(partial != want_partial)
    if bad.size:
        b = int(bad[0])
        fail(NAME, f"block {b}'s shared-memory sum is {partial[b]}, want {want_partial[b]}")
    want_total = int(values.sum(dtype=np.int64))
    if total != want_total:
        fail(NAME, f"cuda.atomic.add total is {total}, want {want_total}")
    want_largest = int(values.max())
    if largest != want_largest:
        fail(NAME, f"cuda.atomic.max is {largest}, want {want_largest}")
    print(f"{NAME} n={n} device={where} blocks={blocks} total={total} max={largest}")


if __name__ == "__main__":
    main()
