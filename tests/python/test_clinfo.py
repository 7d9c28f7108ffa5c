"""clinfo through Ferry describes the same device as clinfo on the native platform."""

import re
import shutil
import subprocess

import pytest

from conftest import ferry_only_env, native_only_env, served_extensions

# Device properties that are the device's own and must pass through Ferry unchanged.
KEYS = [
    "CL_DEVICE_NAME",
    "CL_DEVICE_VENDOR",
    "CL_DEVICE_VENDOR_ID",
    "CL_DEVICE_TYPE",
    "CL_DEVICE_PROFILE",
    "CL_DEVICE_OPENCL_C_VERSION",
    "CL_DEVICE_MAX_COMPUTE_UNITS",
    "CL_DEVICE_MAX_CLOCK_FREQUENCY",
    "CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS",
    "CL_DEVICE_MAX_WORK_ITEM_SIZES",
    "CL_DEVICE_MAX_WORK_GROUP_SIZE",
    "CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT",
    "CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT",
    "CL_DEVICE_SINGLE_FP_CONFIG",
    "CL_DEVICE_ADDRESS_BITS",
    "CL_DEVICE_ENDIAN_LITTLE",
    "CL_DEVICE_GLOBAL_MEM_SIZE",
    "CL_DEVICE_MAX_MEM_ALLOC_SIZE",
    "CL_DEVICE_MEM_BASE_ADDR_ALIGN",
    "CL_DEVICE_GLOBAL_MEM_CACHE_SIZE",
    "CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE",
    "CL_DEVICE_LOCAL_MEM_SIZE",
    "CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE",
    "CL_DEVICE_MAX_PARAMETER_SIZE",
]


LINE = re.compile(r"^\[([^/\]]+)/(\d+)\]\s+(CL_\w+)\s+(.*?)\s*$")


def clinfo_devices(env):
    """{(platform prefix, device index): {key: value}} from `clinfo --raw`."""
    done = subprocess.run(["clinfo", "--raw"], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    devices = {}
    for line in done.stdout.splitlines():
        m = LINE.match(line)
        if m and m.group(2).isdigit():
            devices.setdefault((m.group(1), int(m.group(2))), {})[m.group(3)] = m.group(4)
    return devices, done.stdout


@pytest.mark.skipif(shutil.which("clinfo") is None, reason="clinfo is not installed")
def test_clinfo_reports_the_native_device_through_ferry(ferry_daemon, ferry_device):
    native, native_text = clinfo_devices(native_only_env())
    ferry, ferry_text = clinfo_devices(ferry_only_env(ferry_daemon.address))
    assert "Ferry" in ferry_text
    assert len(ferry) >= 1, ferry_text
    ferry_device0 = next(v for k, v in sorted(ferry.items()) if k[1] == 0)
    same_name = [v for v in native.values() if v.get("CL_DEVICE_NAME") == ferry_device0.get("CL_DEVICE_NAME")]
    assert same_name, f"no native device named {ferry_device0.get('CL_DEVICE_NAME')!r}"
    for key in KEYS:
        assert ferry_device0.get(key) == same_name[0].get(key), key
    served = served_extensions(same_name[0].get("CL_DEVICE_EXTENSIONS", ""))
    assert sorted(ferry_device0.get("CL_DEVICE_EXTENSIONS", "").split()) == served
