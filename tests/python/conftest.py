"""pyopencl through Ferry.

One ferryd for the whole session (started with --port 0; its port comes from the
"READY <port>" line). The OpenCL loader reads its environment once per process, so
the environment is set in pytest_configure, before any test module imports pyopencl.
The loader is pointed at the vendors-all directory: Ferry and the native platform
side by side, so results can be compared with the native platform in one process.

FERRY_BINARY_DIR names the build tree (default: build/release).
"""

import ctypes
import gc
import os
import pathlib
import selectors
import signal
import subprocess
import sys
import threading
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = pathlib.Path(os.environ.get("FERRY_BINARY_DIR") or ROOT / "build" / "release").resolve()
FERRY_PLATFORM_NAME = "Ferry"
NATIVE_PLATFORM_NAME = "Portable Computing Language"
READY_TIMEOUT_S = 20
STOP_TIMEOUT_S = 20

# The loader variables this process started with: ferryd and native-only subprocesses
# get these back.
ORIGINAL_LOADER_ENV = {k: os.environ.get(k) for k in ("OCL_ICD_VENDORS", "OCL_ICD_FILENAMES")}


class Daemon:
    """A ferryd child whose stdout is drained after READY."""

    def __init__(self, extra_args=()):
        self.output = []
        ferryd = BIN / "bin" / "ferryd"
        if not ferryd.exists():
            raise RuntimeError(f"{ferryd} does not exist (build the tree first)")
        env = dict(os.environ)
        for key, value in ORIGINAL_LOADER_ENV.items():
            env.pop(key, None)
            if value is not None:
                env[key] = value
        self.proc = subprocess.Popen(
            [str(ferryd), "--port", "0", *extra_args],
            stdout=subprocess.PIPE,
            env=env,
            preexec_fn=_die_with_parent,
        )
        self.port = self._wait_ready()
        self._drain = threading.Thread(target=self._drain_stdout, name="ferryd-stdout", daemon=True)
        self._drain.start()

    def _wait_ready(self):
        deadline = time.monotonic() + READY_TIMEOUT_S
        seen = b""
        with selectors.DefaultSelector() as sel:
            sel.register(self.proc.stdout, selectors.EVENT_READ)
            while True:
                left = deadline - time.monotonic()
                if left <= 0 or not sel.select(timeout=left):
                    self.proc.kill()
                    self.proc.wait()
                    raise RuntimeError(f"ferryd printed no READY line within {READY_TIMEOUT_S} s: {seen!r}")
                chunk = os.read(self.proc.stdout.fileno(), 4096)
                if not chunk:
                    rc = self.proc.wait()
                    raise RuntimeError(f"ferryd exited with {rc} before READY: {seen!r}")
                seen += chunk
                for line in seen.split(b"\n")[:-1]:
                    if line.startswith(b"READY "):
                        port = int(line[6:])
                        assert 0 < port < 65536, line
                        self.output.append(seen.split(line + b"\n", 1)[1])
                        return port

    def _drain_stdout(self):
        while True:
            chunk = os.read(self.proc.stdout.fileno(), 4096)
            if not chunk:
                return
            self.output.append(chunk)

    @property
    def address(self):
        return f"127.0.0.1:{self.port}"

    def stop(self):
        """SIGTERM; returns the exit status (killing the daemon past the timeout)."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError(f"ferryd ignored SIGTERM for {STOP_TIMEOUT_S} s")
        self._drain.join(timeout=5)
        return rc


# Host-API extensions Ferry leaves out of a device's extension list
# (docs/extensions.md); everything else passes through from the native device.
UNSERVED_EXTENSIONS = (
    "cl_khr_command_buffer", "cl_khr_external_memory", "cl_khr_external_semaphore", "cl_khr_semaphore",
    "cl_khr_gl_", "cl_khr_egl_", "cl_khr_d3d", "cl_khr_dx9_", "cl_khr_il_program", "cl_khr_terminate_context",
    "cl_khr_suggested_local_work_size", "cl_khr_create_command_queue", "cl_khr_priority_hints",
    "cl_khr_throttle_hints", "cl_ext_device_fission", "cl_ext_migrate_memobject",
    "cl_intel_unified_shared_memory", "cl_intel_accelerator", "cl_intel_motion_estimation",
    "cl_intel_va_api_media_sharing", "cl_intel_dx9_media_sharing", "cl_intel_command_queue_families",
    "cl_intel_create_buffer_with_properties", "cl_nv_create_buffer",
)


def served_extensions(text):
    """The extensions of a native list that a Ferry device reports, sorted."""
    return sorted(e for e in text.split() if not e.startswith(UNSERVED_EXTENSIONS))


def _die_with_parent():
    PR_SET_PDEATHSIG = 1
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass


def icd_libraries(vendors_dir):
    """The libraries named by the .icd files of a vendors directory."""
    libs = []
    for icd in sorted(pathlib.Path(vendors_dir).glob("*.icd")):
        lib = icd.read_text().strip()
        if lib and lib not in libs:
            libs.append(lib)
    return libs


def ferry_only_env(address):
    """Environment for a subprocess that should see Ferry alone."""
    env = dict(os.environ)
    env["OCL_ICD_VENDORS"] = str(BIN / "etc" / "OpenCL" / "vendors" / "ferry.icd")
    env["OCL_ICD_FILENAMES"] = str(BIN / "lib" / "libferry.so")
    env["FERRY_SERVERS"] = address
    return env


def native_only_env():
    """Environment for a subprocess that should see the native platforms alone."""
    env = dict(os.environ)
    for key, value in ORIGINAL_LOADER_ENV.items():
        env.pop(key, None)
        if value is not None:
            env[key] = value
    env.pop("FERRY_SERVERS", None)
    return env


_daemon = None
_daemon_error = None


def pytest_configure(config):
    global _daemon, _daemon_error
    try:
        _daemon = Daemon()
    except RuntimeError as e:
        _daemon_error = str(e)
        return
    vendors_all = BIN / "etc" / "OpenCL" / "vendors-all"
    os.environ["OCL_ICD_VENDORS"] = str(vendors_all)
    libs = [str(BIN / "lib" / "libferry.so")] + [
        lib for lib in icd_libraries(vendors_all) if not lib.endswith("libferry.so")
    ]
    os.environ["OCL_ICD_FILENAMES"] = ":".join(libs)
    os.environ["FERRY_SERVERS"] = _daemon.address


def pytest_sessionfinish(session, exitstatus):
    """After every fixture is gone: no Ferry object may be left on either side, and the
    daemon must stop cleanly on SIGTERM. Failures here fail the run."""
    problems = []
    if _daemon is None:
        return
    pyopencl = sys.modules.get("pyopencl")
    if pyopencl is not None:
        import pyopencl.tools

        pyopencl.tools.clear_first_arg_caches()
        gc.collect()
        gc.collect()
        platform = _platform_named(pyopencl, FERRY_PLATFORM_NAME)
        if session.testsfailed:
            problems.append("leak check skipped: failed tests may still hold objects")
        elif platform is not None and platform.get_devices():
            counts = object_counts(platform, platform.get_devices()[0])
            if counts.client_objects or counts.server_objects:
                problems.append(
                    f"objects leaked through Ferry: {counts.client_objects} in the client, "
                    f"{counts.server_objects} in the server session"
                )
    try:
        rc = _daemon.stop()
        if rc != 0:
            problems.append(f"ferryd exited with {rc} after SIGTERM, expected 0")
    except AssertionError as e:
        problems.append(str(e))
    real_problems = [p for p in problems if not p.startswith("leak check skipped")]
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    for problem in problems:
        if reporter is not None:
            reporter.write_line(f"ferry: {problem}", red=bool(real_problems))
    if real_problems and session.exitstatus == 0:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_unconfigure(config):
    if _daemon is not None and _daemon.proc.poll() is None:
        _daemon.proc.kill()
        _daemon.proc.wait()


@pytest.fixture(scope="session")
def ferry_daemon():
    if _daemon is None:
        pytest.fail(f"cannot start ferryd: {_daemon_error}", pytrace=False)
    return _daemon


@pytest.fixture(scope="session")
def cl(ferry_daemon):
    import pyopencl

    return pyopencl


def _platform_named(cl, name):
    for platform in cl.get_platforms():
        if platform.name == name:
            return platform
    return None


@pytest.fixture(scope="session")
def ferry_platform(cl):
    platform = _platform_named(cl, FERRY_PLATFORM_NAME)
    names = [p.name for p in cl.get_platforms()]
    assert platform is not None, f"no platform named {FERRY_PLATFORM_NAME!r} among {names}"
    assert platform.name == FERRY_PLATFORM_NAME
    return platform


@pytest.fixture(scope="session")
def native_platform(cl):
    platform = _platform_named(cl, NATIVE_PLATFORM_NAME)
    if platform is None:
        others = [p for p in cl.get_platforms() if p.name != FERRY_PLATFORM_NAME]
        assert others, "no native platform beside Ferry"
        platform = others[0]
    return platform


@pytest.fixture(scope="session")
def ferry_device(ferry_platform):
    devices = ferry_platform.get_devices()
    assert devices, "the Ferry platform has no devices"
    return devices[0]


class Counts(ctypes.Structure):
    _fields_ = [("client_objects", ctypes.c_uint64), ("server_objects", ctypes.c_uint64)]


def _loader():
    """The OpenCL loader pyopencl uses (its wheel bundles one), for ctypes calls."""
    with open("/proc/self/maps") as maps:
        paths = {line.split()[-1] for line in maps if "libOpenCL" in line and "/" in line}
    bundled = sorted(p for p in paths if "pyopencl" in p)
    path = (bundled or sorted(paths) or ["libOpenCL.so.1"])[0]
    return ctypes.CDLL(path)


def object_counts(platform, device):
    """clFerryGetObjectCounts for the server of `device`, through the loader."""
    lib = _loader()
    get_address = lib.clGetExtensionFunctionAddressForPlatform
    get_address.restype = ctypes.c_void_p
    get_address.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
    address = get_address(ctypes.c_void_p(platform.int_ptr), b"clFerryGetObjectCounts")
    assert address, "clGetExtensionFunctionAddressForPlatform(Ferry, clFerryGetObjectCounts) is NULL"
    prototype = ctypes.CFUNCTYPE(ctypes.c_int32, ctypes.c_void_p, ctypes.POINTER(Counts))
    counts = Counts()
    rc = prototype(address)(ctypes.c_void_p(device.int_ptr), ctypes.byref(counts))
    assert rc == 0, f"clFerryGetObjectCounts returned {rc}"
    return counts


@pytest.fixture(scope="session")
def ctx(cl, ferry_device):
    """A context on the Ferry device. The leak check runs in pytest_sessionfinish, when
    pytest itself no longer holds fixture values."""
    return cl.Context([ferry_device])


@pytest.fixture(scope="session")
def queue(cl, ctx):
    q = cl.CommandQueue(ctx)
    yield q
    q.finish()


@pytest.fixture(scope="session")
def native_ctx(cl, native_platform):
    return cl.Context([native_platform.get_devices()[0]])


@pytest.fixture(scope="session")
def native_queue(cl, native_ctx):
    q = cl.CommandQueue(native_ctx)
    yield q
    q.finish()
