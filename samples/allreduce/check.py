#!/usr/bin/env python3
"""Checks a --ranks run of the allreduce or allgather-matmul sample against numpy.

usage: check.py allreduce|allgather-matmul OUT_DIR NRANKS

OUT_DIR holds rank0/ .. rankN-1/ as pto-run --out-dir writes them. The expected values are
numpy's: the sum of every rank's x (in rank order, each add rounded to f32), or the gathered
A (16 rows per rank) times B. Without numpy (CI installs none) the same formulas run on a small
reader of .npy files (little-endian f16 / f32 / i32, C order).
"""
import ast
import struct
import sys

try:
    import numpy as np
except ImportError:
    np = None

CODES = {"<f2": "e", "<f4": "f", "<i4": "i"}


def read_npy(path):
    """The flat values of a version 1 or 2 .npy file, as Python numbers."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:6] != b"\x93NUMPY":
        raise SystemExit(f"{path}: not a .npy file")
    size, start = (struct.unpack("<H", data[8:10])[0], 10) if data[6] == 1 else (
        struct.unpack("<I", data[8:12])[0], 12)
    header = ast.literal_eval(data[start:start + size].decode("latin1"))
    code = CODES[header["descr"]]
    body = data[start + size:]
    count = len(body) // struct.calcsize(code)
    return list(struct.unpack("<%d%s" % (count, code), body))


def f32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def load(out, rank, name):
    path = f"{out}/rank{rank}/{name}.npy"
    return np.load(path).reshape(-1).tolist() if np is not None else read_npy(path)


def check_allreduce(out, n):
    expected = [0.0] * len(load(out, 0, "x"))
    for r in range(n):
        expected = [f32(e + v) for e, v in zip(expected, load(out, r, "x"))]
    return max(abs(y - e) for r in range(n) for y, e in zip(load(out, r, "y"), expected)), 0.0


def check_allgather_matmul(out, n):
    a = []  # the gathered A, 16 * n rows of 32
    for r in range(n):
        s = load(out, r, "a")
        a += [s[i * 32:(i + 1) * 32] for i in range(16)]
    worst = 0.0
    for r in range(n):
        b, c = load(out, r, "b"), load(out, r, "c")
        for i, row in enumerate(a):
            for j in range(32):
                expected = sum(row[k] * b[k * 32 + j] for k in range(32))
                worst = max(worst, abs(c[i * 32 + j] - expected))
    return worst, 1e-3


def main():
    kind, out, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    check = check_allreduce if kind == "allreduce" else check_allgather_matmul
    worst, tolerance = check(out, n)
    print(f"{kind}: {n} ranks, max abs error {worst:.3g}")
    if worst > tolerance:
        print(f"FAIL: above {tolerance}")
        sys.exit(1)
    print("OK")


if __name__ == "__main__":
    main()
