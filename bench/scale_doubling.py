#!/usr/bin/env python3
"""Doubling benchmark of the tools' scale (issue 34, items 4, 5 and 6).

Generates inputs of N, 2N and 4N functions, unwaited events and tile ops, runs the built tools
on each (best of --repeat runs, each timed with its peak memory) and prints the time ratio per
doubling: a linear tool stays near 2x, a quadratic one near 4x. The goal is at most 2.3x, and
pto-as's peak memory at most 40 bytes per input byte on a module of tile ops. On tile ops each
tool (pto-as, then pto-ld, pto-run --list and pto-objdump -d on its output) is measured beside a
reference run in the same run, per byte of its own input: llvm-mc -filetype=obj on x86-64 text
of the module's size, ld.lld and llvm-objdump -d on that object; with --ref-bin (another build,
e.g. main's) pto-as also beside that build's.

The tile ops are measured twice: as bare statements and inside one kernel body; a chain of
scalar additions in one function is measured too. All three are built one statement at a time
as the parser reads them, and each has the same memory goal.

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


def kernel_ops_module(n):
    """The same tile ops inside one kernel body, as a frontend writes them: built one statement
    at a time as the bare statements are, measured on its own."""
    lines = ["kernel @k() {", "  tile %a, %b, %c : !pto.tile<f32, 16, 16>"]
    lines += ["  tadd %c, %a, %b" if i % 2 == 0 else "  tmul %a, %c, %b" for i in range(n)]
    lines.append("}")
    return "\n".join(lines) + "\n"


def scalar_ops_module(n):
    """A chain of n scalar additions in one function (called by the entry kernel)."""
    lines = ["module {", "  func.func private @chain(%x: i32) -> i32 {"]
    prev = "%x"
    for i in range(n):
        lines.append(f"    %v{i} = arith.addi {prev}, %x : i32")
        prev = f"%v{i}"
    lines += [f"    return {prev} : i32", "  }",
              "  func.func @k(%x: i32) attributes {pto.entry} {",
              "    %r = func.call @chain(%x) : (i32) -> i32", "    return", "  }", "}"]
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


def x86_text(size):
    """x86-64 assembly of at least `size` bytes (loops of loads, adds, stores and calls): what
    llvm-mc, the reference, assembles beside a PTO module of the same size."""
    parts, total, f = [".text\n"], 6, 0
    while total < size:
        body = [f".globl fn{f}\n.type fn{f},@function\nfn{f}:\n  pushq %rbx\n"]
        for loop in range(10):
            lab = f".L{f}_{loop}"
            body.append(f"  xorl %ecx, %ecx\n{lab}:\n  vmovups (%rdi,%rcx,4), %ymm0\n"
                        f"  vaddps (%rsi,%rcx,4), %ymm0, %ymm0\n  vmovups %ymm0, (%rdx,%rcx,4)\n"
                        f"  addq $8, %rcx\n  cmpq $256, %rcx\n  jb {lab}\n  call fn0\n")
        body.append("  popq %rbx\n  ret\n")
        text = "".join(body)
        parts.append(text)
        total += len(text)
        f += 1
    return "".join(parts)


def series(title, sizes, make, steps, tmp, repeat, ref_steps=None):
    """The worst time ratio per doubling and each step's bytes per input byte at the largest size.

    ref_steps(src, n) gives, by step name, (label, command, input bytes) of a reference run
    beside it (measured in the same run, its peak per byte of its own input)."""
    print(f"\n{title}")
    worst = 0.0
    most = {}
    prev = {}
    for n in sizes:
        src = os.path.join(tmp, f"{title.split()[0]}-{n}.pto")
        with open(src, "w") as f:
            f.write(make(n))
        size = os.path.getsize(src)
        refs = ref_steps(src, n) if ref_steps else {}
        for name, cmd in steps(src, n):
            t, _ = run(cmd, repeat)
            mem = peak_mb(cmd)
            per_byte = mem * 1048576 / size
            most[name] = per_byte  # the sizes grow: the last is the largest input's
            ratio = ""
            if name in prev:
                r = t / prev[name]
                worst = max(worst, r)
                ratio = f"  x{r:.2f} per doubling"
            prev[name] = t
            ref = ""
            for label, ref_cmd, ref_size in refs.get(name, []):
                ref += f"  ({label} {peak_mb(ref_cmd) * 1048576 / ref_size:6.1f})"
            print(f"  {name:<22} n={n:<7} {t:8.3f} s  {mem:8.1f} MB  "
                  f"{per_byte:6.1f} B/input byte{ref}{ratio}")
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

        def ops_refs(src, n):
            """llvm-mc on x86-64 text of the module's size, ld.lld and llvm-objdump -d on its
            object (and, with --ref-bin, the other build's pto-as)."""
            xs = src + ".s"
            with open(xs, "w") as f:
                f.write(x86_text(os.path.getsize(src)))
            xo, xe = xs + ".o", xs + ".so"
            subprocess.run(["llvm-mc", "-filetype=obj", "-triple=x86_64-linux-gnu", xs, "-o", xo],
                           check=True)
            subprocess.run(["ld.lld", "-shared", xo, "-o", xe], check=True)
            refs = {"pto-as": [("llvm-mc", ["llvm-mc", "-filetype=obj",
                                            "-triple=x86_64-linux-gnu", xs, "-o", xo],
                                os.path.getsize(xs))],
                    "pto-ld": [("ld.lld", ["ld.lld", "-shared", xo, "-o", xe],
                                os.path.getsize(xs))],
                    "pto-objdump -d": [("llvm-objdump -d", ["llvm-objdump", "-d", xe],
                                        os.path.getsize(xs))]}
            if a.ref_bin:
                refs["pto-as"].append(("ref-bin", [os.path.join(a.ref_bin, "pto-as"), src, "-o",
                                                   src + ".r.o"], os.path.getsize(src)))
            return refs

        worst["ops"], most = series("ops (tile ops of one function)", sizes(a.ops), ops_module,
                                    fn_steps, tmp, a.repeat, ops_refs)
        worst["body ops"], body = series(
            "body (the tile ops inside one kernel body)", sizes(a.ops), kernel_ops_module,
            lambda s, n: [("pto-as", [tool("pto-as"), s, "-o", s + ".o"])], tmp, a.repeat)
        worst["scalar"], scalar = series(
            "scalar (arith.addi in one function)", sizes(a.ops), scalar_ops_module,
            lambda s, n: [("pto-as", [tool("pto-as"), s, "-o", s + ".o"])], tmp, a.repeat)
    print()
    for k, w in worst.items():
        print(f"{k:<10} worst ratio per doubling x{w:.2f} ({'meets' if w <= GOAL else 'over'} "
              f"the {GOAL}x goal)")
    for name, m in most.items():
        goal = (f" ({'meets' if m <= MEMORY_GOAL else 'over'} the {MEMORY_GOAL:.0f} B goal)"
                if name == "pto-as" else "")
        print(f"memory    {name}: {m:.1f} B of peak memory per .pto byte on the largest module of "
              f"tile ops{goal}")
    for what, result in (("the tile ops in one kernel body", body),
                         ("the scalar ops in one function", scalar)):
        m = result["pto-as"]
        print(f"memory    pto-as, {what}: {m:.1f} B per .pto byte "
              f"({'meets' if m <= MEMORY_GOAL else 'over'} the {MEMORY_GOAL:.0f} B goal)")


if __name__ == "__main__":
    main()
