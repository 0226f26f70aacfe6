"""TSORT32 and TMRGSORT (docs/isa/TSORT32.md, TMRGSORT.md): descending sorts of
(value, index) pairs. The documents do not order equal values or NaN, so values are drawn
without NaN and without repeats inside what one sort compares."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from . import core
from .registry import Case, Expect, register, rng_of


def distinct(rng, t, n):
    """n distinct finite values of t (f32/f16), random order."""
    if t == "f16":
        pool = np.arange(0x0000, 0x7C00, dtype=np.uint16)
        bits = rng.choice(pool, size=n, replace=False) | (rng.integers(0, 2, size=n).astype(np.uint16) << 15)
        v = bits.view(np.float16)
        v[v == 0] = np.float16(0.5)  # +0/-0 compare equal
        return v if len(set(v.astype(np.float64))) == n else distinct(rng, t, n)
    v = (rng.standard_normal(n) * np.exp2(rng.integers(-20, 20, size=n))).astype(np.float32)
    return v if len(set(v.astype(np.float64))) == n else distinct(rng, t, n)


def pair_row(t, vals, idxs) -> np.ndarray:
    """[value, index] pairs in t's carrier: f32 (value, index bits), f16 (value, 0, index lo, hi)."""
    if t == "f32":
        out = np.empty(2 * len(vals), np.uint32)
        out[0::2] = vals.astype(np.float32).view(np.uint32)
        out[1::2] = idxs
        return out.view(np.float32)
    out = np.zeros(4 * len(vals), np.uint16)
    out[0::4] = vals.astype(np.float16).view(np.uint16)
    out[2::4] = (idxs & 0xFFFF).astype(np.uint16)
    out[3::4] = (idxs >> 16).astype(np.uint16)
    return out.view(np.float16)


def tsort32_draw(draw, t, arch):
    rng = rng_of(draw)
    rows = draw(st.integers(1, 4))
    vc = draw(st.integers(1, 96))
    cols = 32 * -(-vc // 32)
    width = 2 if t == "f32" else 4
    src = core.Tile("s0", t, rows, cols, rows, vc)
    idx = core.Tile("ix", "ui32", rows, cols, rows, vc)
    dst = core.Tile("d", t, rows, cols * width, rows, vc * width)
    a = np.stack([distinct(rng, t, vc) for _ in range(rows)])
    ix = rng.integers(0, 2 ** 32, size=(rows, vc), dtype=np.uint64).astype(np.uint32)
    want = []
    for r in range(rows):
        parts = []
        for b in range(0, vc, 32):
            v, i = a[r, b:b + 32], ix[r, b:b + 32]
            order = np.argsort(-v.astype(np.float64), kind="stable")
            parts.append(pair_row(t, v[order], i[order]))
        want.append(np.concatenate(parts))
    temps, extra = [], ""
    if vc % 32:
        temps = [core.Tile("tmp", t, rows, cols * width, rows, cols * width)]
        extra = ", %tmp"
    text = core.kernel([src, idx], [dst], [f"tsort32 %d, %s0, %ix{extra}"], temps=temps)
    return Case(text, {"g_s0": a, "g_ix": ix}, {"o_d": Expect(t, np.stack(want), nan_bits=True)},
                f"{rows} rows, {vc} columns")


def tmrgsort_draw(draw, t, arch):
    """Variant A: one row of 4 sorted blocks of blockLen elements (a multiple of 64), each
    group of 4 blocks merged descending."""
    rng = rng_of(draw)
    width = 2 if t == "f32" else 4
    block = 64 * draw(st.integers(1, 2))
    repeat = draw(st.integers(1, 2))
    pairs_per_block = block // width
    cols = 4 * block * repeat
    rows = []
    for _ in range(4 * repeat):
        v = np.sort(distinct(rng, t, pairs_per_block).astype(np.float64))[::-1].astype(np.float32 if t == "f32" else np.float16)
        rows.append((v, rng.integers(0, 2 ** 32, size=pairs_per_block, dtype=np.uint64).astype(np.uint32)))
    src_row = np.concatenate([pair_row(t, v, i) for v, i in rows])
    want = []
    for g in range(repeat):
        vs = np.concatenate([rows[4 * g + k][0] for k in range(4)])
        ids = np.concatenate([rows[4 * g + k][1] for k in range(4)])
        order = np.argsort(-vs.astype(np.float64), kind="stable")
        want.append(pair_row(t, vs[order], ids[order]))
    src = core.Tile("s0", t, 1, cols, 1, cols)
    dst = core.Tile("d", t, 1, cols, 1, cols)
    text = core.kernel([src], [dst], [f"tmrgsort %d, %s0, {block}"])
    return Case(text, {"g_s0": src_row.reshape(1, -1)}, {"o_d": Expect(t, np.concatenate(want).reshape(1, -1), nan_bits=True)},
                f"blockLen {block}, {repeat} groups")


register("tsort32", "sort", tsort32_draw)
register("tmrgsort", "sort", tmrgsort_draw)
