"""TCVT (the seed document TCVT, docs/isa/TCVT.md, reference/pto-isa-semantics.md 3.6):
every conversion pair of the op table with each rounding mode and saturation mode.

The model rounds the exact source value once: to an integer (integer destinations) or to the
nearest representable neighbours of the destination format, read off a table of all its
finite values (16- and 8-bit formats) or by integer arithmetic (f32). Ties and ODD look at the
destination encoding's last bit. Overflow, infinities, NaN and the per-pair default
saturation follow docs/numerics.md, which records the project's decisions where the
documents leave a case open (this model was written from that text, not from isa/Numerics)."""

from __future__ import annotations

import math
import re
from functools import lru_cache

import numpy as np
from hypothesis import strategies as st

from . import core
from .registry import Case, Expect, draw_shape, register, rng_of

MODES = ["CAST_NONE", "CAST_RINT", "CAST_ROUND", "CAST_FLOOR", "CAST_CEIL", "CAST_TRUNC", "CAST_ODD"]
SAT_OFF_PAIRS = {("f16", "ui8"), ("f16", "i8"), ("f32", "i16"), ("f16", "i16"), ("i64", "i32"), ("i32", "i16")}
SMALL_FLOATS = ("f16", "bf16", "f8E4M3", "f8E5M2", "hif8")
HAS_INF = {"f32", "f16", "bf16", "f8E5M2", "hif8"}
# the value one step past the largest finite one, "as if the top binade went on"
NEXT_PAST_MAX = {"f16": 65536.0, "bf16": 2.0 ** 128, "f8E4M3": 480.0, "f8E5M2": 65536.0, "hif8": 49152.0}


# ----- formats ---------------------------------------------------------------------------------


def decode8(t: str, code: int) -> float:
    s = -1.0 if code & 0x80 else 1.0
    if t == "f8E4M3":
        e, m = (code >> 3) & 0xF, code & 7
        if e == 0xF and m == 7:
            return math.nan
        return s * (m * 2.0 ** -9 if e == 0 else (1 + m / 8) * 2.0 ** (e - 7))
    if t == "f8E5M2":
        e, m = (code >> 2) & 0x1F, code & 3
        if e == 31:
            return s * math.inf if m == 0 else math.nan
        return s * (m * 2.0 ** -16 if e == 0 else (1 + m / 4) * 2.0 ** (e - 15))
    if t == "hif8":
        return decode_hif8(code)
    raise ValueError(t)


def decode_hif8(code: int) -> float:
    """HiFloat8 (docs/numerics.md): S | dot | exponent | mantissa."""
    if code == 0:
        return 0.0
    if code == 0x80:
        return math.nan
    s = -1.0 if code & 0x80 else 1.0
    b = code & 0x7F
    bits = f"{b:07b}"
    for prefix, d in (("11", 4), ("10", 3), ("01", 2), ("001", 1), ("0001", 0)):
        if bits.startswith(prefix):
            rest = bits[len(prefix):]
            eb, mb = rest[:d], rest[d:]
            if d == 0:
                e = 0
            else:
                mag = int("1" + eb[1:], 2)
                e = -mag if eb[0] == "1" else mag
            m = int(mb, 2) / (1 << len(mb))
            if d == 4 and e == 15 and int(mb, 2) == 1:
                return s * math.inf
            return s * 2.0 ** e * (1 + m)
    m = b & 7  # '0000' + 3 bits: denormal
    return s * 2.0 ** (m - 23)


def decode_value(t: str, code: int) -> float:
    if t == "f16":
        return float(np.array([code], np.uint16).view(np.float16)[0])
    if t == "bf16":
        return float(core.bf16_to_f32(np.array([code], np.uint16))[0])
    return decode8(t, code)


