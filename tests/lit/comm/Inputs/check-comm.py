#!/usr/bin/env python3
"""Checks a --ranks run of a kernel of comm-ops.pto against the ops' definitions.

usage: check-comm.py put|putc|get|async|bcast|gather|scatter|reduce OUT_DIR NRANKS

OUT_DIR holds rank0/ .. rankN-1/ as pto-run --out-dir writes them (inputs and outputs). The
expected values follow pto-isa's definitions of TPUT / TGET / TBROADCAST / TGATHER / TSCATTER /
TREDUCE, computed here from the inputs, never from the tool chain: a collective's group has four
members, member k being rank k mod N, and its root is member 1 (rank 1). Prints the number of
values compared and OK, or the first difference and FAIL.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "..", "samples",
                                "allreduce"))
from check import f32, load  # noqa: E402  (the sample's stdlib .npy reader)

W = 64  # a row: 64 f32


def rows(v):
    return [v[i * W:(i + 1) * W] for i in range(len(v) // W)]


def expected(op, out, n):
    """{(rank, name): values} that the run must have produced, and a tolerance."""
    x = [load(out, r, "x") for r in range(n)] if op != "scatter" else None
    member = [k % n for k in range(4)]
    want, tol = {}, 0.0
    if op == "put":
        for r in range(n):
            want[(r, "y")] = x[(r - 1) % n]
            # atomic adds from every rank in an order the run chooses: within f32 rounding
            want[(r, "sum")] = [sum(x[q][i] for q in range(n)) for i in range(W)] if r == 0 else [0.0] * W
        tol = 1e-5
    elif op == "putc":  # 4x64 per rank, moved in 2x32 chunks
        for r in range(n):
            want[(r, "y")] = x[(r - 1) % n]
    elif op == "get":
        for r in range(n):
            want[(r, "z")] = x[(r + 1) % n]
    elif op == "async":  # async-ops.pto: a put to the next rank, a get from it, both complete
        for r in range(n):
            want[(r, "y")] = x[(r - 1) % n]
            want[(r, "z")] = x[(r + 1) % n]
            want[(r, "ok")] = [1, 1]
    elif op == "bcast":
        for r in range(n):
            want[(r, "y")] = x[1]
            want[(r, "sig")] = [1]
    elif op == "gather":
        for r in range(n):
            want[(r, "g")] = sum((x[m] for m in member), []) if r == 1 else [0.0] * 4 * W
    elif op == "scatter":
        s = rows(load(out, 1, "s"))
        for r in range(n):
            ks = [k for k in range(4) if member[k] == r]
            want[(r, "y")] = s[ks[-1]] if ks else [0.0] * W  # the last member of that rank wins
    elif op == "reduce":
        order = [member[1]] + [member[k] for k in range(4) if k != 1]
        acc = list(x[order[0]])
        for q in order[1:]:
            acc = [f32(a + b) for a, b in zip(acc, x[q])]
        top = [max(x[m][i] for m in member) for i in range(W)]
        for r in range(n):
            want[(r, "y")] = acc if r == 1 else [0.0] * W
            want[(r, "m")] = top if r == 1 else [0.0] * W
    else:
        raise SystemExit(f"unknown op {op}")
    return want, tol


def main():
    op, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    want, tol = expected(op, out, n)
    count = 0
    for (r, name), values in sorted(want.items()):
        got = load(out, r, name)
        if len(got) != len(values):
            print(f"rank {r} {name}: {len(got)} values, expected {len(values)}\nFAIL")
            return 1
        for i, (g, e) in enumerate(zip(got, values)):
            count += 1
            if abs(g - e) > tol * max(1.0, abs(e)):
                print(f"rank {r} {name}[{i}] = {g}, expected {e}\nFAIL")
                return 1
    print(f"{op}: {n} ranks, {count} values")
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
