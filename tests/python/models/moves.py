"""Data movement (docs/isa/TLOAD.md, TSTORE.md, TMOV.md, TEXTRACT.md, TINSERT.md, TTRANS.md,
TFILLPAD*.md, TCONCAT.md (with its five-operand form, TCONCATIDX), TDEINTERLEAVE.md, TPACK.md): every result is a copy of source bits,
compared bit for bit (NaN payloads included)."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from . import core
from .registry import Case, Expect, draw_cols, draw_shape, register, rng_of


def bits_of(rng, t, shape):
    """Any bit pattern of type t (moves must not look at the values)."""
    n = int(np.prod(shape)) * core.nbytes(t)
    return rng.integers(0, 256, size=n).astype(np.uint8).view(core.CARRIER[t]).reshape(shape)


def table_dtypes(op, a5_only=False):
    def dtypes(arch):
        if a5_only and arch != "a5":
            return []
        return [t for t in core.op_table()[op].dtypes[arch] if t in core.CARRIER]
    return dtypes


def load_store_draw(draw, t, arch):
    """TLOAD then TSTORE: the valid region from a GM view at an offset, back to another view."""
    rng = rng_of(draw)
    rows, cols, vr, vc = draw_shape(draw, t)
    r0, c0 = draw(st.integers(0, 3)), draw(st.integers(0, 5))
    src = core.Tile("s0", t, rows, cols, vr, vc)
    g = bits_of(rng, t, (vr + r0, vc + c0))
    text = (f"kernel @k(%g: !pto.tensor_view<{vr + r0}x{vc + c0}x{t}>, %o_d: !pto.tensor_view<{vr}x{vc}x{t}>) {{\n"
            f"  tile %s0 : {src.type()}\n  tload %s0, %g[{r0}, {c0}]\n  tstore %o_d[0, 0], %s0\n}}\n")
    return Case(text, {"g": g}, {"o_d": Expect(t, g[r0:, c0:].copy(), nan_bits=True)},
                f"{rows}x{cols} valid {vr}x{vc} at ({r0}, {c0})")


def tmov_draw(draw, t, arch):
    rng = rng_of(draw)
    rows, cols, vr, vc = draw_shape(draw, t)
    src = core.Tile("s0", t, rows, draw_cols(draw, t, vc), vr, vc)
    dst = core.Tile("d", t, rows, cols, vr, vc)
    a = bits_of(rng, t, (vr, vc))
    text = core.kernel([src], [dst], [f"pto.tmov ins(%s0 : {src.type()}) outs(%d : {dst.type()})"])
    return Case(text, {"g_s0": a}, {"o_d": Expect(t, a.copy(), nan_bits=True)}, f"{rows}x{cols} valid {vr}x{vc}")


# Vec -> vec windows on A2/A3 (pto-isa's a2a3 TExtract / TInsert, CheckT*VecToVecCommon): these
# element types, and a column index of whole 32-byte blocks unless the window is one element.
A2A3_VEC_WINDOW = ("i8", "ui8", "i16", "ui16", "f16", "bf16", "f32", "i32", "ui32")


def window_col(draw, t, arch, room, one_element):
    """A column position in 0..room; on A2/A3 a multiple of a 32-byte block unless the window is
    one element."""
    if arch == "a5" or one_element:
        return draw(st.integers(0, room))
    step = 32 // core.nbytes(t)
    return step * draw(st.integers(0, room // step))


def window_dtypes(op):
    def dtypes(arch):
        table = [t for t in core.op_table()[op].dtypes[arch] if t in core.CARRIER]
        return table if arch == "a5" else [t for t in table if t in A2A3_VEC_WINDOW]
    return dtypes


def textract_draw(draw, t, arch):
    rng = rng_of(draw)
    rows, cols, vr, vc = draw_shape(draw, t, max_rows=10)
    src = core.Tile("s0", t, rows, cols, rows, cols)
    dr, dc = draw(st.integers(1, rows)), draw(st.integers(1, cols))
    r0, c0 = draw(st.integers(0, rows - dr)), window_col(draw, t, arch, cols - dc, dr == dc == 1)
    dst = core.Tile("d", t, dr, draw_cols(draw, t, dc), dr, dc)
    a = bits_of(rng, t, (rows, cols))
    text = core.kernel([src], [dst], [f"textract %d, %s0, {r0}, {c0}"])
    return Case(text, {"g_s0": a}, {"o_d": Expect(t, a[r0:r0 + dr, c0:c0 + dc].copy(), nan_bits=True)},
                f"{rows}x{cols} window {dr}x{dc} at ({r0}, {c0})")


def tinsert_draw(draw, t, arch):
    rng = rng_of(draw)
    rows, cols, _, _ = draw_shape(draw, t, max_rows=10)
    dst = core.Tile("d", t, rows, cols, rows, cols)
    sr, sc = draw(st.integers(1, rows)), draw(st.integers(1, cols))
    r0, c0 = draw(st.integers(0, rows - sr)), window_col(draw, t, arch, cols - sc, sr == sc == 1)
    src = core.Tile("s0", t, sr, draw_cols(draw, t, sc), sr, sc)
    base, a = bits_of(rng, t, (rows, cols)), bits_of(rng, t, (sr, sc))
    want = base.copy()
    want[r0:r0 + sr, c0:c0 + sc] = a
    text = core.kernel([src, dst], [dst], [f"tinsert %d, %s0, {r0}, {c0}"])
    return Case(text, {"g_s0": a, "g_d": base}, {"o_d": Expect(t, want, nan_bits=True)},
                f"{rows}x{cols} insert {sr}x{sc} at ({r0}, {c0})")


def ttrans_draw(draw, t, arch):
    rng = rng_of(draw)
    align = core.row_align(t)
    vr, vc = draw(st.integers(1, 2 * align)), draw(st.integers(1, 2 * align))
    src = core.Tile("s0", t, vr, draw_cols(draw, t, vc), vr, vc)
    dst = core.Tile("d", t, vc, draw_cols(draw, t, vr), vc, vr)
    tmp = core.Tile("tmp", t, max(vr, vc), draw_cols(draw, t, max(vr, vc)), max(vr, vc), max(vr, vc))
    a = bits_of(rng, t, (vr, vc))
    text = core.kernel([src], [dst], [f"ttrans %d, %s0, %tmp"], temps=[tmp])
    return Case(text, {"g_s0": a}, {"o_d": Expect(t, a.T.copy(), nan_bits=True)}, f"{vr}x{vc}")


PAD = ("zero", "max", "min")


def pad_value(t, pad):
    """TFILLPAD.md: +inf/-inf for floats when the type has them, else the type's max/min."""
    if pad == "zero":
        return np.zeros((), core.CARRIER[t])
    if t in core.FLOATS:
        return core.encode(t, np.array(np.inf if pad == "max" else -np.inf))
    if t not in core.INTS:  # 8-bit floats: +-inf where the format has it, else +-max
        code = {"f8E4M3": 0x7E, "f8E5M2": 0x7C, "hif8": 0x6F}[t]
        return np.array(code | (0x80 if pad == "min" else 0), dtype=np.uint8)
    lo, hi = core.int_range(t)
    return core.wrap(t, np.array(hi if pad == "max" else lo, dtype=object))


