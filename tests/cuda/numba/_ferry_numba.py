"""Shared by the numba-cuda scripts (issue 24); bench/gpu/cuda.sh runs the others, not this.

Each script prints one result line on stdout and exits 0 only when its results are right.
bench/gpu/cuda.sh compares that line between a native run and a run through Ferry (fields
ending in "_ms=" are timings and left out). A script that found no GPU fails, unless
FERRY_ALLOW_HOST_FALLBACK=1, where it runs on numba's CUDA simulator
(NUMBA_ENABLE_CUDASIM=1, set here) to check the script itself.
"""
import os
import sys
import time

ALLOW_HOST = os.environ.get("FERRY_ALLOW_HOST_FALLBACK") == "1"
if ALLOW_HOST and "NUMBA_ENABLE_CUDASIM" not in os.environ:
    # numba reads this when it is first imported: only the simulator runs without a GPU.
    os.environ["NUMBA_ENABLE_CUDASIM"] = "1"

from numba import config, cuda  # noqa: E402  (after the environment is set)


def fail(name, why):
    print(f"{name} FAIL (reason on stderr)")
    print(f"{name} FAIL: {why}", file=sys.stderr)
    sys.exit(1)


def device_word(name):
    """'gpu' on a CUDA GPU; 'host' on the simulator when allowed; otherwise the script fails."""
    if config.ENABLE_CUDASIM:
        if not ALLOW_HOST:
            fail(name, "numba's CUDA simulator is on (NUMBA_ENABLE_CUDASIM=1): nothing would run on a GPU; "
                       "FERRY_ALLOW_HOST_FALLBACK=1 allows it for checking the script")
        print(f"{name}: note: on numba's CUDA simulator (FERRY_ALLOW_HOST_FALLBACK=1): the results are "
              "checked, but nothing ran on a GPU", file=sys.stderr)
        return "host"
    if not cuda.is_available():
        fail(name, "numba finds no CUDA GPU (cuda.is_available() is False): it found no usable libcuda.so.1 "
                   "or no device; NUMBA_CUDA_DRIVER names the driver library to load")
    device = cuda.get_current_device()
    print(f"{name}: on {device.name.decode() if isinstance(device.name, bytes) else device.name} "
          f"(compute capability {device.compute_capability[0]}.{device.compute_capability[1]})", file=sys.stderr)
    return "gpu"


def now_ms():
    return time.perf_counter() * 1e3
