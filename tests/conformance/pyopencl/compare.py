#!/usr/bin/env python3
"""Reads the JUnit XML of pyopencl's test suite, run natively and through Ferry.

    compare.py counts XML [LOG]
        Checks that XML is a JUnit file and prints its outcome counts on one line
        ("12 passed, 1 failed, 3 skipped"). Exit 3 when the file is missing or invalid.

    compare.py not-passed XML [LOG]
        Prints, one per line, the test functions (file::[Class::]name, without
        parameters) with a test that neither passed nor xpassed, for a native run of
        just those (run.sh --quick). Exit 3 when the file is missing or invalid.

    compare.py compare --native XML --native-log LOG --native-seconds S
                       --ferry XML --ferry-log LOG --ferry-seconds S
                       --expected FILE --summary FILE [--native-subset]
        Prints both runs' counts and every test whose outcome differs, marks the
        differences listed in FILE (see expected-differences.txt), prints the failure
        messages of tests that fail only through Ferry and writes key=value lines to
        the summary file. Exit 0 when every difference is expected, 1 when one is not,
        3 when an input is missing or invalid. With --native-subset the native run
        holds only what not-passed printed (its XML may be missing when that was
        nothing): a test that passed through Ferry and did not run natively is no
        difference, and an expected difference not seen is not stale.

LOG is pytest's terminal output with -rA: JUnit XML reports a test that passed while
marked xfail as a plain pass, so its XPASS lines tell those apart.

Python standard library only.
"""

import argparse
import os
import re
import sys
import xml.etree.ElementTree as ET

OUTCOMES = ("passed", "failed", "skipped", "xfailed", "xpassed")
# When a test has more than one testcase element (a failed call and an error in
# teardown make two), the worst outcome wins.
SEVERITY = {"passed": 0, "xpassed": 1, "xfailed": 2, "skipped": 3, "failed": 4}
FAILURE_LINES = 15

# pyopencl's parametrization ids name the device and platform; through Ferry the
# platform differs, so these parts are replaced by placeholders.
DEVICE_PATTERNS = [
    (re.compile(r"<context factory for <pyopencl\.Device '.*?' on '.*?'>>"), "<ctx>"),
    (re.compile(r"<pyopencl\.Device '.*?' on '.*?'(?: at 0x[0-9a-fA-F]+)?>"), "<dev>"),
    (re.compile(r"<pyopencl\.Platform '.*?'(?: at 0x[0-9a-fA-F]+)?>"), "<plat>"),
]


class InputError(Exception):
    pass


def normalize(test_id):
    for pattern, placeholder in DEVICE_PATTERNS:
        test_id = pattern.sub(placeholder, test_id)
    return test_id


def raw_id(case):
    """file::[Class::]name from a testcase element. classname is the dotted module
    path and classes ("test_wrapper" or "test_wrapper.TestFoo"); the file attribute,
    when pytest writes one, says how many of its parts are the module path."""
    classname = case.get("classname", "")
    name = case.get("name", "")
    parts = [p for p in classname.split(".") if p] if classname else []
    path = case.get("file", "")
    if path.endswith(".py"):
        module_parts = len(path[:-3].replace("\\", "/").split("/"))
        classes = parts[module_parts:]
    elif parts:
        path = parts[0] + ".py"
        classes = parts[1:]
    else:
        # A collection error of a whole file: classname is empty, name is the module.
        return name + ".py"
    return "::".join([path, *classes, name])


def outcome_of(case):
    children = {child.tag: child for child in case}
    if "failure" in children or "error" in children:
        return "failed"
    skipped = children.get("skipped")
    if skipped is not None:
        if skipped.get("type") == "pytest.xfail":
            return "xfailed"
        if skipped.get("message") == "xfail-marked test passes unexpectedly":
            return "xpassed"  # strict xfail that passed; pytest counts it as failed
        return "skipped"
    return "passed"