def fillpad_draw(op):
    def draw_case(draw, t, arch):
        rng = rng_of(draw)
        rows, cols, vr, vc = draw_shape(draw, t)
        pad = draw(st.sampled_from(PAD if t != "f8E8M0" else ("zero",)))  # e8m0: no sign, no inf
        src = core.Tile("s0", t, rows, cols, vr, vc)
        drows, dcols = rows, cols
        if op == "tfillpad_expand":
            drows, dcols = rows + draw(st.integers(0, 3)), cols + core.row_align(t) * draw(st.integers(0, 2))
        dst = core.Tile("d", t, drows, dcols, drows, dcols, extra=f"pad={pad}")
        a = bits_of(rng, t, (vr, vc))
        want = np.full((drows, dcols), pad_value(t, pad), dtype=core.CARRIER[t])
        want[:vr, :vc] = a
        text = core.kernel([src], [dst], [f"{op} %d, %s0"])
        return Case(text, {"g_s0": a}, {"o_d": Expect(t, want, nan_bits=True)},
                    f"src {rows}x{cols} valid {vr}x{vc} dst {drows}x{dcols} pad {pad}")
    return draw_case


def tconcat_draw(draw, t, arch):
    rng = rng_of(draw)
    rows, cols, vr, _ = draw_shape(draw, t)
    v0 = draw(st.integers(1, cols - 1)) if cols > 1 else 1
    v1 = draw(st.integers(1, max(1, cols - v0)))
    s0 = core.Tile("s0", t, rows, draw_cols(draw, t, v0), vr, v0)
    s1 = core.Tile("s1", t, rows, draw_cols(draw, t, v1), vr, v1)
    dst = core.Tile("d", t, rows, draw_cols(draw, t, v0 + v1), vr, v0 + v1)
    a, b = bits_of(rng, t, (vr, v0)), bits_of(rng, t, (vr, v1))
    text = core.kernel([s0, s1], [dst], [f"tconcat %d, %s0, %s1"])
    return Case(text, {"g_s0": a, "g_s1": b}, {"o_d": Expect(t, np.concatenate([a, b], axis=1), nan_bits=True)},
                f"{vr} rows, {v0} + {v1} columns")


