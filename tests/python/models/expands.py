"""Row and column broadcasts (docs/isa/TROWEXPAND*.md, TCOLEXPAND*.md): dst[i,j] =
src1[i,0] (rows) or src1[0,j] (columns), alone or combined with src0[i,j] by the named
binary op; EXPDIF is exp(src0 - s), within the error a rounded difference allows."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from . import core
from .elementwise import BINARY, result, rounded, values
from .registry import Case, Expect, draw_cols, draw_shape, register, rng_of

COMBINE = {"add": "add", "sub": "sub", "mul": "mul", "div": "div", "max": "max", "min": "min"}


def expand_draw(name: str, rowwise: bool, kind: str | None):
    def draw_case(draw, t, arch):
        rng = rng_of(draw)
        rows, cols, vr, vc = draw_shape(draw, t)
        dst = core.Tile("d", t, rows, cols, vr, vc)
        if rowwise:
            s1 = core.Tile("s1", t, rows, core.row_align(t), vr, 1)
        else:
            s1 = core.Tile("s1", t, 1, draw_cols(draw, t, vc), 1, vc)
        specials = draw(st.booleans())
        domain = BINARY[kind][1] if kind in BINARY else None
        b = core.random_values(rng, t, (s1.vrows, s1.vcols), specials=specials and domain is None and t in core.FLOATS,
                               nonzero=domain == "div" and t not in core.FLOATS, no_nan=kind in ("max", "min"))
        vb = values(t, b)
        bb = np.broadcast_to(vb, (vr, vc)) if True else None
        note = f"{rows}x{cols} valid {vr}x{vc}"
        if kind is None:
            text = core.kernel([s1], [dst], [f"{name} %d, %s1"])
            return Case(text, {"g_s1": b}, {"o_d": Expect(t, result(t, np.array(bb)), nan_bits=True)}, note)
        s0 = core.Tile("s0", t, rows, draw_cols(draw, t, vc), vr, vc)
        a = core.random_values(rng, t, (vr, vc), specials=specials, no_nan=kind in ("max", "min"))
        if kind == "div" and t not in core.FLOATS:
            lo, _ = core.int_range(t)
            fix = (np.asarray(values(t, a)) == lo) & (np.asarray(bb) == -1)
            a = np.where(fix, core.wrap(t, np.zeros(a.shape, object)), a)
        va = values(t, a)
        text = core.kernel([s0, s1], [dst], [f"{name} %d, %s0, %s1"])
        if kind == "expdif":
            with np.errstate(all="ignore"):
                exact = np.exp(va - bb)
                want = core.encode(t, exact)
            return Case(text, {"g_s0": a, "g_s1": b},
                        {"o_d": Expect(t, want, check=expdif_check(t, va - bb, exact, want))}, note)
        fn = BINARY[kind][0]
        with np.errstate(all="ignore"):
            want = result(t, fn(t, va, np.array(bb)))
        return Case(text, {"g_s0": a, "g_s1": b},
                    {"o_d": Expect(t, want, signed_zero=kind not in ("max", "min"))}, note)
    return draw_case


UNIT = {"f32": 2.0 ** -24, "f16": 2.0 ** -11, "bf16": 2.0 ** -8}


def expdif_check(t, diff, exact, want):
    """exp(src0 - s): the documents leave the difference's precision open; rounding it to the
    element type moves exp by up to |d| * u relatively, so the bound is (|d| + 1) * u relative
    plus one ulp of the result."""
    def check(got):
        g = core.decode(t, np.asarray(got).reshape(want.shape))
        with np.errstate(all="ignore"):
            tol = (np.abs(diff) + 1) * UNIT[t] * np.abs(exact)
            ok = (np.abs(g - exact) <= tol) | (core.ulp_distance(t, np.asarray(got).reshape(want.shape), want) <= 1)
        ok |= np.isnan(g) & np.isnan(exact)
        ok |= (g == exact)  # infinities
        return ~ok
    return check


def plain_dtypes(op):
    def dtypes(arch):
        from .core import op_table
        return [t for t in op_table()[op].dtypes[arch] if t in core.CARRIER]
    return dtypes


register("trowexpand", "expand", expand_draw("trowexpand", True, None))
register("tcolexpand", "expand", expand_draw("tcolexpand", False, None))
for _k in ("add", "sub", "mul", "div", "max", "min", "expdif"):
    register(f"trowexpand{_k}", "expand", expand_draw(f"trowexpand{_k}", True, _k),
             tolerance="ulp" if _k == "expdif" else "exact")
    register(f"tcolexpand{_k}", "expand", expand_draw(f"tcolexpand{_k}", False, _k),
             tolerance="ulp" if _k == "expdif" else "exact")
