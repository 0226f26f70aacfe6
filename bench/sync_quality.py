#!/usr/bin/env python3
"""Sync-quality benchmark (issue #29): auto mode beside hand-written sync on the npu model.

Two tables, from one run of the real tools (pto-as, pto-ld, pto-run --backend npu):

1. Every kernel with hand-written sync: the hand version linked as written, beside the same
   source with every sync op stripped and linked in auto mode. Target: ratio <= 1.05 each,
   geometric mean <= 1.0.
2. Natural single-buffer forms (one tile per role, no sync) beside the best hand-pipelined
   version of the same work. Target: ratio <= 1.10.

Every pair must write the same bytes (every buffer parameter, compared with pto-npy at atol 0):
a wrong result is a failure, whatever the cycles. Extra pto-ld options for the auto side
(e.g. --no-multibuf) are passed with --ld-opt.

Usage: sync_quality.py --bin build/bin [--corpus DIR] [--ld-opt=OPT ...] [--work DIR]
"""
import argparse
import math
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# (name, hand source, pto-ld options for the hand version, extra pto-run args[, pto-as options]).
# The *_slots kernels are the multi-buffering PTOAS and PyPTO emit (one tile rebound per iteration
# to base + (i mod n) * size, set_flag_dyn / wait_flag_dyn on the slot; docs/sync.md 2a), placed
# by hand (--pto-level=level3); their hand-pipelined twins with static tiles are pingpong and
# rows-3slot. The corpus ffn
# kernel orders its cube section by hand and leaves its vector section to the linker; it stores
# to GM and loads the same bytes again, which the linker orders from the assembler's GM access
# records (docs/sync.md section 2b) in both versions.
HAND = [
    ("matmul", "samples/matmul/matmul.pto", [], []),
    ("pingpong", "samples/pingpong/pingpong.pto", [], []),
    ("rows-3slot", "bench/sync-quality/rows_3slot.pto", [], []),
    ("exp run-time slots", "bench/sync-quality/exp_slots.pto", [], [], ["--pto-level=level3"]),
    ("rows run-time slots", "bench/sync-quality/rows_slots.pto", [], [], ["--pto-level=level3"]),
    ("rows 8 run-time slots", "bench/sync-quality/rows_8slots.pto", [], [], ["--pto-level=level3"]),
    ("ffn (corpus)", "@corpus/ffn__ffn__debug_probe2.pto", ["--auto-sync"], []),
]
# (name, natural source, hand-pipelined source, extra pto-run args)
NATURAL = [
    ("rows 1 tile/role", "bench/sync-quality/rows_natural.pto", "bench/sync-quality/rows_3slot.pto", []),
    ("exp 1 in/1 out", "bench/sync-quality/exp_natural.pto", "samples/pingpong/pingpong.pto", []),
    ("exp in place", "samples/pingpong/single.pto", "samples/pingpong/pingpong.pto", []),
]

SYNC_LINE = re.compile(r"pto\.(record_event|wait_event|set_flag|wait_flag|set_flag_dyn|"
                       r"wait_flag_dyn|barrier|pipe_barrier)\b")
SYNC_CLAUSE = re.compile(r"\s+(record|wait)\([^)]*\)")
CYCLES = re.compile(r"npu model \([^)]*\): (\d+) cycles")


def strip_sync(text):
    """The source with every sync op removed: sync lines and record(...)/wait(...) clauses."""
    out = []
    for line in text.splitlines():
        if SYNC_LINE.search(line):
            continue
        out.append(SYNC_CLAUSE.sub("", line) if not line.lstrip().startswith("//") else line)
    return "\n".join(out) + "\n"


