#!/usr/bin/env python3
"""Runs two builds of the tool chain over the same inputs and compares every output byte for byte:
a refactoring that must not change behaviour is checked with the old build's tools beside the
new build's (docs/development.md, "Comparing two builds").

For every input (.pto files: samples/, the corpus, tests/lit/ by default) each build runs, in a
directory of its own and with the same relative file names (so paths in messages agree):

  pto-as IN -o k.o                       the object, and pto-as's diagnostics
  pto-as IN --emit ir                    the Kernel IR printer's text
  pto-objdump -d k.o / --tiles k.o       disassembly and tile table
  pto-ld k.o -o k.img --map k.map        image and map, plain and with --auto-sync
  pto-objdump --cpp k.img                exported C++ (and pto-ld --emit cpp-host)
  pto-run k.img --auto-args --out-dir    every buffer (.npy) after a run of each entry kernel,
                                         on the cpu backend and on the npu model,
                                         and of the source on the reference interpreter

A step's exit status, standard output, standard error and files must be the same for both
builds; a step that fails in both (the same way) counts as agreeing. Prints a line per
difference and the counts of inputs and compared outputs; exits 1 when anything differs.

usage: compare-outputs.py OLD_BIN NEW_BIN [--corpus DIR] [--jobs N] [--work DIR] [inputs...]
"""
import argparse
import concurrent.futures
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
TIMEOUT = 300


def run(cmd, cwd):
    try:
        r = subprocess.run(cmd, cwd=cwd, capture_output=True, timeout=TIMEOUT)
        return (r.returncode, r.stdout, r.stderr)
    except subprocess.TimeoutExpired:
        return ("timeout", b"", b"")


def entry_kernels(bin_dir, cwd):
    """The entry kernels of k.img, from pto-run --list ("@name(...)" lines)."""
    code, out, _ = run([str(bin_dir / "pto-run"), "k.img", "--list"], cwd)
    if code != 0:
        return []
    names = []
    for line in out.decode(errors="replace").splitlines():
        line = line.strip()
        if line.startswith("@"):
            names.append(line[1:].split("(")[0].split()[0].rstrip(":"))
    return names


def steps(bin_dir, src, cwd):
    """Runs every step in cwd; returns {step name: (status, stdout, stderr)} and leaves files."""
    b = lambda tool: str(bin_dir / tool)  # noqa: E731
    res = {}
    res["as"] = run([b("pto-as"), str(src), "-o", "k.o"], cwd)
    res["as-ir"] = run([b("pto-as"), str(src), "--emit", "ir", "-o", "k.ir"], cwd)
    if res["as"][0] != 0:
        return res
    res["objdump-d"] = run([b("pto-objdump"), "-d", "k.o"], cwd)
    res["objdump-tiles"] = run([b("pto-objdump"), "--tiles", "k.o"], cwd)
    for mode, extra in (("plain", []), ("auto", ["--auto-sync"])):
        img, mp = f"{mode}.img", f"{mode}.map"
        res[f"ld-{mode}"] = run([b("pto-ld"), "k.o", "-o", img, "--map", mp] + extra, cwd)
        if res[f"ld-{mode}"][0] != 0:
            continue
        res[f"cpp-{mode}"] = run([b("pto-objdump"), "--cpp", img], cwd)
        res[f"cpp-host-{mode}"] = run([b("pto-ld"), "k.o", "--emit", "cpp-host", "-o",
                                       f"{mode}_host.cpp"] + extra, cwd)
        shutil.copyfile(os.path.join(cwd, img), os.path.join(cwd, "k.img"))
        for kernel in entry_kernels(bin_dir, cwd):
            for backend in ("cpu", "npu"):
                out = f"out-{mode}-{kernel}-{backend}"
                res[f"run-{mode}-{kernel}-{backend}"] = run(
                    [b("pto-run"), "k.img", "--kernel", kernel, "--auto-args", "-q",
                     "--backend", backend, "--out-dir", out], cwd)
            if mode == "plain":  # the reference interpreter runs the source itself
                res[f"run-ref-{kernel}"] = run(
                    [b("pto-run"), str(src), "--kernel", kernel, "--auto-args", "-q",
                     "--out-dir", f"out-ref-{kernel}"], cwd)
    return res