COUNT_TYPES = ["i8", "i16", "i32", "ui8", "ui16", "ui32"]


def tconcatidx_draw(draw, t, arch):
    """TCONCATIDX (pto-isa's five-operand TCONCAT): per row, src0's first min(idx0[r], vc)
    elements, then src1's first min(idx1[r], vc - n0); the rest of dst's row keeps its bits. A
    count is column 0 of its row, read as a 32-bit unsigned (a negative count clamps to vc)."""
    rng = rng_of(draw)
    rows, cols, vr, vc = draw_shape(draw, t)
    it = draw(st.sampled_from(COUNT_TYPES))
    ia = core.row_align(it)
    s0, s1 = core.Tile("s0", t, rows, cols, vr, vc), core.Tile("s1", t, rows, cols, vr, vc)
    d = core.Tile("d", t, rows, cols, vr, vc)
    i0, i1 = core.Tile("i0", it, rows, ia, vr, ia), core.Tile("i1", it, rows, ia, vr, ia)
    a, b, init = (bits_of(rng, t, (vr, vc)) for _ in range(3))
    lo = -2 if it.startswith("i") else 0
    counts = []
    for _ in range(2):
        c = bits_of(rng, it, (vr, ia))
        c[:, 0] = rng.integers(lo, vc + 4, size=vr)
        counts.append(c)
    want = init.copy()
    for r in range(vr):
        n0 = min(int(counts[0][r, 0]) & 0xFFFFFFFF, vc)
        n1 = min(int(counts[1][r, 0]) & 0xFFFFFFFF, vc - n0)
        want[r, :n0] = a[r, :n0]
        want[r, n0:n0 + n1] = b[r, :n1]
    body = [f"pto.tconcatidx ins(%s0, %s1, %i0, %i1 : {s0.type()}, {s1.type()}, {i0.type()}, "
            f"{i1.type()}) outs(%d : {d.type()})"]
    text = core.kernel([s0, s1, i0, i1, d], [d], body)
    return Case(text, {"g_s0": a, "g_s1": b, "g_i0": counts[0], "g_i1": counts[1], "g_d": init},
                {"o_d": Expect(t, want, nan_bits=True)}, f"{rows}x{cols} valid {vr}x{vc}, {it} counts")


