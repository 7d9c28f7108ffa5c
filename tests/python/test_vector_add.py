"""A raw kernel through Ferry, checked against numpy."""

import numpy as np

SOURCE = """
kernel void vector_add(global const float* a, global const float* b, global float* c) {
  size_t i = get_global_id(0);
  c[i] = a[i] + b[i];
}
"""


def test_vector_add_matches_numpy(cl, ctx, queue):
    rng = np.random.default_rng(1)
    n = 100_003  # not a multiple of anything convenient
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    mf = cl.mem_flags
    a_buf = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)
    b_buf = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=b)
    c_buf = cl.Buffer(ctx, mf.WRITE_ONLY, a.nbytes)
    program = cl.Program(ctx, SOURCE).build()
    kernel = cl.Kernel(program, "vector_add")
    kernel(queue, (n,), None, a_buf, b_buf, c_buf)
    c = np.empty_like(a)
    cl.enqueue_copy(queue, c, c_buf)
    queue.finish()
    np.testing.assert_array_equal(c, a + b)


def test_buffers_round_trip_through_copies(cl, ctx, queue):
    data = np.arange(1 << 20, dtype=np.uint32)
    mf = cl.mem_flags
    src = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=data)
    dst = cl.Buffer(ctx, mf.READ_WRITE, data.nbytes)
    cl.enqueue_copy(queue, dst, src)
    back = np.zeros_like(data)
    cl.enqueue_copy(queue, back, dst, is_blocking=True)
    np.testing.assert_array_equal(back, data)
