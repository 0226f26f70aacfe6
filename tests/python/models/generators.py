"""Tiles made from scalars (docs/isa/TEXPANDS.md, TCI.md, TTRI.md, TSETVAL.md, TRANDOM.md):
a broadcast scalar, an ascending sequence, a triangle mask, one element set by storage index,
and Philox-4x32 random bits."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from . import core
from .registry import Case, Expect, draw_shape, register, rng_of

BIT_TYPES = [t for t in core.CARRIER]


def table_dtypes(op):
    def dtypes(arch):
        return [t for t in core.op_table()[op].dtypes[arch] if t in core.CARRIER]
    return dtypes


def texpands_draw(draw, t, arch):
    rng = rng_of(draw)
    rows, cols, vr, vc = draw_shape(draw, t)
    dst = core.Tile("d", t, rows, cols, vr, vc)
    if t in core.FLOATS or t in core.INTS:
        s = core.random_values(rng, t, (1, 1), specials=draw(st.booleans()))
        lit = core.scalar_literal(t, s[0, 0])
    else:  # 8-bit float formats: any bit pattern
        s = rng.integers(0, 256, size=(1, 1)).astype(np.uint8)
        lit = f"0x{int(s[0, 0]):02X}"
    text = core.kernel([], [dst], [f"texpands %d, {lit} : {dst.type()}"])
    return Case(text, {}, {"o_d": Expect(t, np.broadcast_to(s, (vr, vc)).copy(), nan_bits=True)},
                f"{rows}x{cols} valid {vr}x{vc} scalar {lit}")


def tci_draw(draw, t, arch):
    """dst_k = S + k over the valid elements in row-major order (the linearisation the
    documents leave to the layout: row-major for these row-major tiles), wrapping."""
    rows, cols, vr, vc = draw_shape(draw, t)
    dst = core.Tile("d", t, rows, cols, vr, vc)
    lo, hi = core.int_range(t)
    start = draw(st.one_of(st.integers(-100, 100), st.integers(max(lo, -(2 ** 31)), min(hi, 2 ** 31 - 1))))
    k = np.arange(vr * vc, dtype=object).reshape(vr, vc)
    text = core.kernel([], [dst], [f"pto.tci ins(%c : i32) outs(%d : {dst.type()})"], consts=[("c", str(start), "i32")])
    return Case(text, {}, {"o_d": Expect(t, core.wrap(t, k + start))}, f"{rows}x{cols} valid {vr}x{vc} start {start}")


def ttri_draw(draw, t, arch):
    rows, cols, vr, vc = draw_shape(draw, t)
    dst = core.Tile("d", t, rows, cols, vr, vc)
    d = draw(st.integers(-cols, cols))
    upper = draw(st.booleans())
    i, j = np.indices((vr, vc))
    ones = (j >= i + d) if upper else (j <= i + d)
    if t in core.FLOATS:
        one = core.encode(t, np.array(1.0))
    elif t in core.INTS:
        one = core.wrap(t, np.array(1, dtype=object))
    else:  # 8-bit float formats: the encoding of 1.0
        from .conversions import to_small_float
        one = np.array(to_small_float(t, 1.0, "CAST_RINT", True, False) if t != "f8E8M0" else 127, dtype=np.uint8)
    zero = np.zeros((), dtype=core.CARRIER[t])
    want = np.where(ones, one, zero).astype(core.CARRIER[t])
    attr = " {upperOrLower = 1 : i32}" if upper else ""
    text = core.kernel([], [dst], [f"pto.ttri ins(%c : i32) outs(%d : {dst.type()}){attr}"], consts=[("c", str(d), "i32")])
    return Case(text, {}, {"o_d": Expect(t, want)}, f"{rows}x{cols} valid {vr}x{vc} diagonal {d} upper {upper}")


def tsetval_draw(draw, t, arch):
    """TSETVAL: the element at storage index `offset` of the (row-major) tile becomes val."""
    rng = rng_of(draw)
    rows, cols, _, _ = draw_shape(draw, t)
    tile = core.Tile("d", t, rows, cols, rows, cols)
    a = rng.integers(0, 256, size=(rows, cols * core.nbytes(t))).astype(np.uint8).view(core.CARRIER[t]).reshape(rows, cols)
    v = rng.integers(0, 256, size=core.nbytes(t)).astype(np.uint8).view(core.CARRIER[t])
    off = draw(st.integers(0, rows * cols - 1))
    want = a.copy().reshape(-1)
    want[off] = v[0]
    lit = f"0x{int(core.raw(t, v)[0]):X}" if t not in core.INTS else str(int(v[0]))
    text = core.kernel([tile], [tile], [f"tsetval %d, {off}, {lit}"])
    return Case(text, {"g_d": a}, {"o_d": Expect(t, want.reshape(rows, cols), nan_bits=True)},
                f"{rows}x{cols} offset {off} value {lit}")


# ----- TRANDOM: Philox-4x32 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC'11)

PHILOX_M = (0xD2511F53, 0xCD9E8D57)
PHILOX_W = (0x9E3779B9, 0xBB67AE85)
MASK32 = 0xFFFFFFFF


def philox4x32(counter: int, key: tuple[int, int], rounds: int) -> list[int]:
    c = [(counter >> (32 * k)) & MASK32 for k in range(4)]
    k0, k1 = key
    for r in range(rounds):
        if r:
            k0, k1 = (k0 + PHILOX_W[0]) & MASK32, (k1 + PHILOX_W[1]) & MASK32
        p0, p1 = PHILOX_M[0] * c[0], PHILOX_M[1] * c[2]
        c = [(p1 >> 32) ^ c[1] ^ k0, p1 & MASK32, (p0 >> 32) ^ c[3] ^ k1, p0 & MASK32]
    return c


def trandom_values(vr, vc, key, counter, rounds):
    """The A5 order (docs/runtime.md): 64 lanes per pass of 256 columns, lane l runs on
    counter + l and writes columns 256p + 4l .. 4l + 3; +64 per pass, and after a row's last
    pass + ((validCols - 1) % 64) + 1."""
    out = np.zeros((vr, vc), dtype=np.uint64)
    ctr = counter
    passes = -(-vc // 256)
    for i in range(vr):
        for p in range(passes):
            for lane in range(64):
                col = 256 * p + 4 * lane
                if col >= vc:
                    break
                words = philox4x32((ctr + lane) % (1 << 128), key, rounds)
                for w in range(4):
                    if col + w < vc:
                        out[i, col + w] = words[w]
            ctr += 64 if p < passes - 1 else ((vc - 1) % 64) + 1
    return out.astype(np.uint32)


def trandom_draw(draw, t, arch):
    rows = draw(st.integers(1, 3))
    cols = 8 * draw(st.integers(1, 40))
    vr, vc = draw(st.integers(1, rows)), draw(st.integers(1, cols))
    dst = core.Tile("d", t, rows, cols, vr, vc)
    words = [draw(st.integers(0, MASK32)) for _ in range(6)]
    if draw(st.booleans()):
        words[2:6] = [MASK32 - draw(st.integers(0, 70)), MASK32, MASK32, MASK32]  # counter wrap
    rounds = draw(st.sampled_from([7, 10]))
    consts = [(f"w{k}", str(w - (1 << 32) if w >= 1 << 31 else w), "i32") for k, w in enumerate(words)]
    attr = " {rounds = 7 : i32}" if rounds == 7 else ""
    body = [f"pto.trandom ins(%w0, %w1, %w2, %w3, %w4, %w5{attr} : i32, i32, i32, i32, i32, i32) outs(%d : {dst.type()})"]
    counter = sum(w << (32 * k) for k, w in enumerate(words[2:6]))
    want = trandom_values(vr, vc, (words[0], words[1]), counter, rounds).view(core.CARRIER[t])
    return Case(core.kernel([], [dst], body, consts=consts), {}, {"o_d": Expect(t, want)},
                f"{rows}x{cols} valid {vr}x{vc} key/counter {words} rounds {rounds}")


register("texpands", "generator", texpands_draw, dtypes=table_dtypes("texpands"))
register("tci", "generator", tci_draw)
register("ttri", "generator", ttri_draw, dtypes=table_dtypes("ttri"))
register("tsetval", "generator", tsetval_draw, dtypes=table_dtypes("tsetval"))
register("trandom", "generator", trandom_draw)
