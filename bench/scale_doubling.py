#!/usr/bin/env python3
"""Doubling benchmark of the tools' scale (issue 34, items 4, 5 and 6).

Generates inputs of N, 2N and 4N functions, unwaited events and tile ops, runs the built tools
on each (best of --repeat runs, each timed with its peak memory) and prints the time ratio per
doubling: a linear tool stays near 2x, a quadratic one near 4x. The goal is at most 2.3x, and
pto-as's peak memory at most 40 bytes per input byte on a module of tile ops. With --ref-bin
(another build, e.g. main's) each line also gives that build's peak memory, as a reference.

    bench/scale_doubling.py [--bin build/bin] [--functions 10000] [--events 20000]
                            [--ops 50000] [--repeat 3] [--ref-bin /work/main/build/bin]
"""
import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time

GOAL = 2.3
MEMORY_GOAL = 40.0  # bytes of peak memory per input byte, pto-as on tile ops


def functions_module(n):
    lines = ["module {"]
    for i in range(n):
        lines.append(f"  func.func @f{i}(%o: !pto.ptr<i64>) attributes {{pto.entry}} {{\n    return\n  }}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def events_module(n):
    lines = ["tile %a, %b, %c : !pto.tile<f32, 16, 16>"]
    lines += [f"tadd %c, %a, %b record(%e{i})" for i in range(n)]  # never waited on: dropped
    return "\n".join(lines) + "\n"


def ops_module(n):
    lines = ["tile %a, %b, %c : !pto.tile<f32, 16, 16>"]
    lines += ["tadd %c, %a, %b" if i % 2 == 0 else "tmul %a, %c, %b" for i in range(n)]
    return "\n".join(lines) + "\n"


def run(cmd, repeat):
    """Best wall time (s) and the peak RSS (MB) of that run."""
    best = None
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        start = time.perf_counter()
        proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        elapsed = time.perf_counter() - start
        if proc.returncode not in (0,):
            sys.exit(f"failed ({proc.returncode}): {' '.join(cmd)}")
        # ru_maxrss of children is the largest so far: measure each run in a fresh process.
        peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        if best is None or elapsed < best[0]:
            best = (elapsed, max(peak, before) / 1024.0)
    return best


def peak_mb(cmd):
    """The peak RSS of one run, measured by /usr/bin/time (exact per process)."""
    out = subprocess.run(["/usr/bin/time", "-f", "%M"] + cmd, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True)
    return int(out.stderr.strip().splitlines()[-1]) / 1024.0


def series(title, sizes, make, steps, tmp, repeat, ref_steps=None):
    """The worst time ratio per doubling and the largest bytes per input byte."""
    print(f"\n{title}")
    worst = 0.0
    most = 0.0
    prev = {}
    for n in sizes:
        src = os.path.join(tmp, f"{title.split()[0]}-{n}.pto")
        with open(src, "w") as f:
            f.write(make(n))
        size = os.path.getsize(src)
        refs = dict(ref_steps(src, n)) if ref_steps else {}
        for name, cmd in steps(src, n):
            t, _ = run(cmd, repeat)
            mem = peak_mb(cmd)
            most = max(most, mem * 1048576 / size)
            ratio = ""
            if name in prev:
                r = t / prev[name]
                worst = max(worst, r)
                ratio = f"  x{r:.2f} per doubling"
            prev[name] = t
            ref = ""
            if name in refs:
                ref = f"  (reference {peak_mb(refs[name]) * 1048576 / size:6.1f})"
            print(f"  {name:<22} n={n:<7} {t:8.3f} s  {mem:8.1f} MB  "
                  f"{mem * 1048576 / size:6.1f} B/input byte{ref}{ratio}")
    return worst, most


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default=os.path.join(os.path.dirname(__file__), "..", "build", "bin"))
    ap.add_argument("--functions", type=int, default=10000)
    ap.add_argument("--events", type=int, default=20000)
    ap.add_argument("--ops", type=int, default=50000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--ref-bin", help="another build's bin directory: its peak memory beside ours")
    a = ap.parse_args()
    tool = lambda t: os.path.join(a.bin, t)
    worst = {}
    with tempfile.TemporaryDirectory() as tmp:
        def fn_steps(src, n):
            obj, img = src + ".o", src + ".img"
            return [("pto-as", [tool("pto-as"), src, "-o", obj]),
                    ("pto-ld", [tool("pto-ld"), obj, "-o", img]),
                    ("pto-run --list", [tool("pto-run"), img, "--list"]),
                    ("pto-objdump -d", [tool("pto-objdump"), "-d", img])]
        sizes = lambda n: [n, 2 * n, 4 * n]
        worst["functions"], _ = series("functions (one entry kernel each)", sizes(a.functions),
                                    functions_module, fn_steps, tmp, a.repeat)
        worst["events"], _ = series("events (recorded, never waited on)", sizes(a.events),
                                 events_module,
                                 lambda s, n: [("pto-as --verify-only",
                                                [tool("pto-as"), s, "--verify-only"])],
                                 tmp, a.repeat)
        ref = None
        if a.ref_bin:
            ref = lambda s, n: [("pto-as", [os.path.join(a.ref_bin, "pto-as"), s, "-o", s + ".r.o"])]
        worst["ops"], most = series("ops (tile ops of one function)", sizes(a.ops), ops_module,
                                    lambda s, n: [("pto-as", [tool("pto-as"), s, "-o", s + ".o"])],
                                    tmp, a.repeat, ref)
    print()
    for k, w in worst.items():
        print(f"{k:<10} worst ratio per doubling x{w:.2f} ({'meets' if w <= GOAL else 'over'} "
              f"the {GOAL}x goal)")
    print(f"memory    pto-as at most {most:.1f} B per input byte on tile ops "
          f"({'meets' if most <= MEMORY_GOAL else 'over'} the {MEMORY_GOAL:.0f} B goal)")


if __name__ == "__main__":
    main()
