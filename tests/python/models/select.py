"""Comparisons, selections and the partial ops (docs/isa/TCMP.md, TCMPS.md, TSEL.md,
TSELS.md, TPART*.md).

TCMP's documents leave the mask's packing to the implementation; this project stores one
element per predicate, 1 or 0 in the destination's type (docs/runtime.md), which the model
follows. Predicates are IEEE comparisons (NaN compares false except `ne`)."""

from __future__ import annotations

import operator

import numpy as np
from hypothesis import strategies as st

from . import core
from .elementwise import BINARY, ints, result, values
from .registry import Case, Expect, draw_cols, draw_shape, register, rng_of

MODES = {"eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "gt": operator.gt,
         "ge": operator.ge, "le": operator.le}


def tied(rng, t, a, shape, specials):
    """A second operand that often equals the first (so eq/ge/le are exercised)."""
    b = core.random_values(rng, t, shape, specials=specials)
    same = rng.random(shape) < 0.3
    return np.where(same, a, b)


def cmp_draw(scalar: bool):
    def draw_case(draw, t, arch):
        rng = rng_of(draw)
        rows, cols, vr, vc = draw_shape(draw, t)
        mode = draw(st.sampled_from(sorted(MODES)))
        specials = draw(st.booleans())
        src = core.Tile("s0", t, rows, draw_cols(draw, t, vc), vr, vc)
        dst = core.Tile("d", "i8", rows, draw_cols(draw, "i8", vc), vr, vc)
        a = core.random_values(rng, t, (vr, vc), specials=specials)
        attr = f"{{cmpMode = #pto<cmp {mode}>}}"
        if scalar:
            s = core.random_values(rng, t, (1, 1), specials=specials)
            if draw(st.booleans()):
                s = a[:1, :1].copy()
            b = np.broadcast_to(s, a.shape)
            body = [f"pto.tcmps ins(%s0, %c : {src.type()}, {t}) outs(%d : {dst.type()}) {attr}"]
            text = core.kernel([src], [dst], body, consts=[("c", core.scalar_literal(t, s[0, 0]), t)])
            args = {"g_s0": a}
        else:
            b = tied(rng, t, a, (vr, vc), specials)
            s1 = core.Tile("s1", t, rows, draw_cols(draw, t, vc), vr, vc)
            body = [f"pto.tcmp ins(%s0, %s1 : {src.type()}, {s1.type()}) outs(%d : {dst.type()}) {attr}"]
            text = core.kernel([src, s1], [dst], body)
            args = {"g_s0": a, "g_s1": b}
        va, vb = values(t, a), values(t, b)
        want = np.vectorize(lambda x, y: 1 if MODES[mode](x, y) else 0, otypes=[np.int8])(va, vb)
        return Case(text, args, {"o_d": Expect("i8", want)}, f"{rows}x{cols} valid {vr}x{vc} {mode}")
    return draw_case


def sel_draw(scalar: bool):
    def draw_case(draw, t, arch):
        rng = rng_of(draw)
        rows, cols, vr, vc = draw_shape(draw, t)
        mask = core.Tile("m", "i8", rows, draw_cols(draw, "i8", vc), vr, vc)
        s0 = core.Tile("s0", t, rows, draw_cols(draw, t, vc), vr, vc)
        dst = core.Tile("d", t, rows, cols, vr, vc)
        m = (rng.random((vr, vc)) < 0.5).astype(np.int8) * rng.integers(1, 127, size=(vr, vc)).astype(np.int8)
        a = core.random_values(rng, t, (vr, vc), specials=True)
        if scalar:
            s = core.random_values(rng, t, (1, 1), specials=True)
            body = [f"pto.tsels ins(%m, %s0, %c : {mask.type()}, {s0.type()}, {t}) outs(%d : {dst.type()})"]
            text = core.kernel([mask, s0], [dst], body, consts=[("c", core.scalar_literal(t, s[0, 0]), t)])
            want = np.where(m != 0, a, np.broadcast_to(s, a.shape))
            args = {"g_m": m, "g_s0": a}
        else:
            s1 = core.Tile("s1", t, rows, draw_cols(draw, t, vc), vr, vc)
            b = core.random_values(rng, t, (vr, vc), specials=True)
            body = [f"pto.tsel ins(%m, %s0, %s1 : {mask.type()}, {s0.type()}, {s1.type()}) outs(%d : {dst.type()})"]
            text = core.kernel([mask, s0, s1], [dst], body)
            want = np.where(m != 0, a, b)
            args = {"g_m": m, "g_s0": a, "g_s1": b}
        return Case(text, args, {"o_d": Expect(t, want, nan_bits=True)}, f"{rows}x{cols} valid {vr}x{vc}")
    return draw_case


