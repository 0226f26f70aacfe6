"""Kernels with more tile descriptors than one bank of B.IOT indices (64) holds, their input and
their expected output, the latter computed here from the definitions of TLOAD, TADD and TSUB on
i32 (wrapping two's complement addition), not by any of the tools.

usage: many_tiles.py KIND WHAT [PATH]
  KIND: window  200 tiles, at most 30 live at once: t0..t28 are rows 0..28 of x (29x8 i32),
                t[i] = t[i-1] + t[i-29] for i = 29..199, z = t199
        alllive 100 tiles loaded from rows 0..99 of x (100x8 i32), all live at once, then
                s1 = t98 - t99, s[k] = t[99-k] - s[k-1] for k = 2..99 (99 more tiles), z = s99
  WHAT: pto (the kernel on stdout), input PATH (x as .npy), expected (z, one value per line),
        compare EXPECTED OUT... (each OUT the output of pto-run --print z: prints "ok N values
        on M runs" or the first difference, exit 1)"""
from npy_write import write_npy
import sys

COLS = 8


def wrap(v):
    return (v + 2**31) % 2**32 - 2**31


def rows_of(kind):
    return 29 if kind == "window" else 100


def input_values(kind):
    # Distinct values of both signs, large enough that the sums wrap.
    return [wrap((r * 7919 + c * 104729) * 40503 - 2**30) for r in range(rows_of(kind)) for c in range(COLS)]


def expected(kind):
    x = input_values(kind)
    row = [x[r * COLS:(r + 1) * COLS] for r in range(rows_of(kind))]
    if kind == "window":
        t = list(row)
        for i in range(29, 200):
            t.append([wrap(a + b) for a, b in zip(t[i - 1], t[i - 29])])
        return t[199]
    s = row[99]
    for k in range(1, 100):
        s = [wrap(a - b) for a, b in zip(row[99 - k], s)]
    return s


def kernel(kind):
    rows = rows_of(kind)
    ty = "!pto.tile<i32, 1, %d>" % COLS
    out = ["kernel @k(%%x: !pto.tensor_view<%dx%dxi32>, %%z: !pto.tensor_view<1x%dxi32>) {" %
           (rows, COLS, COLS)]
    if kind == "window":
        names = ["%%t%d" % i for i in range(200)]
        out += ["  tile %s : %s" % (n, ty) for n in names]
        out += ["  tload %%t%d, %%x[%d, 0]" % (i, i) for i in range(29)]
        out += ["  tadd %%t%d, %%t%d, %%t%d" % (i, i - 1, i - 29) for i in range(29, 200)]
        out.append("  tstore %z[0, 0], %t199")
    else:
        out += ["  tile %%t%d : %s" % (i, ty) for i in range(100)]
        out += ["  tile %%s%d : %s" % (k, ty) for k in range(1, 100)]
        out += ["  tload %%t%d, %%x[%d, 0]" % (i, i) for i in range(100)]
        out.append("  tsub %s1, %t98, %t99")
        out += ["  tsub %%s%d, %%t%d, %%s%d" % (k, 99 - k, k - 1) for k in range(2, 100)]
        out.append("  tstore %z[0, 0], %s99")
    out.append("}")
    return "\n".join(out) + "\n"


def printed_values(path):
    # pto-run --print: a header line "%z: i32[1x8] =", then indented lines of values (the npu
    # model's report follows them).
    lines = open(path).read().split("\n")
    start = next(i for i, l in enumerate(lines) if l.startswith("%z:"))
    values = []
    for line in lines[start + 1:]:
        if not line.startswith("  ") or not all(v.lstrip("-").isdigit() for v in line.split()):
            break
        values += [int(v) for v in line.split()]
    return values


def compare(expected_path, outputs):
    want = [int(v) for v in open(expected_path).read().split()]
    for path in outputs:
        got = printed_values(path)
        if got != want:
            print("mismatch in %s: %s, expected %s" % (path, got, want))
            sys.exit(1)
    print("ok %d values on %d runs" % (len(want), len(outputs)))


def main():
    kind, what = sys.argv[1], sys.argv[2]
    if what == "pto":
        sys.stdout.write(kernel(kind))
    elif what == "input":
        write_npy(sys.argv[3], input_values(kind), [rows_of(kind), COLS], "<i4")
    elif what == "expected":
        sys.stdout.write("".join("%d\n" % v for v in expected(kind)))
    else:
        compare(sys.argv[3], sys.argv[4:])


main()
