"""Row and column reductions (docs/isa/TROW*.md, TCOL*.md): dst[i,0] = op over j of src[i,j]
(rows), dst[0,j] = op over i of src[i,j] (columns), over the source's valid region.

The documents give the mathematical sum/product and leave the order open (the A2/A3 float
path is a binary tree, the integer path blockwise), so float sums and products are compared
within the bound any order meets (docs/numerics.md, "reductions"); max/min and integer
reductions are exact (integers wrap). Arg-reductions: any index whose element equals the
extreme is accepted (the documents do not say which of equal elements wins)."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

from . import core
from .elementwise import ints, values
from .registry import Case, Expect, draw_shape, register, rng_of

EPS = {"f32": 2.0 ** -24, "f16": 2.0 ** -11, "bf16": 2.0 ** -8}


def sum_check(t, exact, absum, count, got_shape):
    """|got - exact| <= count * u * sum|x| (+ the result's own rounding), the bound of
    recursive summation in any order (Higham, Accuracy and Stability, 4.2)."""
    def check(got):
        g = core.decode(t, np.asarray(got).reshape(got_shape))
        u = EPS[t]
        # accumulation in f32 for f16/bf16 is allowed: then the bound is smaller; the
        # tolerance below is the documented-type bound plus half an ulp of the result
        tol = count * u * absum + np.abs(exact) * u + _tiny(t)
        with np.errstate(all="ignore"):
            ok = np.abs(g - exact) <= tol
        inf_ok = np.isinf(exact) & (g == exact)
        big = ~np.isfinite(exact) | (absum > _max(t) / 2)  # overflow somewhere: any inf/nan/big
        return ~(ok | inf_ok | big)
    return check


def _tiny(t):
    return {"f32": 2.0 ** -149, "f16": 2.0 ** -24, "bf16": 2.0 ** -133}[t]


def _max(t):
    return {"f32": 3.4028234663852886e38, "f16": 65504.0, "bf16": 3.3895313892515355e38}[t]


def prod_check(t, exact, count, got_shape, widest, narrowest):
    """Within the bound of a product in any order; lines where some order's partial product
    leaves the type's range (`widest`: the product of the factors above 1 in magnitude,
    `narrowest`: of those below 1) may give anything, as the documents leave the order open."""
    small = 2.0 ** -100 if t != "f16" else 2.0 ** -12

    def check(got):
        g = core.decode(t, np.asarray(got).reshape(got_shape))
        u = EPS[t]
        tol = ((1 + u) ** (count + 1) - 1) * np.abs(exact) + _tiny(t) * 2 ** count
        with np.errstate(all="ignore"):
            ok = np.abs(g - exact) <= tol
        out_of_range = (np.abs(exact) > _max(t) / 4) | (np.abs(exact) < small)
        out_of_range |= (widest > _max(t) / 4) | (narrowest < small)
        return ~(ok | out_of_range)
    return check


def argext_check(src_vals, axis, want_max, got_shape):
    ext = src_vals.max(axis=axis) if want_max else src_vals.min(axis=axis)

    def check(got):
        idx = np.asarray(got).astype(np.int64).reshape(got_shape).ravel()
        n = src_vals.shape[axis]
        bad = (idx < 0) | (idx >= n)
        pick = np.clip(idx, 0, n - 1)
        chosen = src_vals[np.arange(len(idx)), pick] if axis == 1 else src_vals[pick, np.arange(len(idx))]
        bad |= chosen != ext
        return bad.reshape(got_shape)
    return check


def reduction_draw(name: str, axis: int):
    """axis 1: row reduction (dst vr x 1), axis 0: column reduction (dst 1 x vc)."""
    kind = name[4:] if name.startswith("trow") else name[4:]

    def draw_case(draw, t, arch):
        rng = rng_of(draw)
        rows, cols, vr, vc = draw_shape(draw, t, max_rows=12, max_units=6)
        arg = kind.startswith("arg")
        dt = "i32" if arg else t
        src = core.Tile("s0", t, rows, cols, vr, vc)
        if axis == 1:
            dst = core.Tile("d", dt, rows, core.row_align(dt), vr, 1)
            shape = (vr, 1)
        else:
            dst = core.Tile("d", dt, 1, core.row_align(dt) * -(-vc // core.row_align(dt)), 1, vc)
            shape = (1, vc)
        specials = draw(st.booleans())
        if kind in ("sum", "prod") and t in core.FLOATS:
            a = core.random_values(rng, t, (vr, vc), specials=False)
        elif kind == "prod" and t in core.INTS:
            a = core.random_values(rng, t, (vr, vc), specials=specials, lo=-3, hi=3)
        else:
            a = core.random_values(rng, t, (vr, vc), specials=specials, no_nan=True)
        v = values(t, a)
        tmp = []
        body = f"{name} %d, %s0"
        if draw(st.booleans()) and not (axis == 0 and kind in ("max", "min", "prod")):
            tmp = [core.Tile("tmp", t, rows, cols, rows, cols)]
            body += ", %tmp"
        note = f"{rows}x{cols} valid {vr}x{vc}"
        text = core.kernel([src], [dst], [body], temps=tmp)
        if arg:
            check = argext_check(np.asarray(v, dtype=np.float64 if t in core.FLOATS else object), axis, kind == "argmax", shape)
            return Case(text, {"g_s0": a}, {"o_d": Expect("i32", np.zeros(shape, np.int32), check=check)}, note)
        if kind in ("max", "min"):
            if t in core.FLOATS:
                r = v.max(axis=axis) if kind == "max" else v.min(axis=axis)
            else:
                r = np.array([max(x) if kind == "max" else min(x) for x in (v if axis == 1 else v.T)], dtype=object)
            return Case(text, {"g_s0": a}, {"o_d": Expect(t, core.encode(t, np.asarray(r).reshape(shape)), signed_zero=False)}, note)
        lines = v if axis == 1 else v.T
        if t in core.INTS:
            r = [sum(x) if kind == "sum" else math.prod(x) for x in lines]
            return Case(text, {"g_s0": a}, {"o_d": Expect(t, core.wrap(t, np.array(r, dtype=object).reshape(shape)))}, note)
        n = lines.shape[1]
        if kind == "sum":
            exact = np.array([math.fsum(x) for x in lines]).reshape(shape)
            absum = np.abs(lines).sum(axis=1).reshape(shape)
            want = core.encode(t, exact)
            return Case(text, {"g_s0": a}, {"o_d": Expect(t, want, check=sum_check(t, exact, absum, n, shape))}, note)
        exact = np.array([math.prod(x) for x in lines]).reshape(shape)
        mags = np.abs(np.asarray(lines, dtype=np.float64))
        with np.errstate(all="ignore"):
            widest = np.prod(np.maximum(mags, 1.0), axis=1).reshape(shape)
            narrowest = np.prod(np.where(mags == 0, 1.0, np.minimum(mags, 1.0)), axis=1).reshape(shape)
        want = core.encode(t, exact)
        check = prod_check(t, exact, n, shape, widest, narrowest)
        return Case(text, {"g_s0": a}, {"o_d": Expect(t, want, check=check)}, note)
    return draw_case


for _k in ("sum", "max", "min", "prod", "argmax", "argmin"):
    register(f"trow{_k}", "reduction", reduction_draw(f"trow{_k}", 1),
             tolerance="sum-bound" if _k in ("sum", "prod") else "exact")
    register(f"tcol{_k}", "reduction", reduction_draw(f"tcol{_k}", 0),
             tolerance="sum-bound" if _k in ("sum", "prod") else "exact")
