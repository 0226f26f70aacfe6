"""Gathers, scatters and histograms (docs/isa/TGATHER.md, TGATHERB.md, TSCATTER.md,
MGATHER.md, MSCATTER.md, THISTOGRAM.md). All results are copies or counts: bit exact.

The documents leave TGATHER's index interpretation to the implementation; pto-isa's
implementations (CPU and NPU) and this project read an index as a position in the source
tile's row-major storage, and so does the model. TSCATTER's document writes
dst[idx[i,j], j], but its implementations store to the flat position dst.storage[idx[i,j]]
(docs/runtime.md), which the model follows (recorded in docs/numerics.md)."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from . import core
from .moves import bits_of, table_dtypes
from .registry import Case, Expect, draw_cols, draw_shape, register, rng_of


def index_type(t):
    return "i32" if core.nbytes(t) >= 4 else ("i16" if core.nbytes(t) == 2 else "i16")


def tgather_draw(draw, t, arch):
    rng = rng_of(draw)
    rows, cols, vr, vc = draw_shape(draw, t)
    src = core.Tile("s0", t, rows, cols, rows, cols)
    it = draw(st.sampled_from(["i32", "i16"])) if core.nbytes(t) <= 2 else "i32"
    dr, dc = draw(st.integers(1, 6)), draw(st.integers(1, 2 * core.row_align(it)))
    ix = core.Tile("ix", it, dr, draw_cols(draw, it, dc), dr, dc)
    dst = core.Tile("d", t, dr, draw_cols(draw, t, dc), dr, dc)
    a = bits_of(rng, t, (rows, cols))
    idx = rng.integers(0, rows * cols, size=(dr, dc))
    want = a.reshape(-1)[idx]
    text = core.kernel([src, ix], [dst], [f"pto.tgather ins(%s0, %ix : {src.type()}, {ix.type()}) outs(%d : {dst.type()})"])
    return Case(text, {"g_s0": a, "g_ix": idx.astype(core.CARRIER[it])}, {"o_d": Expect(t, want, nan_bits=True)},
                f"src {rows}x{cols}, {dr}x{dc} indices")


def tgatherb_draw(draw, t, arch):
    """32-byte blocks (pto-isa's vgatherb on A2/A3 and A5): block k of dst row i is the 32 bytes
    at byte offset off[i,k] of the source tile, for the blocks covering the row's valid elements
    (the last one cut at the valid end); an offset row holds its blocks' offsets padded to 8."""
    rng = rng_of(draw)
    rows, cols, _, _ = draw_shape(draw, t)
    src = core.Tile("s0", t, rows, cols, rows, cols)
    esz = core.nbytes(t)
    dr, dc = draw(st.integers(1, 4)), draw(st.integers(1, 3 * 32 // esz))
    row_bytes = dc * esz
    blocks = -(-row_bytes // 32)
    entries = -(-blocks // 8) * 8
    ix = core.Tile("ix", "ui32", dr, entries, dr, entries)
    dst = core.Tile("d", t, dr, draw_cols(draw, t, dc), dr, dc)
    a = bits_of(rng, t, (rows, cols))
    src_bytes = a.tobytes()
    whole = len(src_bytes) // 32  # every row is 32-byte aligned: at least one whole block
    off = np.zeros((dr, entries), dtype=np.uint32)
    want = np.zeros((dr, blocks * 32), dtype=np.uint8)
    for i in range(dr):
        for k in range(blocks):
            off[i, k] = 32 * rng.integers(0, whole)
            want[i, 32 * k:32 * k + 32] = np.frombuffer(src_bytes[off[i, k]:off[i, k] + 32], np.uint8)
    want = want[:, :row_bytes].copy().view(a.dtype).reshape(dr, dc)
    text = core.kernel([src, ix], [dst], ["tgatherb %d, %s0, %ix"])
    return Case(text, {"g_s0": a, "g_ix": off},
                {"o_d": Expect(t, want, nan_bits=True)},
                f"src {rows}x{cols}, {dr}x{dc} dst, {blocks} blocks a row")


def tscatter_draw(draw, t, arch):
    rng = rng_of(draw)
    rows, cols, _, _ = draw_shape(draw, t)
    dst = core.Tile("d", t, rows, cols, rows, cols)
    it = "i32" if core.nbytes(t) >= 4 else "i16"
    n = rows * cols
    sr = draw(st.integers(1, min(4, rows)))
    sc = draw(st.integers(1, max(1, min(n // sr, 2 * core.row_align(t)))))
    src = core.Tile("s0", t, sr, draw_cols(draw, t, sc), sr, sc)
    ix = core.Tile("ix", it, sr, draw_cols(draw, it, sc), sr, sc)
    base, a = bits_of(rng, t, (rows, cols)), bits_of(rng, t, (sr, sc))
    pos = rng.choice(n, size=sr * sc, replace=False).reshape(sr, sc)  # distinct: no writer order
    want = base.copy().reshape(-1)
    want[pos.reshape(-1)] = a.reshape(-1)
    text = core.kernel([src, ix, dst], [dst], ["tscatter %d, %s0, %ix"])
    return Case(text, {"g_s0": a, "g_ix": pos.astype(core.CARRIER[it]), "g_d": base},
                {"o_d": Expect(t, want.reshape(rows, cols), nan_bits=True)}, f"dst {rows}x{cols}, {sr}x{sc} sources")


def tgather_cmp_dtypes(arch):
    return ["f32", "f16", "i32"] if arch == "a2a3" else ["f32", "f16", "i16", "i32"]


def tgather_cmp_draw(draw, t, arch):
    """Per row r: the indices offset + r * cols + j of the elements comparing true (eq / gt)
    against the scalar, packed from dst[r, 0]; cdst[r] their count; the rest kept."""
    rng = rng_of(draw)
    rows, cols, vr, vc = draw_shape(draw, t, max_rows=4)
    mode = "eq" if (arch == "a2a3" and t == "i32") else draw(st.sampled_from(["eq", "gt"]))
    off = draw(st.integers(0, 1000))
    src = core.Tile("s0", t, rows, cols, vr, vc)
    dst = core.Tile("d", "i32", rows, -(-cols // 8) * 8, vr, vc)
    cnt = core.Tile("n", "i32", 1, -(-vr // 8) * 8, 1, vr)
    tmp = core.Tile("tmp", "ui8", rows, 32 * -(-cols * core.nbytes(t) // 32), rows, 32 * -(-cols * core.nbytes(t) // 32))
    a = core.random_values(rng, t, (vr, vc), lo=-4, hi=4) if t in core.INTS else \
        core.encode(t, rng.integers(-4, 5, size=(vr, vc)).astype(np.float64))
    k = a[rng.integers(0, vr), rng.integers(0, vc)]
    base_d = np.full((vr, vc), -1, np.int32)
    base_n = np.full((1, vr), -1, np.int32)
    want_d, want_n = base_d.copy(), base_n.copy()
    av = core.decode(t, a) if t in core.FLOATS else a.astype(np.int64)
    kv = float(core.decode(t, np.array([k]))[0]) if t in core.FLOATS else int(k)
    for r in range(vr):
        hits = [off + r * cols + j for j in range(vc) if (av[r, j] == kv if mode == "eq" else av[r, j] > kv)]
        want_d[r, :len(hits)] = hits
        want_n[0, r] = len(hits)
    body = [f"pto.tgather ins(%s0, %c, %tmp : {src.type()}, {t}, {tmp.type()}) outs(%d, %n : {dst.type()}, {cnt.type()}) "
            f"{{cmpMode = #pto<cmp {mode}>, offset = {off} : i32}}"]
    text = core.kernel([src, dst, cnt], [dst, cnt], body, temps=[tmp], consts=[("c", core.scalar_literal(t, k), t)])
    return Case(text, {"g_s0": a, "g_d": base_d, "g_n": base_n},
                {"o_d": Expect("i32", want_d), "o_n": Expect("i32", want_n)}, f"{rows}x{cols} valid {vr}x{vc} {mode}")


GATHER_OOB = ["undefined", "clamp", "wrap", "zero"]
SCATTER_OOB = ["undefined", "skip", "clamp", "wrap"]


def entry_of(k, cap, oob):
    """The table entry index k names under an out-of-bounds policy, or None (dropped); a policy
    reads the index as a uint32, as pto-isa does (docs/isa/MGATHER.md)."""
    if oob == "undefined":
        return int(k)
    u = int(k) & 0xFFFFFFFF
    if oob == "clamp":
        return min(u, cap - 1)
    if oob == "wrap":
        return u % cap
    return u if u < cap else None  # zero (gather) or skip (scatter)


def draw_gm_indexed(draw, rng, t, gather):
    """The common part of MGATHER / MSCATTER cases: the data tile, the coalesce mode (left out,
    row or elem), the policy, the table (its partition is the data's valid shape: the capacity is
    its rows in row mode, its elements in element mode) and the indices (some out of the table
    when a policy is drawn)."""
    rows, cols, vr, vc = draw_shape(draw, t)
    coalesce = draw(st.sampled_from(["", "row", "elem"]))
    oob = draw(st.sampled_from(GATHER_OOB if gather else SCATTER_OOB))
    row = coalesce == "row"
    tr, tc = vr + draw(st.integers(0, 4)), vc + draw(st.integers(0, 20))
    cap = vr if row else vr * vc
    limit = tr if row else tr * tc  # what an undefined policy may name
    n = (1, vr) if row else (vr, vc)
    if oob == "undefined":
        idx = rng.integers(0, limit, size=n)
    else:
        idx = rng.integers(-3, cap + 6, size=n)
    ix = core.Tile("ix", "i32", n[0], draw_cols(draw, "i32", n[1]), n[0], n[1])
    attrs = ([f"coalesce = #pto<coalesce {coalesce}>"] if coalesce else []) + (
        [f"{'gatherOob = #pto<gather_oob' if gather else 'scatterOob = #pto<scatter_oob'} {oob}>"]
        if oob != "undefined" or draw(st.booleans()) else [])
    return rows, cols, vr, vc, row, oob, tr, tc, cap, idx.astype(np.int32), ix, attrs


def attr_dict(attrs):
    return " {" + ", ".join(attrs) + "}" if attrs else ""


def mgather_draw(draw, t, arch):
    """dst[r,c] = table[idx[r,c]] (element mode, a flat table in GM) or dst[r,:] = table[idx[r],:]
    (row mode), each index through the out-of-bounds policy (zero: a dropped one reads 0)."""
    rng = rng_of(draw)
    rows, cols, vr, vc, row, oob, tr, tc, cap, idx, ix, attrs = draw_gm_indexed(draw, rng, t, True)
    table = bits_of(rng, t, (tr, tc))
    want = np.zeros((vr, vc), dtype=table.dtype)
    flat = table.reshape(-1)
    for r in range(vr):
        for c in range(vc):
            e = entry_of(idx[0, r] if row else idx[r, c], cap, oob)
            if e is not None:
                want[r, c] = table[e, c] if row else flat[e]
    dst = core.Tile("d", t, rows, cols, vr, vc)
    text = (f"kernel @k(%tab: !pto.tensor_view<{tr}x{tc}x{t}>, %g_ix: {ix.view()}, %o_d: {dst.view()}) {{\n"
            f"  tile %d : {dst.type()}\n  tile %ix : {ix.type()}\n  tload %ix, %g_ix[0, 0]\n"
            f"  mgather %d, %tab[0, 0], %ix{attr_dict(attrs)}\n  tstore %o_d[0, 0], %d\n}}\n")
    return Case(text, {"tab": table, "g_ix": idx}, {"o_d": Expect(t, want, nan_bits=True)},
                f"table {tr}x{tc}, {vr}x{vc} {'rows' if row else 'elements'}, oob {oob}, {attrs}")


ATOMIC_TYPES = {  # docs/isa/MSCATTER.md, "Atomic Type Support"
    ("a2a3", "add"): {"i8", "i16", "i32", "f16", "bf16", "f32"},
    ("a5", "add"): {"i32", "ui32", "f32", "f16", "bf16"},
    ("a5", "max"): {"i32", "ui32", "f32"},
    ("a5", "min"): {"i32", "ui32", "f32"},
}


def combine(t, op, old, v):
    """One atomic update of a table element (numpy carriers of type t)."""
    if op == "add":
        if t == "f32":
            with np.errstate(all="ignore"):
                return np.float32(old) + np.float32(v)
        if t in core.FLOATS:
            return core.encode(t, core.decode(t, np.array([old])) + core.decode(t, np.array([v])))[0]
        return core.wrap(t, np.array([int(old) + int(v)]))[0]
    if t == "f32":
        if np.isnan(v):
            return old
        if np.isnan(old) or (v > old if op == "max" else v < old):
            return v
        return old
    return max(old, v) if op == "max" else min(old, v)


def mscatter_draw(draw, t, arch):
    """table[idx[r,c]] = src[r,c] (element mode) or table[idx[r],:] = src[r,:] (row mode), in
    row-major order (the last writer wins, A5's Conflict::Last), each index through the
    out-of-bounds policy (skip: a dropped one writes nothing); an atomic op combines every
    writer instead. The rest of the table keeps its values."""
    rng = rng_of(draw)
    rows, cols, vr, vc, row, oob, tr, tc, cap, idx, ix, attrs = draw_gm_indexed(draw, rng, t, False)
    atomics = [op for op in ("add", "max", "min") if t in ATOMIC_TYPES.get((arch, op), set())]
    atomic = draw(st.sampled_from(["none"] + atomics))
    if atomic != "none":
        attrs.append(f"scatterAtomicOp = #pto<scatter_atomic_op {atomic}>")
    elif arch == "a5" and draw(st.booleans()):
        attrs.append(f"scatterConflict = #pto<scatter_conflict {draw(st.sampled_from(['last', 'default']))}>")
    if oob == "undefined" and atomic == "none":  # distinct entries: no writer order to model
        pool = (tr if row else tr * tc)
        if pool >= idx.size:
            idx = rng.choice(pool, size=idx.size, replace=False).reshape(idx.shape).astype(np.int32)
    table = bits_of(rng, t, (tr, tc)) if atomic == "none" else core.random_values(rng, t, (tr, tc))
    a = bits_of(rng, t, (vr, vc)) if atomic == "none" else core.random_values(rng, t, (vr, vc))
    want = table.copy()
    flat = want.reshape(-1)
    for r in range(vr):
        for c in range(vc):
            e = entry_of(idx[0, r] if row else idx[r, c], cap, oob)
            if e is None:
                continue
            at = (e, c) if row else (e // tc, e % tc)
            want[at] = a[r, c] if atomic == "none" else combine(t, atomic, want[at], a[r, c])
    src = core.Tile("s0", t, rows, cols, vr, vc)
    text = (f"kernel @k(%tab: !pto.tensor_view<{tr}x{tc}x{t}>, %g_s0: {src.view()}, %g_ix: {ix.view()}) {{\n"
            f"  tile %s0 : {src.type()}\n  tile %ix : {ix.type()}\n  tload %s0, %g_s0[0, 0]\n  tload %ix, %g_ix[0, 0]\n"
            f"  mscatter %tab[0, 0], %s0, %ix{attr_dict(attrs)}\n}}\n")
    return Case(text, {"tab": table, "g_s0": a, "g_ix": idx},
                {"tab": Expect(t, want, nan_bits=atomic == "none")},
                f"table {tr}x{tc}, {vr}x{vc} {'rows' if row else 'elements'}, oob {oob}, {attrs}")


def thistogram_draw(draw, t, arch):
    """The first (most significant byte) pass: dst[r, b] = how many of row r's valid
    elements have top byte b."""
    rng = rng_of(draw)
    rows, cols, vr, vc = draw_shape(draw, t)
    src = core.Tile("s0", t, rows, cols, vr, vc)
    dst = core.Tile("d", "ui32", rows, 256, vr, 256)
    hi = core.Tile("hi", "ui8", rows, 32, rows, 32)
    a = bits_of(rng, t, (vr, vc))
    if draw(st.booleans()):
        a = (a & np.array(0x03FFFFFF if t == "ui32" else 0x03FF).astype(a.dtype))  # few bins, big counts
    top = (a.astype(np.uint64) >> np.uint64(core.BITS[t] - 8)).astype(np.int64)
    want = np.stack([np.bincount(top[r], minlength=256) for r in range(vr)]).astype(np.uint32)
    text = core.kernel([src], [dst], ["thistogram %d, %s0, %hi"], temps=[hi])
    return Case(text, {"g_s0": a}, {"o_d": Expect("ui32", want)}, f"{rows}x{cols} valid {vr}x{vc}")


DATA_TYPES = ["f32", "f16", "bf16", "i8", "i16", "i32", "ui8", "ui16", "ui32"]

register("tgather", "gather", tgather_draw, dtypes=lambda arch: DATA_TYPES + (["i64", "ui64"] if arch == "a5" else []))
register("tgatherb", "gather", tgatherb_draw,
         dtypes=lambda arch: DATA_TYPES + ([] if arch == "a2a3" else ["i64", "ui64"]))
register("tscatter", "gather", tscatter_draw, dtypes=lambda arch: DATA_TYPES + (["i64", "ui64"] if arch == "a5" else []))
register("tgather.cmp", "gather", tgather_cmp_draw, dtypes=tgather_cmp_dtypes)
register("mgather", "gather", mgather_draw, dtypes=table_dtypes("mgather"))
register("mscatter", "gather", mscatter_draw, dtypes=table_dtypes("mscatter"))
register("thistogram", "gather", thistogram_draw, dtypes=lambda arch: ["ui16", "ui32"] if arch == "a5" else [])
