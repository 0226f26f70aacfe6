#!/usr/bin/env python3
"""Every real kernel of ../shared/corpus/pto-kernels through the tool chain as a user runs it
(tests/lit/corpus/): pto-as k.pto -o k.o, plain pto-ld k.o -o k.img, then pto-run k.img
--auto-args on the cpu backend and on the npu model.

An expected failure is listed by kernel name in the xfail file with the stage where it fails
(as, ld, cpu or npu) and a piece of its first error message. A listed kernel that fails at that
stage with that message is XFAIL; one that gets further, or passes, is an error (remove it from
the list: the test tightens itself), and so is one that fails for another reason; a kernel that
is not listed must pass every stage.

usage: corpus_run.py CORPUS_DIR XFAIL_FILE WORK_DIR
"""
import glob
import os
import subprocess
import sys

STAGES = ["as", "ld", "cpu", "npu"]


def first_error(text):
    for line in text.splitlines():
        if "error" in line:
            return line.strip()
    lines = text.strip().splitlines()
    return lines[0] if lines else "(no output)"


def run_kernel(path, work):
    name = os.path.splitext(os.path.basename(path))[0]
    obj = os.path.join(work, name + ".o")
    img = os.path.join(work, name + ".img")
    steps = [
        ("as", ["pto-as", path, "-o", obj]),
        ("ld", ["pto-ld", obj, "-o", img]),
        ("cpu", ["pto-run", img, "--auto-args", "-q"]),
        ("npu", ["pto-run", img, "--auto-args", "-q", "--backend", "npu"]),
    ]
    for stage, cmd in steps:
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
        except subprocess.TimeoutExpired:
            return stage, "timed out"
        if r.returncode != 0:
            return stage, first_error(r.stderr + r.stdout)
    return None, ""


def main():
    corpus, xfail_file, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    xfail = {}
    with open(xfail_file, encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            parts = line.split(None, 2)
            if len(parts) < 3 or parts[1] not in STAGES:
                print(f"ERROR expected 'NAME STAGE MESSAGE' with STAGE one of {STAGES}: '{line}'")
                return 1
            xfail[parts[0]] = (parts[1], parts[2])
    kernels = sorted(glob.glob(os.path.join(corpus, "*.pto")))
    names = {os.path.splitext(os.path.basename(k))[0] for k in kernels}
    bad = 0
    for name in sorted(set(xfail) - names):
        print(f"ERROR {name} is in the xfail list but not in the corpus")
        bad += 1
    counts = {"PASS": 0, "XFAIL": 0}
    for k in kernels:
        name = os.path.splitext(os.path.basename(k))[0]
        stage, why = run_kernel(k, work)
        want, message = xfail.get(name, (None, None))
        if stage is None and want is None:
            counts["PASS"] += 1
            print(f"PASS {name}")
        elif stage is None:
            bad += 1
            print(f"XPASS {name}: listed as failing at '{want}' but passes: remove it from the xfail list")
        elif stage == want and message not in why:
            bad += 1
            print(f"FAIL {name} [{stage}]: expected a failure with '{message}', got: {why}")
        elif stage == want:
            counts["XFAIL"] += 1
            print(f"XFAIL {name} [{stage}]: {why}")
        elif want is not None and STAGES.index(stage) > STAGES.index(want):
            bad += 1
            print(f"XPASS {name}: listed as failing at '{want}' but gets to '{stage}' ({why}): update the xfail list")
        else:
            bad += 1
            print(f"FAIL {name} [{stage}]: {why}")
    print(f"corpus: {len(kernels)} kernels, {counts['PASS']} pass, {counts['XFAIL']} expected failures, {bad} errors")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
