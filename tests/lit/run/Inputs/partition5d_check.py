"""Runs Inputs/partition5d-dynamic.pto on random 5-D partitions and checks the buffers against a
model of the copy written from pto-isa's TLOAD/TSTORE definition (tile row r is the row
(i0, i1, i2, i3) of the partition in row-major order of the outer indices, cols = the last size).

usage: partition5d_check.py IMG PTO TMPDIR SEED COUNT
Runs the image on the cpu and npu backends and the source on the reference interpreter; prints
one line per case and "ok N" at the end; exits 1 on the first mismatch."""
import random
import struct
import subprocess
import sys

SHAPE = [2, 3, 4, 5, 16]
STRIDES = [960, 320, 80, 16, 1]
TILE_ROWS, TILE_COLS = 32, 16
C_ROWS, C_COLS = 32, 16


def write_npy(path, values, shape):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % "".join(
        "%d," % d for d in shape)
    pad = 64 - (10 + len(header) + 1) % 64
    header = header + " " * pad + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack("<%df" % len(values), *values))


def read_npy(path):
    data = open(path, "rb").read()
    assert data[:6] == b"\x93NUMPY"
    hlen = struct.unpack("<H", data[8:10])[0]
    body = data[10 + hlen:]
    return list(struct.unpack("<%df" % (len(body) // 4), body))


def model(a, off, size):
    total = 1
    for d in SHAPE:
        total *= d
    b = [0.0] * total
    c = [0.0] * (C_ROWS * C_COLS)
    r = 0
    for i0 in range(size[0]):
        for i1 in range(size[1]):
            for i2 in range(size[2]):
                for i3 in range(size[3]):
                    for j in range(size[4]):
                        idx = [off[0] + i0, off[1] + i1, off[2] + i2, off[3] + i3, off[4] + j]
                        e = sum(i * s for i, s in zip(idx, STRIDES))
                        b[e] = a[e]
                        c[r * C_COLS + j] = a[e]
                    r += 1
    return b, c


def random_case(rng):
    while True:
        size = [rng.randint(0, d) for d in SHAPE]
        size[4] = rng.randint(1, TILE_COLS)
        rows = size[0] * size[1] * size[2] * size[3]
        if rows <= TILE_ROWS:
            break
    off = [rng.randint(0, d - s) for d, s in zip(SHAPE, size)]
    return off, size


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        sys.stdout.write("FAILED: %s\n%s%s" % (" ".join(cmd), p.stdout, p.stderr))
        sys.exit(1)


def main():
    img, src, tmp, seed, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(
        sys.argv[5])
    rng = random.Random(seed)
    total = 1
    for d in SHAPE:
        total *= d
    for case in range(count):
        off, size = random_case(rng)
        a = [float(rng.randint(-1000, 1000)) for _ in range(total)]
        write_npy("%s/a.npy" % tmp, a, SHAPE)
        want_b, want_c = model(a, off, size)
        args = ["--arg", "a=%s/a.npy" % tmp, "--zeros", "b=2x3x4x5x16:f32", "--zeros",
                "c=32x16:f32"]
        for k in range(5):
            args += ["--arg", "o%d=%d" % (k, off[k])]
        for k in range(5):
            args += ["--arg", "s%d=%d" % (k, size[k])]
        for how, cmd in (("cpu", ["pto-run", img, "--backend", "cpu"]),
                         ("npu", ["pto-run", img, "--backend", "npu"]), ("ref", ["pto-run", src])):
            run(cmd + args + ["-q", "--out", "b=%s/b.npy" % tmp, "--out", "c=%s/c.npy" % tmp])
            got_b, got_c = read_npy("%s/b.npy" % tmp), read_npy("%s/c.npy" % tmp)
            if got_b != want_b or got_c != want_c:
                print("MISMATCH %s case %d offsets %s sizes %s" % (how, case, off, size))
                sys.exit(1)
        print("case %d offsets %s sizes %s rows %d" % (case, off, size,
                                                       size[0] * size[1] * size[2] * size[3]))
    print("ok %d" % count)


main()
