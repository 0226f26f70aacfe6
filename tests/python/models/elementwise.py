"""Elementwise tile ops (tile-tile, tile-scalar, three-operand, unary), from docs/isa/T*.md:
dst[i,j] = f(src0[i,j], src1[i,j], ...) over the valid region.

Floats: each documented operation on the element values, rounded once to the element type
with nearest-even (binary64 carries the exact result of one f32/f16/bf16 +, -, *, / before
that rounding: 53 >= 2p + 2). Integers: exact arithmetic, then wrapped to the width.
Where the documents leave a result open (NaN in max/min, a zero integer divisor, a shift by
the width or more) the inputs stay out of that domain; docs/numerics.md lists these."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

from . import core
from .registry import Case, Expect, draw_cols, draw_shape, register, rng_of


def ints(a: np.ndarray) -> np.ndarray:
    return np.asarray(a).astype(object)


def values(t: str, a: np.ndarray) -> np.ndarray:
    return core.decode(t, a) if t in core.FLOATS else ints(a)


def rounded(t: str, v) -> np.ndarray:
    """One rounding to t (floats) - for documented intermediate results."""
    return core.decode(t, core.encode(t, v))


def result(t: str, v) -> np.ndarray:
    if t in core.FLOATS:
        return core.encode(t, np.asarray(v, dtype=np.float64))
    return core.wrap(t, np.asarray(v, dtype=object))


# ----- the element functions: (a, b) values -> exact value (floats) or Python ints ----------


def f_div(t, a, b):
    if t in core.FLOATS:
        with np.errstate(all="ignore"):
            return a / b
    return np.array([int(x / y) if abs(x) < 2 ** 52 else _tdiv(x, y) for x, y in zip(a.ravel(), b.ravel())],
                    dtype=object).reshape(a.shape)


def _tdiv(x, y):
    q = abs(x) // abs(y)
    return q if (x >= 0) == (y >= 0) else -q


def f_max(t, a, b):
    return np.where(a >= b, a, b) if t in core.FLOATS else np.maximum(a, b)


def f_min(t, a, b):
    return np.where(a <= b, a, b) if t in core.FLOATS else np.minimum(a, b)


def f_fmod(t, a, b):
    with np.errstate(all="ignore"):
        return np.fmod(a, b)  # exact in binary64 for f32/f16/bf16 values


def f_rem(t, a, b):
    if t in core.FLOATS:
        with np.errstate(all="ignore"):
            r = np.fmod(a, b)
            fix = (r != 0) & ((r < 0) != (b < 0))
            return np.where(fix, r + b, r)
    return np.array([x % y for x, y in zip(a.ravel(), b.ravel())], dtype=object).reshape(a.shape)


def f_shl(t, a, b):
    return np.array([x << int(s) for x, s in zip(a.ravel(), b.ravel())], dtype=object).reshape(a.shape)


def f_shr(t, a, b):
    return np.array([x >> int(s) for x, s in zip(a.ravel(), b.ravel())], dtype=object).reshape(a.shape)


def f_prelu(t, a, b):
    with np.errstate(all="ignore"):
        return np.where(a > 0, a, a * b)


BINARY = {
    # op: (function, domain of src1) ; domain: None, "nonzero", "shift"
    "add": (lambda t, a, b: a + b, None),
    "sub": (lambda t, a, b: a - b, None),
    "mul": (lambda t, a, b: a * b, None),
    "div": (f_div, "div"),
    "max": (f_max, "nonan"),
    "min": (f_min, "nonan"),
    "fmod": (f_fmod, None),
    "rem": (f_rem, "div"),
    "and": (lambda t, a, b: a & b, None),
    "or": (lambda t, a, b: a | b, None),
    "xor": (lambda t, a, b: a ^ b, None),
    "shl": (f_shl, "shift"),
    "shr": (f_shr, "shift"),
    "prelu": (f_prelu, None),
}


def draw_operand(rng, t, shape, domain, draw):
    specials = draw(st.booleans())
    if domain == "shift":
        return core.wrap(t, rng.integers(0, core.BITS[t], size=shape).astype(object))
    if domain == "div":
        return core.random_values(rng, t, shape, specials=specials and t in core.FLOATS, nonzero=t not in core.FLOATS)
    if domain == "nonan":
        return core.random_values(rng, t, shape, specials=specials, no_nan=True)
    return core.random_values(rng, t, shape, specials=specials)


def _tiles(draw, t, n_src, vr, vc, rows):
    return [core.Tile(f"s{k}", t, rows, draw_cols(draw, t, vc), vr, vc) for k in range(n_src)]


def binary_draw(name, fn, domain, mnemonic=None):
    """`t<name>` (or `mnemonic`: tdiv.hp, the correctly rounded quotient like tdiv's)."""
    def draw_case(draw, t, arch):
        rng = rng_of(draw)
        rows, cols, vr, vc = draw_shape(draw, t)
        srcs = _tiles(draw, t, 2, vr, vc, rows)
        dst = core.Tile("d", t, rows, cols, vr, vc)
        a = draw_operand(rng, t, (vr, vc), "nonan" if domain == "nonan" else None, draw)
        b = draw_operand(rng, t, (vr, vc), domain, draw)
        if name == "div" and t not in core.FLOATS:  # INT_MIN / -1 has no documented result
            lo, _ = core.int_range(t)
            b = np.where((ints(a) == lo) & (ints(b) == -1), core.wrap(t, np.ones(b.shape, object)), b)
        ops = f"{mnemonic or 't' + name} %d, %s0, %s1"
        src = core.kernel(srcs, [dst], [ops])
        want = result(t, fn(t, values(t, a), values(t, b)))
        zero_free = name in ("max", "min")
        return Case(src, {"g_s0": a, "g_s1": b}, {"o_d": Expect(t, want, signed_zero=not zero_free)},
                    f"{rows}x{cols} valid {vr}x{vc}")
    return draw_case


SCALAR_OPS = {  # op -> (binary function, domain of the scalar, scalar first)
    "adds": ("add", None), "subs": ("sub", None), "muls": ("mul", None), "divs": ("div", "div"),
    "maxs": ("max", "nonan"), "mins": ("min", "nonan"), "fmods": ("fmod", None), "rems": ("rem", "div"),
    "ands": ("and", None), "ors": ("or", None), "xors": ("xor", None), "shls": ("shl", "shift"),
    "shrs": ("shr", "shift"), "lrelu": ("prelu", None),
}


def scalar_type(t):
    return t


def scalar_draw(name, base, domain, scalar_first=False):
    fn = BINARY[base][0]

    def draw_case(draw, t, arch):
        rng = rng_of(draw)
        rows, cols, vr, vc = draw_shape(draw, t)
        src = core.Tile("s0", t, rows, draw_cols(draw, t, vc), vr, vc)
        dst = core.Tile("d", t, rows, cols, vr, vc)
        a = draw_operand(rng, t, (vr, vc), "nonan" if domain == "nonan" else ("div" if scalar_first and domain == "div" else None), draw)
        s = draw_operand(rng, t, (1, 1), None if scalar_first else domain, draw)
        if name in ("divs",) and t not in core.FLOATS and not scalar_first:
            if int(ints(s)[0, 0]) == -1:
                s = core.wrap(t, np.array([[1]], dtype=object))
        if scalar_first and t not in core.FLOATS:
            lo, _ = core.int_range(t)
            if int(ints(s)[0, 0]) == lo:
                a = np.where(ints(a) == -1, core.wrap(t, np.ones(a.shape, object)), a)
        sv = s[0, 0]
        sty = "i32" if t in core.INTS and name in ("ands", "ors", "xors", "shls", "shrs") and False else t
        consts = [("c", core.scalar_literal(t, sv), sty)]
        if scalar_first:
            body = [f"tdivs %d, %c, %s0"]
            want = fn(t, values(t, s) * np.ones((vr, vc), dtype=object if t in core.INTS else np.float64), values(t, a))
        else:
            body = [f"t{name} %d, %s0, %c"]
            want = fn(t, values(t, a), values(t, s) * np.ones((vr, vc), dtype=object if t in core.INTS else np.float64))
        src_text = core.kernel([src], [dst], body, consts=consts)
        zero_free = base in ("max", "min")
        return Case(src_text, {"g_s0": a}, {"o_d": Expect(t, result(t, want), signed_zero=not zero_free)},
                    f"{rows}x{cols} valid {vr}x{vc} scalar {sv!r}")
    return draw_case


# ----- three operands ----------------------------------------------------------------------


def ternary_draw(name):
    def draw_case(draw, t, arch):
        rng = rng_of(draw)
        rows, cols, vr, vc = draw_shape(draw, t)
        dst = core.Tile("d", t, rows, cols, vr, vc)
        specials = draw(st.booleans())
        if name in ("addc", "subc"):
            srcs = _tiles(draw, t, 3, vr, vc, rows)
            a, b, c = (core.random_values(rng, t, (vr, vc), specials=specials) for _ in range(3))
            va, vb, vc_ = values(t, a), values(t, b), values(t, c)
            first = va + vb if name == "addc" else va - vb
            want = (rounded(t, first) if t in core.FLOATS else first) + vc_
            return Case(core.kernel(srcs, [dst], [f"t{name} %d, %s0, %s1, %s2"]),
                        {"g_s0": a, "g_s1": b, "g_s2": c}, {"o_d": Expect(t, result(t, want))},
                        f"{rows}x{cols} valid {vr}x{vc}")
        srcs = _tiles(draw, t, 2, vr, vc, rows)
        a, b = (core.random_values(rng, t, (vr, vc), specials=specials) for _ in range(2))
        s = core.random_values(rng, t, (1, 1), specials=specials)
        va, vb, vs = values(t, a), values(t, b), values(t, s)[0, 0]
        first = va + vs if name == "addsc" else va - vs
        want = (rounded(t, first) if t in core.FLOATS else first) + vb
        return Case(core.kernel(srcs, [dst], [f"t{name} %d, %s0, %c, %s1"],
                                consts=[("c", core.scalar_literal(t, s[0, 0]), t)]),
                    {"g_s0": a, "g_s1": b}, {"o_d": Expect(t, result(t, want))},
                    f"{rows}x{cols} valid {vr}x{vc} scalar {s[0, 0]!r}")
    return draw_case


def axpy_dtypes(arch):
    return ["f16", "f32", "f32<-f16"]


def axpy_draw(draw, t, arch):
    """TAXPY (seed document): dst = scalar * src + dst, the product rounded, then the sum.
    (dst, src) pairs (f16, f16), (f32, f32) and (f32, f16); the scalar has src's type."""
    dt, st_ = ("f32", "f16") if t == "f32<-f16" else (t, t)
    rng = rng_of(draw)
    rows, cols, vr, vc = draw_shape(draw, dt)
    src = core.Tile("s0", st_, rows, draw_cols(draw, st_, vc), vr, vc)
    dst = core.Tile("d", dt, rows, cols, vr, vc)
    specials = draw(st.booleans())
    x = core.random_values(rng, st_, (vr, vc), specials=specials)
    y = core.random_values(rng, dt, (vr, vc), specials=specials)
    a = core.random_values(rng, st_, (1, 1), specials=specials)
    with np.errstate(all="ignore"):
        prod = rounded(dt, core.decode(st_, x) * core.decode(st_, a)[0, 0])
        want = core.encode(dt, prod + core.decode(dt, y))
    # dst is read: load it from its own buffer first
    text = core.kernel([src, dst], [dst], [f"taxpy %d, %s0, %c"], consts=[("c", core.scalar_literal(st_, a[0, 0]), st_)])
    return Case(text, {"g_s0": x, "g_d": y}, {"o_d": Expect(dt, want)}, f"{rows}x{cols} valid {vr}x{vc} a={a[0, 0]!r}")


# ----- unary -------------------------------------------------------------------------------


def u_abs(t, a):
    return np.abs(a) if t in core.FLOATS else np.array([abs(x) for x in a.ravel()], dtype=object).reshape(a.shape)


def u_relu(t, a):
    # max(x, 0): NaN has no documented result (inputs avoid it); -0 may give either zero
    return np.where(a > 0, a, 0 * a if t not in core.FLOATS else 0.0)


def u_not(t, a):
    return np.array([~x for x in a.ravel()], dtype=object).reshape(a.shape)


UNARY = {
    # op: (function, domain, ulps allowed, relative error allowed)
    "abs": (u_abs, None, 0),
    "neg": (lambda t, a: -a, None, 0),
    "relu": (u_relu, "nonan", 0),
    "not": (u_not, None, 0),
    "sqrt": (lambda t, a: np.sqrt(a), None, 0),
    "exp": (lambda t, a: np.exp(a), None, 1),
    "log": (lambda t, a: np.log(a), None, 1),
    "rsqrt": (lambda t, a: 1.0 / np.sqrt(a), None, 1),
    "recip": (lambda t, a: 1.0 / a, None, 0),
}


def unary_draw(name, high_precision=False):
    """`t<name>`, or its high-precision form `t<name>.hp` (A5): the correctly rounded result,
    0 ulps whatever the default form allows; trsqrt.hp takes its tmp tile."""
    fn, domain, ulps = UNARY[name]
    if high_precision:
        ulps = 0

    def draw_case(draw, t, arch):
        rng = rng_of(draw)
        rows, cols, vr, vc = draw_shape(draw, t)
        src = core.Tile("s0", t, rows, draw_cols(draw, t, vc), vr, vc)
        dst = core.Tile("d", t, rows, cols, vr, vc)
        a = draw_operand(rng, t, (vr, vc), domain, draw)
        if name in ("sqrt", "log", "rsqrt") and draw(st.booleans()):
            a = core.encode(t, np.abs(core.decode(t, a))) if t in core.FLOATS else a
        with np.errstate(all="ignore"):
            want = result(t, fn(t, values(t, a)))
        body = [f"t{name} %d, %s0"]
        temps = []
        if high_precision:
            body = [f"t{name}.hp %d, %s0" + (", %tmp" if name == "rsqrt" else "")]
            temps = [core.Tile("tmp", t, rows, cols, vr, vc)] if name == "rsqrt" else []
        return Case(core.kernel([src], [dst], body, temps=temps), {"g_s0": a},
                    {"o_d": Expect(t, want, ulps=ulps, signed_zero=name != "relu")},
                    f"{rows}x{cols} valid {vr}x{vc}")
    return draw_case


for _name, (_fn, _dom) in BINARY.items():
    register(f"t{_name}", "elementwise", binary_draw(_name, _fn, _dom))
register("tdiv.hp", "elementwise", binary_draw("div", BINARY["div"][0], BINARY["div"][1], mnemonic="tdiv.hp"))
for _name, (_base, _dom) in SCALAR_OPS.items():
    register(f"t{_name}", "elementwise-scalar", scalar_draw(_name, _base, _dom))
register("tdivs.sf", "elementwise-scalar", scalar_draw("divs", "div", "div", scalar_first=True))
for _name in ("addc", "subc", "addsc", "subsc"):
    register(f"t{_name}", "elementwise-3", ternary_draw(_name))
register("taxpy", "elementwise-3", axpy_draw, dtypes=axpy_dtypes)
for _name in UNARY:
    register(f"t{_name}", "unary-math" if _name in ("sqrt", "exp", "log", "rsqrt", "recip") else "elementwise",
             unary_draw(_name), tolerance="ulp" if UNARY[_name][2] else "exact")
for _name in ("sqrt", "rsqrt", "recip"):
    register(f"t{_name}.hp", "unary-math", unary_draw(_name, high_precision=True))