class Runner:
    def __init__(self, bindir, work, ld_opts):
        self.bin, self.work, self.ld_opts = bindir, work, ld_opts
        self.n = 0

    def tool(self, name, *args):
        r = subprocess.run([os.path.join(self.bin, name), *args], capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"{name} {' '.join(args)}:\n{r.stdout}{r.stderr}")
        return r.stdout + r.stderr

    def run(self, source_text, ld_opts, run_args, as_opts=()):
        """Assembles, links and runs `source_text`; returns (cycles, output dir, link log)."""
        self.n += 1
        base = os.path.join(self.work, f"k{self.n}")
        with open(base + ".pto", "w") as f:
            f.write(source_text)
        self.tool("pto-as", *as_opts, base + ".pto", "-o", base + ".o")
        log = self.tool("pto-ld", base + ".o", "-o", base + ".img", "-v", *ld_opts)
        os.makedirs(base + ".out", exist_ok=True)
        out = self.tool("pto-run", base + ".img", "--backend", "npu", "--auto-args",
                        "--out-dir", base + ".out", *run_args)
        m = CYCLES.search(out)
        if not m:
            raise RuntimeError(f"no cycle count in pto-run's output:\n{out}")
        return int(m.group(1)), base + ".out", log

    def same_outputs(self, a, b):
        for name in sorted(os.listdir(a)):
            r = subprocess.run([os.path.join(self.bin, "pto-npy"), "compare", os.path.join(a, name),
                                os.path.join(b, name), "--atol", "0", "--rtol", "0"],
                               capture_output=True, text=True)
            if r.returncode != 0:
                return False
        return True


def resolve(path, corpus):
    if path.startswith("@corpus/"):
        return os.path.join(corpus, path[len("@corpus/"):]) if corpus else None
    return os.path.join(ROOT, path)


def table(title, rows, limit):
    print(title)
    print(f"  {'kernel':<22}{'hand':>10}{'auto':>10}{'ratio':>8}  same bytes  auto-mode link")
    ratios, misses = [], []
    for name, hand, auto, same, note in rows:
        ratio = auto / hand
        ratios.append(ratio)
        flag = "" if ratio <= limit else f"  (> {limit:.2f})"
        if ratio > limit:
            misses.append(f"{name}: ratio {ratio:.3f} > {limit:.2f}")
        if not same:
            misses.append(f"{name}: different bytes")
        print(f"  {name:<22}{hand:>10}{auto:>10}{ratio:>8.3f}  {'yes' if same else 'NO':<10}  {note}{flag}")
    gm = math.exp(sum(math.log(r) for r in ratios) / len(ratios)) if ratios else float("nan")
    print(f"  {'geometric mean':<42}{gm:>8.3f}\n")
    return misses, gm


def link_note(log):
    lines = [l.split(": ", 2)[-1] for l in log.splitlines() if "pto-ld: @" in l]
    return "; ".join(lines)[:90]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", required=True, help="the build's bin directory")
    ap.add_argument("--corpus", default="/work/shared/corpus/pto-kernels")
    ap.add_argument("--ld-opt", action="append", default=[], help="a pto-ld option for the auto side")
    ap.add_argument("--work", help="keep the files here (default: a temporary directory)")
    a = ap.parse_args()
    corpus = a.corpus if a.corpus and os.path.isdir(a.corpus) else None
    with tempfile.TemporaryDirectory() as tmp:
        work = a.work or tmp
        os.makedirs(work, exist_ok=True)
        r = Runner(a.bin, work, a.ld_opt)
        rows = []
        for name, src, hand_ld, args, *as_opts in HAND:
            path = resolve(src, corpus)
            if path is None:
                continue
            text = open(path).read()
            as_opts = as_opts[0] if as_opts else []
            hc, hd, _ = r.run(text, hand_ld, args, as_opts)
            ac, ad, log = r.run(strip_sync(text), a.ld_opt, args, as_opts)
            rows.append((name, hc, ac, r.same_outputs(hd, ad), link_note(log)))
        ok1, gm1 = table("Hand-written sync vs the same kernel stripped, auto mode (target <= 1.05, mean <= 1.0)",
                         rows, 1.05)
        rows = []
        for name, nat, hand, args in NATURAL:
            hc, hd, _ = r.run(open(resolve(hand, corpus)).read(), [], args)
            ac, ad, log = r.run(open(resolve(nat, corpus)).read(), a.ld_opt, args)
            rows.append((name, hc, ac, r.same_outputs(hd, ad), link_note(log)))
        ok2, _ = table("Natural single-buffer form, auto mode, vs hand-pipelined (target <= 1.10)", rows, 1.10)
    misses = ok1 + ok2 + ([f"geometric mean {gm1:.3f} > 1.0"] if gm1 > 1.0 else [])
    print("all targets met" if not misses else "targets not met: " + "; ".join(misses))
    return 0 if not misses else 1


if __name__ == "__main__":
    sys.exit(main())
