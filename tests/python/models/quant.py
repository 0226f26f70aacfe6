"""TQUANT and TDEQUANT (the seed document TDEQUANT, docs/isa/TDEQUANT.md, TQUANT.md):
affine (de)quantisation with per-row parameters, each f32 operation rounded to nearest even.

TDEQUANT: dst = (f32(src) - offset[i]) * scale[i].
TQUANT (INT8): q = saturate(rint(x * scale[i] (+ offset[i]))); its document gives no formula,
so the model follows the seed's inverse relation and docs/runtime.md's A5 reading (i8 is the
symmetric form without offset, ui8 the asymmetric one); NaN gives 0."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from . import core
from .registry import Case, Expect, draw_shape, register, rng_of


def f32(x):
    with np.errstate(all="ignore"):
        return np.asarray(x, dtype=np.float64).astype(np.float32).astype(np.float64)


def tdequant_draw(draw, t, arch):
    rng = rng_of(draw)
    rows, cols, vr, vc = draw_shape(draw, t)
    src = core.Tile("s0", t, rows, cols, vr, vc)
    dst = core.Tile("d", "f32", rows, -(-vc // 8) * 8, vr, vc)
    sc = core.Tile("sc", "f32", rows, 8, vr, 1)
    of = core.Tile("of", "f32", rows, 8, vr, 1)
    a = core.random_values(rng, t, (vr, vc), specials=True)
    scale = core.random_values(rng, "f32", (vr, 1))
    offset = (rng.integers(-300, 300, size=(vr, 1)) / rng.choice([1.0, 4.0], size=(vr, 1))).astype(np.float32)
    want = f32(f32(a.astype(np.float64) - offset.astype(np.float64)) * scale.astype(np.float64))
    text = core.kernel([src, sc, of], [dst], ["tdequant %d, %s0, %sc, %of"])
    return Case(text, {"g_s0": a, "g_sc": scale, "g_of": offset},
                {"o_d": Expect("f32", want.astype(np.float32))}, f"{rows}x{cols} valid {vr}x{vc}")


def tquant_draw(draw, t, arch):
    rng = rng_of(draw)
    rows, cols, vr, vc = draw_shape(draw, t)
    src = core.Tile("s0", "f32", rows, -(-vc // 8) * 8, vr, vc)
    dst = core.Tile("d", t, rows, cols, vr, vc)
    sc = core.Tile("sc", "f32", rows, 8, vr, 1)
    of = core.Tile("of", "f32", rows, 8, vr, 1)
    x = core.random_values(rng, "f32", (vr, vc), specials=draw(st.booleans()))
    x = np.where(rng.random((vr, vc)) < 0.3, (rng.integers(-600, 600, size=(vr, vc)) / 2).astype(np.float32), x)
    scale = np.where(rng.random((vr, 1)) < 0.5, np.float32(1.0), rng.uniform(0.01, 40, size=(vr, 1)).astype(np.float32)).astype(np.float32)
    offset = rng.integers(-20, 140, size=(vr, 1)).astype(np.float32)
    v = f32(x.astype(np.float64) * scale.astype(np.float64))
    loads, body = [src, sc], "tquant %d, %s0, %sc"
    args = {"g_s0": x, "g_sc": scale}
    if t == "ui8":
        v = f32(v + offset.astype(np.float64))
        loads.append(of)
        body += ", %of"
        args["g_of"] = offset
    lo, hi = core.int_range(t)
    with np.errstate(all="ignore"):
        q = np.clip(np.rint(np.nan_to_num(v, nan=0.0, posinf=hi, neginf=lo)), lo, hi)
    text = core.kernel(loads, [dst], [body])
    return Case(text, args, {"o_d": Expect(t, q.astype(core.CARRIER[t]))}, f"{rows}x{cols} valid {vr}x{vc}")


register("tdequant", "quant", tdequant_draw, dtypes=lambda arch: ["i8", "i16"])
register("tquant", "quant", tquant_draw, dtypes=lambda arch: ["i8", "ui8"])
