"""tests/conformance/pyopencl/compare.py on small JUnit files: which test functions
a native subset run takes (not-passed), and how compare --native-subset judges a run
whose native half holds only those."""

import pathlib
import subprocess
import sys

COMPARE = pathlib.Path(__file__).resolve().parents[1] / "conformance" / "pyopencl" / "compare.py"
CTX_FERRY = "<context factory for <pyopencl.Device 'cpu' on 'Ferry'>>"
CTX_NATIVE = "<context factory for <pyopencl.Device 'cpu' on 'Portable Computing Language'>>"


def junit(path, cases):
    """cases: (module, name, outcome) with outcome passed, failed, skipped or xfailed."""
    body = []
    for module, name, outcome in cases:
        inner = {
            "passed": "",
            "failed": '<failure message="boom">E   AssertionError: boom\ntest.py:1: AssertionError</failure>',
            "skipped": '<skipped type="pytest.skip" message="no"/>',
            "xfailed": '<skipped type="pytest.xfail" message="known"/>',
        }[outcome]
        name = name.replace("<", "&lt;").replace(">", "&gt;").replace("'", "&apos;")
        body.append(f'<testcase classname="{module}" name="{name}" file="{module}.py" time="0.1">{inner}</testcase>')
    path.write_text('<?xml version="1.0"?><testsuites><testsuite name="pytest">' + "".join(body) +
                    "</testsuite></testsuites>")
    return path


def run(*args):
    return subprocess.run([sys.executable, str(COMPARE), *map(str, args)], capture_output=True, text=True)


def test_not_passed_names_each_function_with_a_test_that_did_not_pass_once(tmp_path):
    xml = junit(tmp_path / "ferry.xml", [
        ("test_a", f"test_ok[{CTX_FERRY}]", "passed"),
        ("test_a", f"test_two[{CTX_FERRY}-1]", "failed"),
        ("test_a", f"test_two[{CTX_FERRY}-2]", "skipped"),
        ("test_b", f"test_x[{CTX_FERRY}]", "xfailed"),
    ])
    out = run("not-passed", xml)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["test_a.py::test_two", "test_b.py::test_x"]


def test_not_passed_of_a_missing_file_is_an_input_error(tmp_path):
    out = run("not-passed", tmp_path / "nothing.xml")
    assert out.returncode == 3
    assert "no JUnit XML" in out.stderr


def compare(tmp_path, native, ferry, expected_lines, *extra):
    expected = tmp_path / "expected.txt"
    expected.write_text("\n".join(expected_lines) + "\n")
    summary = tmp_path / "summary.txt"
    out = run("compare", "--native", native, "--native-seconds", 1, "--ferry", ferry, "--ferry-seconds", 2,
              "--expected", expected, "--summary", summary, *extra)
    values = dict(line.split("=", 1) for line in summary.read_text().splitlines()) if summary.exists() else {}
    return out, values


def test_a_subset_counts_what_passed_through_ferry_as_no_difference(tmp_path):
    ferry = junit(tmp_path / "ferry.xml", [
        ("test_a", f"test_ok[{CTX_FERRY}]", "passed"),
        ("test_a", f"test_svm[{CTX_FERRY}]", "skipped"),
        ("test_a", f"test_image[{CTX_FERRY}]", "passed"),
    ])
    native = junit(tmp_path / "native.xml", [("test_a", f"test_svm[{CTX_NATIVE}]", "passed")])
    # test_image differs in a full run (native xfailed): not seen here, and not stale.
    out, values = compare(tmp_path, native, ferry,
                          ["test_a.py::test_svm[<ctx>]  # network", "test_a.py::test_image[<ctx>]  # vendor"],
                          "--native-subset")
    assert out.returncode == 0, out.stdout + out.stderr
    assert values["differences"] == "1" and values["unexpected"] == "0" and values["stale"] == "0"
    assert values["native_subset"] == "1"
    assert "what did not pass through Ferry" in out.stdout


def test_a_subset_still_fails_on_a_test_that_passes_natively_only(tmp_path):
    ferry = junit(tmp_path / "ferry.xml", [("test_a", f"test_broken[{CTX_FERRY}]", "failed")])
    native = junit(tmp_path / "native.xml", [("test_a", f"test_broken[{CTX_NATIVE}]", "passed")])
    out, values = compare(tmp_path, native, ferry, [], "--native-subset")
    assert out.returncode == 1
    assert values["unexpected"] == "1"
    assert "test_a.py::test_broken[<ctx>]: native passed, ferry failed  [UNEXPECTED]" in out.stdout


def test_a_subset_without_a_native_file_is_every_test_passing_through_ferry(tmp_path):
    ferry = junit(tmp_path / "ferry.xml", [("test_a", f"test_ok[{CTX_FERRY}]", "passed")])
    out, values = compare(tmp_path, tmp_path / "absent.xml", ferry, [], "--native-subset")
    assert out.returncode == 0, out.stdout + out.stderr
    assert values["differences"] == "0" and values["native_passed"] == "0"


def test_without_subset_a_test_missing_natively_is_a_difference(tmp_path):
    ferry = junit(tmp_path / "ferry.xml", [("test_a", f"test_ok[{CTX_FERRY}]", "passed")])
    native = junit(tmp_path / "native.xml", [])
    out, values = compare(tmp_path, native, ferry, [])
    assert out.returncode == 1
    assert "test_a.py::test_ok[<ctx>]: native missing, ferry passed  [UNEXPECTED]" in out.stdout