def failure_text(case):
    """The first lines of a failed test's message: the "E" lines of the traceback
    (the exception and pytest's explanation), else the short message, then the
    location the traceback ends at."""
    lines = []
    for child in case:
        if child.tag not in ("failure", "error"):
            continue
        text = (child.text or "").rstrip().splitlines()
        explained = [line[1:] for line in text if line.startswith("E ")]
        indent = min((len(line) - len(line.lstrip()) for line in explained if line.strip()), default=0)
        explained = [line[indent:] for line in explained]
        lines.extend(explained or (child.get("message") or "").strip().splitlines())
        if text and not text[-1].startswith("E "):
            lines.append(text[-1])
    if len(lines) > FAILURE_LINES:
        lines = lines[:FAILURE_LINES] + [f"... ({len(lines) - FAILURE_LINES} more lines)"]
    return lines


def xpass_ids(log_path):
    """Node ids that pytest's -rA summary lists as XPASS."""
    ids = []
    if not log_path:
        return ids
    try:
        with open(log_path, encoding="utf-8", errors="replace") as log:
            for line in log:
                if line.startswith("XPASS "):
                    ids.append(line[len("XPASS "):].rstrip("\n"))
    except OSError:
        pass
    return ids


def read_cases(xml_path, log_path=None):
    """(raw id, outcome, testcase element) of every testcase of one JUnit file."""
    try:
        tree = ET.parse(xml_path)
    except FileNotFoundError:
        raise InputError(f"{xml_path}: no JUnit XML (pytest did not write one)")
    except (ET.ParseError, OSError) as e:
        raise InputError(f"{xml_path}: not valid JUnit XML ({e})")
    root = tree.getroot()
    if root.tag not in ("testsuites", "testsuite"):
        raise InputError(f"{xml_path}: not JUnit XML (root element <{root.tag}>)")
    xpassed = xpass_ids(log_path)
    cases = []
    for case in root.iter("testcase"):
        test_id = raw_id(case)
        outcome = outcome_of(case)
        if outcome == "passed" and any(
            line == test_id or line.startswith(test_id + " - ") for line in xpassed
        ):
            outcome = "xpassed"
        cases.append((test_id, outcome, case))
    return cases


def read_run(xml_path, log_path=None):
    """{normalized id: (outcome, testcase element)} of one JUnit file."""
    results = {}
    for test_id, outcome, case in read_cases(xml_path, log_path):
        key = normalize(test_id)
        previous = results.get(key)
        if previous is None or SEVERITY[outcome] > SEVERITY[previous[0]]:
            results[key] = (outcome, case)
    return results


def counts(results):
    tally = dict.fromkeys(OUTCOMES, 0)
    for outcome, _ in results.values():
        tally[outcome] += 1
    return tally


def counts_text(tally):
    parts = [f"{tally[o]} {o}" for o in ("passed", "failed", "skipped")]
    parts += [f"{tally[o]} {o}" for o in ("xfailed", "xpassed") if tally[o]]
    return ", ".join(parts)