@lru_cache(maxsize=None)
def magnitude_table(t: str):
    """(sorted finite non-negative values, their codes) of a 16- or 8-bit float format."""
    n = 1 << core.BITS[t]
    pairs = {}
    for code in range(n // 2 if t != "hif8" else 0x80):
        v = decode_value(t, code)
        if math.isfinite(v) and v >= 0 and v not in pairs:
            pairs[v] = code
    vals = np.array(sorted(pairs))
    return vals, np.array([pairs[v] for v in vals], dtype=np.int64)


# ----- rounding --------------------------------------------------------------------------------


def choose(mode: str, negative: bool, lo, hi, lo_code, hi_code, v) -> bool:
    """True to take hi (the larger magnitude) for |v| strictly between lo and hi."""
    if mode == "CAST_TRUNC":
        return False
    if mode == "CAST_FLOOR":
        return negative
    if mode == "CAST_CEIL":
        return not negative
    if mode == "CAST_ODD":
        return hi_code % 2 == 1
    mid = (lo + hi) / 2
    if v != mid:
        return v > mid
    if mode == "CAST_ROUND":
        return True
    return hi_code % 2 == 0  # RINT: the even encoding


def toward_zero(mode: str, negative: bool) -> bool:
    return mode in ("CAST_TRUNC", "CAST_ODD") or (mode == "CAST_FLOOR" and not negative) or \
        (mode == "CAST_CEIL" and negative)


def round_int(v, mode: str) -> int:
    """An exact value (float or int) to an integer with the mode (NONE handled by the caller)."""
    if isinstance(v, int):
        return v
    fl = math.floor(v)
    if fl == v:
        return int(fl)
    negative = v < 0
    lo, hi = (fl + 1, fl) if negative else (fl, fl + 1)  # lo: smaller magnitude
    take_hi = choose(mode, negative, abs(lo), abs(hi), abs(lo), abs(hi), abs(v))
    return int(hi if take_hi else lo)


def quiet_nan(t: str, negative: bool) -> int:
    sign = (1 << (core.BITS[t] - 1)) if negative else 0
    return {"f32": 0x7FC00000, "f16": 0x7E00, "bf16": 0x7FC0, "f8E4M3": 0x7F, "f8E5M2": 0x7E}.get(t, 0x80 if t == "hif8" else 0) | (sign if t != "hif8" else 0)


def to_small_float(t: str, v: float, mode: str, sat: bool, narrower: bool) -> int:
    sign = 1 << (core.BITS[t] - 1)
    if math.isnan(v):
        return quiet_nan(t, math.copysign(1, v) < 0)
    negative = math.copysign(1, v) < 0
    sbit = sign if negative and t != "hif8" else 0
    vals, codes = magnitude_table(t)
    max_code = int(codes[-1])
    inf_code = {"f16": 0x7C00, "bf16": 0x7F80, "f8E5M2": 0x7C, "hif8": 0x6F}.get(t)

    def overflow():
        if sat:
            return max_code | sbit | (0x80 if negative and t == "hif8" else 0)
        if t in HAS_INF:
            return inf_code | (sign if negative else 0)
        return 0x7F | sbit  # e4m3: NaN

    a = abs(v)
    if math.isinf(a):
        if sat and narrower:
            return max_code | (sign if negative else 0)
        return overflow()
    nxt = NEXT_PAST_MAX[t]
    if a >= nxt:
        return (max_code | (sign if negative else 0)) if toward_zero(mode, negative) else overflow()
    k = int(np.searchsorted(vals, a, side="right")) - 1
    if vals[k] == a:
        code = int(codes[k])
    else:
        lo, lo_code = vals[k], int(codes[k])
        if k + 1 < len(vals):
            hi, hi_code = vals[k + 1], int(codes[k + 1])
        else:
            hi, hi_code = nxt, max_code + 1
        code = hi_code if choose(mode, negative, lo, hi, lo_code, hi_code, a) else lo_code
        if code == max_code + 1 and mode == "CAST_ODD":
            code = max_code  # ODD never overflows (docs/numerics.md): past max it gives max
        if code == max_code + 1:
            return overflow()
    if code == 0 and t == "hif8":
        return 0
    return code | (sign if negative else 0)


def to_f32(v, mode: str) -> float:
    """An integer (or float already in f32) to f32 with the mode."""
    if not isinstance(v, int):
        return v
    n = abs(v)
    if n < (1 << 24):
        return float(v)
    shift = n.bit_length() - 24
    q, r = divmod(n, 1 << shift)
    if r:
        lo, hi = q, q + 1
        half = 1 << (shift - 1)
        take = choose(mode, v < 0, lo * 2 * half, hi * 2 * half, lo, hi, n)
        q = hi if take else lo
    return math.copysign(float(q << shift), v)


def f32_integral(x: float, mode: str) -> float:
    if not math.isfinite(x) or x == math.floor(x):
        return x
    r = round_int(x, mode)
    return math.copysign(float(r), x) if r == 0 else float(r)


# ----- the conversion --------------------------------------------------------------------------


def effective_mode(src: str, dst: str, mode: str) -> str:
    if mode != "CAST_NONE":
        return mode
    if dst in core.INTS and src not in core.INTS:
        return "CAST_TRUNC"
    if dst == "hif8":
        return "CAST_ROUND"
    return "CAST_RINT"


def src_values(src: str, a: np.ndarray) -> list:
    if src in core.INTS:
        return [int(x) for x in a.ravel()]
    if src in ("f32", "f16"):
        return [float(x) for x in a.astype(np.float64).ravel()]
    return [decode_value(src, int(c)) for c in core.raw(src, a).ravel()]


def finite_max(t):
    return float(magnitude_table(t)[0][-1]) if t in SMALL_FLOATS else 3.4028234663852886e38


def convert(src: str, dst: str, a: np.ndarray, mode: str, sat_attr: str | None) -> np.ndarray:
    mode = effective_mode(src, dst, mode)
    sat = (sat_attr == "ON") if sat_attr else (src, dst) not in SAT_OFF_PAIRS
    out = []
    for v in src_values(src, a):
        if dst in core.INTS:
            lo, hi = core.int_range(dst)
            if isinstance(v, float) and math.isnan(v):
                out.append(0)
                continue
            if isinstance(v, float) and math.isinf(v):
                n = hi if v > 0 else lo
                if not sat and core.BITS[dst] < 32:
                    n = (2 ** 31 - 1) if v > 0 else -(2 ** 31)
                out.append(n)
                continue
            n = round_int(v, mode)
            if sat or core.BITS[dst] >= 32 and src not in core.INTS:
                n = min(max(n, lo), hi)
            elif src not in core.INTS:  # non-saturating: clamp to int32, keep the low bits
                n = min(max(n, -(2 ** 31)), 2 ** 31 - 1)
            out.append(n)
        elif dst == "f32":
            if src == "f32":
                out.append(f32_integral(v, mode))
            else:
                out.append(to_f32(v, mode) if isinstance(v, int) else v)
        else:
            narrower = src not in core.INTS and finite_max(dst) < finite_max(src)
            out.append(to_small_float(dst, float(v), mode, sat, narrower))
    shape = a.shape
    if dst in core.INTS:
        return core.wrap(dst, np.array(out, dtype=object).reshape(shape))
    if dst == "f32":
        return np.array(out, dtype=np.float64).astype(np.float32).reshape(shape)
    return np.array(out, dtype=np.int64).astype(core.UINT_OF_BITS[core.BITS[dst]]).view(core.CARRIER[dst]).reshape(shape)


# ----- pairs and cases -------------------------------------------------------------------------


@lru_cache(maxsize=None)
def pairs(arch: str) -> tuple:
    text = (core.REPO / "docs" / "ops.md").read_text()
    block = text.split("## TCVT conversions", 1)[1].split("##", 1)[0]
    out = []
    for line in block.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 3 or cells[0] in ("src", "---") or cells[0].startswith("-"):
            continue
        dsts = cells[1] if arch == "a2a3" else cells[2]
        for d in dsts.split(","):
            d = d.strip()
            if d in core.CARRIER and cells[0] in core.CARRIER:
                out.append(f"{d}<-{cells[0]}")
    return tuple(out)


def interesting(rng, src: str, dst: str, n: int) -> np.ndarray:
    """Values near the destination's ties and limits, in the source type."""
    if dst in core.INTS:
        lo, hi = core.int_range(dst)
        pool = [lo - 1.5, lo - 0.5, lo, lo + 0.5, hi - 0.5, hi, hi + 0.5, hi + 1, 2.5, -2.5, 0.5, -0.5, 1.5, 3.5, 1e10, -1e10]
    elif dst in SMALL_FLOATS:
        vals, _ = magnitude_table(dst)
        k = rng.integers(0, len(vals) - 1, size=n)
        mids = (vals[k] + vals[k + 1]) / 2
        pool = list(mids) + [vals[-1], NEXT_PAST_MAX[dst], (vals[-1] + NEXT_PAST_MAX[dst]) / 2, vals[1] / 2, vals[1] / 3]
    else:
        pool = [0.5, 1.5, 2.5, -0.5, -1.5, 16777217.0, 2.0 ** 31, -(2.0 ** 63), 2.0 ** 24 + 1]
    v = np.array(rng.choice(np.array(pool, dtype=np.float64), size=n))
    v = v * rng.choice([1.0, -1.0], size=n) if dst not in core.INTS else v
    if src in core.INTS:
        lo, hi = core.int_range(src)
        return core.wrap(src, np.array([min(max(int(x), lo), hi) for x in np.nan_to_num(v)], dtype=object))
    return core.encode(src, v) if src in core.FLOATS else rng.integers(0, 256, size=n).astype(np.uint8)


def tcvt_draw(draw, pair, arch):
    dst, src = pair.split("<-")
    rng = rng_of(draw)
    wide = dst if core.nbytes(dst) > core.nbytes(src) else src
    rows, cols, vr, vc = draw_shape(draw, wide, max_rows=6)
    s = core.Tile("s0", src, rows, max(cols, core.row_align(src)) if False else cols * core.nbytes(wide) // core.nbytes(src), vr, vc)
    d = core.Tile("d", dst, rows, cols * core.nbytes(wide) // core.nbytes(dst), vr, vc)
    if src in core.FLOATS or src in core.INTS:
        a = core.random_values(rng, src, (vr, vc), specials=draw(st.booleans()))
    else:
        a = rng.integers(0, 256, size=(vr, vc)).astype(np.uint8)
    mix = rng.random((vr, vc)) < 0.5
    a = np.where(mix, interesting(rng, src, dst, vr * vc).reshape(vr, vc), a)
    mode = draw(st.sampled_from(MODES))
    sat = draw(st.sampled_from([None, "ON", "OFF"]))
    attrs = [f"rmode = #pto<round_mode {mode}>"]
    if sat:
        attrs.append(f"sat_mode = #pto<saturation_mode {sat}>")
    body = [f"pto.tcvt ins(%s0 : {s.type()}) outs(%d : {d.type()}) {{{', '.join(attrs)}}}"]
    want = convert(src, dst, a, mode, sat)
    return Case(core.kernel([s], [d], body), {"g_s0": a}, {"o_d": Expect(dst, want)},
                f"{pair} {mode} sat {sat} {rows}x{cols} valid {vr}x{vc}")


register("tcvt", "conversion", tcvt_draw, dtypes=lambda arch: list(pairs(arch)))