def tdeinterleave_draw(draw, t, arch):
    rng = rng_of(draw)
    rows = draw(st.integers(1, 6))
    align = core.row_align(t)
    k = draw(st.integers(1, 2 * align))
    two = draw(st.booleans())
    d0 = core.Tile("d0", t, rows, draw_cols(draw, t, k), rows, k)
    d1 = core.Tile("d1", t, rows, draw_cols(draw, t, k), rows, k)
    if two:
        s0 = core.Tile("s0", t, rows, draw_cols(draw, t, k), rows, k)
        s1 = core.Tile("s1", t, rows, draw_cols(draw, t, k), rows, k)
        a, b = bits_of(rng, t, (rows, k)), bits_of(rng, t, (rows, k))
        comb = np.concatenate([a, b], axis=1)
        body = [f"pto.tdeinterleave ins(%s0, %s1 : {s0.type()}, {s1.type()}) outs(%d0, %d1 : {d0.type()}, {d1.type()})"]
        loads, args = [s0, s1], {"g_s0": a, "g_s1": b}
    else:
        s0 = core.Tile("s0", t, rows, draw_cols(draw, t, 2 * k), rows, 2 * k)
        comb = bits_of(rng, t, (rows, 2 * k))
        body = [f"pto.tdeinterleave ins(%s0 : {s0.type()}) outs(%d0, %d1 : {d0.type()}, {d1.type()})"]
        loads, args = [s0], {"g_s0": comb}
    text = core.kernel(loads, [d0, d1], body)
    return Case(text, args, {"o_d0": Expect(t, comb[:, 0::2].copy(), nan_bits=True),
                             "o_d1": Expect(t, comb[:, 1::2].copy(), nan_bits=True)},
                f"{rows} rows, {k} pairs, {'two sources' if two else 'one source'}")


PACK_PAIRS = {"ui16<-ui32": ("ui32", "ui16"), "ui8<-ui32": ("ui32", "ui8"), "ui8<-ui16": ("ui16", "ui8"),
              "i16<-i32": ("i32", "i16"), "i8<-i16": ("i16", "i8"), "f16<-f32": ("f32", "f16")}


def tpack_draw(draw, pair, arch):
    """TPACK (A5): each element's low bits, the narrower type's width."""
    st_, dt = PACK_PAIRS[pair]
    rng = rng_of(draw)
    rows, cols, vr, vc = draw_shape(draw, st_)
    src = core.Tile("s0", st_, rows, cols, vr, vc)
    dst = core.Tile("d", dt, rows, draw_cols(draw, dt, vc), vr, vc)
    a = bits_of(rng, st_, (vr, vc))
    low = (core.raw(st_, a) & np.uint64((1 << core.BITS[dt]) - 1).astype(core.raw(st_, a).dtype))
    want = low.astype(core.UINT_OF_BITS[core.BITS[dt]]).view(core.CARRIER[dt])
    text = core.kernel([src], [dst], [f"tpack %d, %s0 : {dst.type()}, {src.type()}"])
    return Case(text, {"g_s0": a}, {"o_d": Expect(dt, want, nan_bits=True)}, f"{rows}x{cols} valid {vr}x{vc}")


register("tload", "move", load_store_draw, dtypes=table_dtypes("tload"))
register("tstore", "move", load_store_draw, dtypes=table_dtypes("tstore"))
register("tmov", "move", tmov_draw, dtypes=table_dtypes("tmov"))
register("textract", "move", textract_draw, dtypes=window_dtypes("textract"))
# The vec -> vec TINSERT the models exercise on A5 moves fp8, f16, bf16, f32, 8- and 32-bit
# integers (pto-isa's a5 TInsert, the verifier's rule); the op table's set also covers the cube
# paths. A2/A3 moves A2A3_VEC_WINDOW.
register("tinsert", "move", tinsert_draw,
         dtypes=lambda arch: [t for t in window_dtypes("tinsert")(arch)
                              if arch != "a5" or t not in ("i16", "ui16", "i64", "ui64")])
register("ttrans", "move", ttrans_draw, dtypes=table_dtypes("ttrans"))
for _op in ("tfillpad", "tfillpad_inplace", "tfillpad_expand"):
    register(_op, "move", fillpad_draw(_op), dtypes=table_dtypes(_op))
register("tconcat", "move", tconcat_draw, dtypes=table_dtypes("tconcat"))
register("tconcatidx", "move", tconcatidx_draw, dtypes=table_dtypes("tconcatidx"))
register("tdeinterleave", "move", tdeinterleave_draw)
register("tpack", "move", tpack_draw, dtypes=lambda arch: list(PACK_PAIRS) if arch == "a5" else [])