def read_expected(path):
    """{normalized id: reason} from the expected-differences file."""
    expected = {}
    try:
        with open(path, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                line = line.strip()
                if not line or line.startswith("#"):
                    continue
                match = re.match(r"^(.*?)(?:\s+#\s*(.*))?$", line)
                test_id, reason = match.group(1).strip(), (match.group(2) or "").strip()
                expected[test_id] = reason or "no reason given"
    except FileNotFoundError:
        raise InputError(f"{path}: the list of expected differences does not exist")
    return expected


def seconds_text(value):
    return f"{float(value):.1f}"


def cmd_counts(args):
    results = read_run(args.xml, args.log)
    print(counts_text(counts(results)))
    return 0


def function_id(test_id):
    """file::[Class::]name of a test id, without its parameters."""
    return test_id.split("[", 1)[0]


def cmd_not_passed(args):
    seen = []
    for test_id, outcome, _ in read_cases(args.xml, args.log):
        function = function_id(test_id)
        if outcome not in ("passed", "xpassed") and function not in seen:
            seen.append(function)
    for function in seen:
        print(function)
    return 0


def cmd_compare(args):
    if args.native_subset and not os.path.exists(args.native):
        native = {}
    else:
        native = read_run(args.native, args.native_log)
    ferry = read_run(args.ferry, args.ferry_log)
    expected = read_expected(args.expected)
    native_counts, ferry_counts = counts(native), counts(ferry)

    native_s, ferry_s = float(args.native_seconds), float(args.ferry_seconds)
    if args.native_subset:
        print(f"native (PoCL), what did not pass through Ferry: {counts_text(native_counts)}"
              f" in {seconds_text(native_s)} s")
        print(f"ferry:          {counts_text(ferry_counts)} in {seconds_text(ferry_s)} s")
    else:
        ratio = f" ({ferry_s / native_s:.2f}x native)" if native_s > 0 else ""
        print(f"native (PoCL):  {counts_text(native_counts)} in {seconds_text(native_s)} s")
        print(f"ferry:          {counts_text(ferry_counts)} in {seconds_text(ferry_s)} s{ratio}")

    differences = []
    for test_id in sorted(set(native) | set(ferry)):
        a = native[test_id][0] if test_id in native else "missing"
        b = ferry[test_id][0] if test_id in ferry else "missing"
        if args.native_subset and a == "missing" and b in ("passed", "xpassed"):
            continue  # not run natively: it passed through Ferry
        if a != b:
            differences.append((test_id, a, b))

    unexpected = 0
    print(f"differences ({len(differences)}):" if differences else "differences: none")
    for test_id, a, b in differences:
        if test_id in expected:
            mark = f"[expected: {expected[test_id]}]"
        else:
            mark = "[UNEXPECTED]"
            unexpected += 1
        print(f"  {test_id}: native {a}, ferry {b}  {mark}")

    differing = {test_id for test_id, _, _ in differences}
    # Natively only a subset ran: an expected difference of a test that passed
    # through Ferry (native xfailed, Ferry passed) cannot be seen.
    stale = [test_id for test_id in expected if test_id not in differing and
             not (args.native_subset and test_id not in native)]
    if stale:
        print(f"stale entries in {args.expected_name} ({len(stale)}):")
        for test_id in stale:
            if test_id in native or test_id in ferry:
                both = (native.get(test_id) or ferry.get(test_id))[0]
                state = f"{both} in both runs"
            else:
                state = "in neither run"
            print(f"  {test_id}: {state}  [stale (remove from the list)]")

    ferry_only_failures = [
        test_id for test_id, a, b in differences if b == "failed" and a != "failed"
    ]
    if ferry_only_failures:
        print(f"\nfailing only through Ferry ({len(ferry_only_failures)}):")
        for test_id in ferry_only_failures:
            print(f"  {test_id}")
            for line in failure_text(ferry[test_id][1]) or ["(no message)"]:
                print(f"      {line}")

    if args.summary:
        with open(args.summary, "w", encoding="utf-8") as f:
            for run, tally, secs in (("native", native_counts, native_s), ("ferry", ferry_counts, ferry_s)):
                for outcome in OUTCOMES:
                    f.write(f"{run}_{outcome}={tally[outcome]}\n")
                f.write(f"{run}_seconds={seconds_text(secs)}\n")
            f.write(f"native_subset={1 if args.native_subset else 0}\n")
            f.write(f"differences={len(differences)}\n")
            f.write(f"unexpected={unexpected}\n")
            f.write(f"stale={len(stale)}\n")
    return 1 if unexpected else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)

    p = commands.add_parser("counts", help="check one JUnit file and print its counts")
    p.add_argument("xml")
    p.add_argument("log", nargs="?")
    p.set_defaults(func=cmd_counts)

    p = commands.add_parser("not-passed", help="the test functions of a run with a test that did not pass")
    p.add_argument("xml")
    p.add_argument("log", nargs="?")
    p.set_defaults(func=cmd_not_passed)

    p = commands.add_parser("compare", help="compare the native and the Ferry run")
    for run in ("native", "ferry"):
        p.add_argument(f"--{run}", required=True, metavar="XML")
        p.add_argument(f"--{run}-log", metavar="LOG")
        p.add_argument(f"--{run}-seconds", required=True, type=float, metavar="S")
    p.add_argument("--expected", required=True, metavar="FILE")
    p.add_argument("--expected-name", default="expected-differences.txt", help="name used in messages")
    p.add_argument("--summary", metavar="FILE")
    p.add_argument("--native-subset", action="store_true",
                   help="the native run holds only what did not pass through Ferry")
    p.set_defaults(func=cmd_compare)

    args = parser.parse_args()
    try:
        return args.func(args)
    except InputError as e:
        print(f"compare: {e}", file=sys.stderr)
        return 3


if __name__ == "__main__":
    sys.exit(main())
