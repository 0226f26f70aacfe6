#!/usr/bin/env python3
"""Multi-buffering changes no result: every kernel linked with and without it (--no-multibuf)
writes the same bytes, on the cpu backend and on the npu model.

For each .pto file given (or found under the directories given): pto-as, then pto-ld twice, then
pto-run with the same generated arguments (--auto-args, seed 0) on both backends; every buffer
parameter is compared with pto-npy at atol 0. Prints one line per kernel (how many loops were
multi-buffered, from pto-ld -v) and exits 1 on any difference or tool failure. A kernel that
assembles only with manual placement (PTOAS's level3: run-time tassign addresses) is assembled so.
--strip-sync removes every sync op first (the kernel then gets its sync, and its multi-buffering,
from the linker; sync_quality.strip_sync).

Usage: multibuf_check.py [--bin build/bin] PATH... [--blocks N] [--strip-sync]
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile


def tool(bindir, name, *args):
    r = subprocess.run([os.path.join(bindir, name), *args], capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


def kernels(paths):
    for p in paths:
        if not os.path.exists(p):
            print(f"skip: {p} does not exist")
            continue
        if os.path.isdir(p):
            for root, _, files in sorted(os.walk(p)):
                for f in sorted(files):
                    if f.endswith(".pto"):
                        yield os.path.join(root, f)
        else:
            yield p


def check(bindir, src, work, blocks, strip=False):
    """'same', 'skip: why' or 'DIFFERENT: why'; and the number of multi-buffered loops."""
    obj = os.path.join(work, "k.o")
    if strip:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from sync_quality import strip_sync
        stripped = os.path.join(work, "stripped.pto")
        with open(src) as f, open(stripped, "w") as g:
            g.write(strip_sync(f.read()))
        src = stripped
    rc, out = tool(bindir, "pto-as", src, "-o", obj)
    if rc:
        rc, out = tool(bindir, "pto-as", "--pto-level=level3", src, "-o", obj)
    if rc:
        return "skip: does not assemble", 0
    outs = {}
    loops = 0
    for mode, opts in (("mb", []), ("plain", ["--no-multibuf"])):
        img = os.path.join(work, f"{mode}.img")
        rc, out = tool(bindir, "pto-ld", obj, "-o", img, "-v", *opts)
        if rc:
            return ("skip: does not link" if mode == "mb" else "DIFFERENT: links only with it"), 0
        if mode == "mb":
            loops = len(re.findall(r": \d+ copies[ (]", out))
        rc, listing = tool(bindir, "pto-run", img, "--list")
        kernels_ = [l.split()[0][1:] for l in listing.splitlines() if l.startswith("@")]
        for k in kernels_:
            for backend in ("cpu", "npu"):
                d = os.path.join(work, f"{mode}.{k}.{backend}")
                os.makedirs(d, exist_ok=True)
                rc, out = tool(bindir, "pto-run", img, "--kernel", k, "--auto-args", "--out-dir", d,
                               "--backend", backend, "-q", "--blocks", str(blocks))
                outs[(mode, k, backend)] = d if rc == 0 else "fails: " + out.strip().splitlines()[-1]
    for (mode, k, backend), d in outs.items():
        if mode != "mb":
            continue
        other = outs[("plain", k, backend)]
        if d.startswith("fails") or other.startswith("fails"):
            if d.startswith("fails") != other.startswith("fails"):
                return f"DIFFERENT: @{k} on {backend}: {d if d.startswith('fails') else other}", loops
            continue
        for name in sorted(os.listdir(d)):
            rc, out = tool(bindir, "pto-npy", "compare", os.path.join(d, name),
                           os.path.join(other, name), "--atol", "0", "--rtol", "0")
            if rc:
                return f"DIFFERENT: @{k} {name} on {backend}: {out.strip()}", loops
    return "same", loops


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", help="the tools' directory (default: where pto-ld is on PATH)")
    ap.add_argument("--blocks", type=int, default=1)
    ap.add_argument("--strip-sync", action="store_true", help="remove every sync op first")
    ap.add_argument("paths", nargs="+")
    a = ap.parse_args()
    if not a.bin:
        found = shutil.which("pto-ld")
        if not found:
            ap.error("no --bin and no pto-ld on PATH")
        a.bin = os.path.dirname(found)
    bad = total = rotated = 0
    for src in kernels(a.paths):
        with tempfile.TemporaryDirectory() as work:
            verdict, loops = check(a.bin, src, work, a.blocks, a.strip_sync)
        total += 1
        rotated += loops > 0
        bad += verdict.startswith("DIFFERENT")
        print(f"{verdict:<6} loops multi-buffered: {loops}  {src}" if verdict == "same"
              else f"{verdict}  {src}")
    print(f"{total} kernels, {rotated} with multi-buffered loops, {bad} different")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