def part_draw(kind: str):
    """TPART*: over dst's valid region, op(src0, src1) where both are valid, the valid one's
    element where one is, dst unchanged where neither is (docs/isa/TPARTADD.md)."""
    fn, domain = BINARY[kind]

    def draw_case(draw, t, arch):
        rng = rng_of(draw)
        rows, cols, vr, vc = draw_shape(draw, t)
        r0, c0 = draw(st.integers(1, vr)), draw(st.integers(1, vc))
        r1, c1 = draw(st.integers(1, vr)), draw(st.integers(1, vc))
        if draw(st.booleans()):  # one source covers dst's valid region, as the docs' main use
            r0, c0 = vr, vc
        specials = draw(st.booleans()) and kind not in ("max", "min")
        s0 = core.Tile("s0", t, rows, draw_cols(draw, t, c0), r0, c0)
        s1 = core.Tile("s1", t, rows, draw_cols(draw, t, c1), r1, c1)
        dst = core.Tile("d", t, rows, cols, vr, vc)
        a = core.random_values(rng, t, (r0, c0), specials=specials, no_nan=kind in ("max", "min"))
        b = core.random_values(rng, t, (r1, c1), specials=specials, no_nan=kind in ("max", "min"))
        base = core.random_values(rng, t, (vr, vc))
        want = base.copy()
        want[:r1, :c1] = b
        want[:r0, :c0] = a
        rb, cb = min(r0, r1), min(c0, c1)
        with np.errstate(all="ignore"):
            both = result(t, fn(t, values(t, a[:rb, :cb]), values(t, b[:rb, :cb])))
        want[:rb, :cb] = both
        text = core.kernel([s0, s1, dst], [dst], [f"tpart{kind} %d, %s0, %s1"])
        return Case(text, {"g_s0": a, "g_s1": b, "g_d": base},
                    {"o_d": Expect(t, want, signed_zero=kind not in ("max", "min"))},
                    f"dst {rows}x{cols} valid {vr}x{vc}, src0 {r0}x{c0}, src1 {r1}x{c1}")
    return draw_case


def part_arg_draw(kind: str):
    """TPARTARGMAX / TPARTARGMIN: as TPARTMAX / TPARTMIN over dst's valid region, and dstIdx
    takes the index beside the value taken; where both sources are valid, pto-isa's NPU kernels
    select (its docs give ties to src1, its A2/A3 and A5 kernels to src0): A2/A3 src0 where
    src0 >= src1 (<= for min), so NaN takes src1; A5 src1 only where src1 > src0 (< for min), so
    NaN takes src0. Ties are drawn often. Indices: i16/ui16/i32/ui32 beside f16 values, i32/ui32
    beside f32."""
    def take0(arch, x, y):
        if arch == "a5":
            return ~(operator.gt(y, x) if kind == "max" else operator.lt(y, x))
        return operator.ge(x, y) if kind == "max" else operator.le(x, y)

    def draw_case(draw, t, arch):
        rng = rng_of(draw)
        it = draw(st.sampled_from(["i16", "ui16", "i32", "ui32"] if t == "f16" else ["i32", "ui32"]))
        rows, cols, vr, vc = draw_shape(draw, t)
        r0, c0 = draw(st.integers(1, vr)), draw(st.integers(1, vc))
        r1, c1 = draw(st.integers(1, vr)), draw(st.integers(1, vc))
        if draw(st.booleans()):  # pto-isa: dst's valid region is exactly one source's
            r0, c0 = vr, vc
        else:
            r1, c1 = vr, vc
        specials = draw(st.booleans())
        s0 = core.Tile("s0", t, rows, draw_cols(draw, t, c0), r0, c0)
        s1 = core.Tile("s1", t, rows, draw_cols(draw, t, c1), r1, c1)
        i0 = core.Tile("i0", it, rows, draw_cols(draw, it, c0), r0, c0)
        i1 = core.Tile("i1", it, rows, draw_cols(draw, it, c1), r1, c1)
        dst = core.Tile("d", t, rows, cols, vr, vc)
        di = core.Tile("di", it, rows, draw_cols(draw, it, vc), vr, vc)
        a = core.random_values(rng, t, (r0, c0), specials=specials)
        b = tied(rng, t, np.resize(a, (r1, c1)), (r1, c1), specials)
        ia, ib = core.random_values(rng, it, (r0, c0)), core.random_values(rng, it, (r1, c1))
        base, base_i = core.random_values(rng, t, (vr, vc)), core.random_values(rng, it, (vr, vc))
        want, want_i = base.copy(), base_i.copy()
        want[:r1, :c1], want_i[:r1, :c1] = b, ib
        want[:r0, :c0], want_i[:r0, :c0] = a, ia
        rb, cb = min(r0, r1), min(c0, c1)
        with np.errstate(all="ignore"):
            first = take0(arch, values(t, a[:rb, :cb]), values(t, b[:rb, :cb]))
        want[:rb, :cb] = np.where(first, a[:rb, :cb], b[:rb, :cb])
        want_i[:rb, :cb] = np.where(first, ia[:rb, :cb], ib[:rb, :cb])
        body = [f"pto.tpartarg{kind} ins(%s0, %s1, %i0, %i1 : {s0.type()}, {s1.type()}, {i0.type()}, "
                f"{i1.type()}) outs(%d, %di : {dst.type()}, {di.type()})"]
        text = core.kernel([s0, s1, i0, i1, dst, di], [dst, di], body)
        return Case(text, {"g_s0": a, "g_s1": b, "g_i0": ia, "g_i1": ib, "g_d": base, "g_di": base_i},
                    {"o_d": Expect(t, want, nan_bits=True), "o_di": Expect(it, want_i)},
                    f"dst {rows}x{cols} valid {vr}x{vc}, src0 {r0}x{c0}, src1 {r1}x{c1}, {it} indices")
    return draw_case


register("tcmp", "compare", cmp_draw(False))
register("tcmps", "compare", cmp_draw(True))
register("tsel", "select", sel_draw(False))
register("tsels", "select", sel_draw(True))
for _k in ("add", "max", "min", "mul"):
    register(f"tpart{_k}", "partial", part_draw(_k))
for _k in ("max", "min"):
    register(f"tpartarg{_k}", "partial", part_arg_draw(_k))