def files_of(d):
    out = {}
    for p in sorted(pathlib.Path(d).rglob("*")):
        if p.is_file():
            out[p.relative_to(d).as_posix()] = p.read_bytes()
    return out


def compare_one(args):
    old_bin, new_bin, src, work = args
    diffs = []
    dirs = []
    for side in ("old", "new"):
        d = tempfile.mkdtemp(prefix=side + "-", dir=work)
        dirs.append(d)
    old = steps(old_bin, src, dirs[0])
    new = steps(new_bin, src, dirs[1])
    for name in sorted(set(old) | set(new)):
        if name not in old or name not in new:
            diffs.append(f"{src}: step {name} ran in only one build")
            continue
        for what, a, c in zip(("status", "stdout", "stderr"), old[name], new[name]):
            if a != c:
                diffs.append(f"{src}: {name}: {what} differs")
    fo, fn = files_of(dirs[0]), files_of(dirs[1])
    for f in sorted(set(fo) | set(fn)):
        if fo.get(f) != fn.get(f):
            diffs.append(f"{src}: file {f} differs" if f in fo and f in fn
                         else f"{src}: file {f} written by one build only")
    outputs = {
        "objects": sum(1 for f in fo if f == "k.o"),
        "images": sum(1 for f in fo if f.endswith(".img") and f != "k.img"),
        "maps": sum(1 for f in fo if f.endswith(".map")),
        "cpp": sum(1 for n in old if n.startswith("cpp") and old[n][0] == 0),
        "disasm": sum(1 for n in old if n.startswith("objdump") and old[n][0] == 0),
        "ir": sum(1 for f in fo if f == "k.ir"),
        "npy": sum(1 for f in fo if f.endswith(".npy")),
        "runs": sum(1 for n in old if n.startswith("run-") and not n.startswith("run-ref-")),
        "ref": sum(1 for n in old if n.startswith("run-ref-")),
        "steps": len(old),
    }
    for d in dirs:
        shutil.rmtree(d, ignore_errors=True)
    return src, diffs, outputs


def default_inputs(corpus):
    inputs = sorted((ROOT / "samples").rglob("*.pto"))
    if corpus and pathlib.Path(corpus).is_dir():
        inputs += sorted(pathlib.Path(corpus).glob("*.pto"))
    inputs += sorted((ROOT / "tests" / "lit").rglob("*.pto"))
    return inputs


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("old_bin", type=pathlib.Path)
    ap.add_argument("new_bin", type=pathlib.Path)
    ap.add_argument("inputs", nargs="*", type=pathlib.Path)
    ap.add_argument("--corpus", default=str(ROOT.parent / "shared" / "corpus" / "pto-kernels"))
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--work", default=None)
    a = ap.parse_intermixed_args()
    for d in (a.old_bin, a.new_bin):
        for tool in ("pto-as", "pto-ld", "pto-objdump", "pto-run"):
            if not (d / tool).is_file():
                sys.exit(f"compare-outputs: {d / tool} does not exist")
    inputs = [p.resolve() for p in a.inputs] or default_inputs(a.corpus)
    work = a.work or tempfile.mkdtemp(prefix="pto-compare-")
    os.makedirs(work, exist_ok=True)
    totals, all_diffs = {}, []
    jobs = [(a.old_bin.resolve(), a.new_bin.resolve(), src, work) for src in inputs]
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as pool:
        for src, diffs, outputs in pool.map(compare_one, jobs):
            all_diffs += diffs
            for k, v in outputs.items():
                totals[k] = totals.get(k, 0) + v
    for d in all_diffs:
        print(d)
    print(f"compare-outputs: {len(inputs)} inputs, {totals.get('steps', 0)} steps compared: "
          f"{totals.get('objects', 0)} objects, {totals.get('images', 0)} images, "
          f"{totals.get('maps', 0)} maps, {totals.get('cpp', 0)} C++ exports, "
          f"{totals.get('disasm', 0)} disassemblies, {totals.get('ir', 0)} IR texts, "
          f"{totals.get('runs', 0)} image runs and {totals.get('ref', 0)} reference runs with "
          f"{totals.get('npy', 0)} .npy outputs; {len(all_diffs)} difference(s)")
    if not a.work:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if all_diffs else 0


if __name__ == "__main__":
    sys.exit(main())
