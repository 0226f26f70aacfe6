"""TMATMUL / TGEMV and their .acc, .bias and MX forms (docs/isa/TMATMUL*.md, TGEMV*.md):
C[i,j] = sum_k A[i,k] * B[k,j] (+ the accumulator input, + bias[0,j]); TGEMV is the M = 1
case. MX forms scale A by 2^(ls[i,k/32]-127) and B by 2^(rs[k/32,j]-127) (E8M0 scales per
32 elements along K, the OCP MX block scaling; the documents call their role target-defined).

Products of the input formats are exact in f32; the accumulation order is not documented,
so f32 results are compared within the bound of any order (K * u * sum|A*B|, plus the bias
and accumulator terms); i8 x i8 -> i32 is exact (wrapping)."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

from . import core
from .conversions import decode_value
from .registry import Case, Expect, register, rng_of

TRIPLES = {"a2a3": ["f32<-f16", "f32<-bf16", "f32<-f32", "i32<-i8"],
           "a5": ["f32<-f16", "f32<-bf16", "f32<-f32", "i32<-i8", "f32<-f8E4M3", "f32<-f8E5M2",
                  "f32<-f8E4M3xf8E5M2", "f32<-f8E5M2xf8E4M3", "f32<-hif8"]}
MX_TRIPLES = ["f32<-f8E4M3", "f32<-f8E5M2", "f32<-f8E4M3xf8E5M2", "f32<-f8E5M2xf8E4M3"]


def split(triple):
    c, ab = triple.split("<-")
    a, b = ab.split("x") if "x" in ab else (ab, ab)
    return c, a, b


def operand(rng, t, shape):
    """Inputs and their exact values: small-ish floats, or any byte of an 8-bit format that is
    finite."""
    if t in ("f8E4M3", "f8E5M2", "hif8"):
        codes = rng.integers(0, 256, size=shape).astype(np.uint8)
        vals = np.vectorize(lambda c: decode_value(t, int(c)))(codes)
        bad = ~np.isfinite(vals)
        codes[bad] = 0x38 if t == "f8E4M3" else (0x3C if t == "f8E5M2" else 0x08)
        return codes, np.vectorize(lambda c: decode_value(t, int(c)))(codes)
    if t == "i8":
        a = rng.integers(-128, 128, size=shape).astype(np.int8)
        return a, a.astype(object)
    a = core.random_values(rng, t, shape, lo=-8, hi=8)
    return a, core.decode(t, a)


def pad(n, t):
    return core.row_align(t) * -(-n // core.row_align(t))


def bound_check(exact, absum, k, shape):
    def check(got):
        g = np.asarray(got, dtype=np.float64).reshape(shape)
        tol = (k + 2) * 2.0 ** -24 * absum + 2.0 ** -140
        return ~(np.abs(g - exact) <= tol)
    return check


def matmul_draw(op: str):
    gemv = op.startswith("tgemv")
    form = op.split(".", 1)[1] if "." in op else ""
    mx = form.startswith("mx")
    variant = form.replace("mx", "").strip(".")  # "", "acc", "bias"

    def draw_case(draw, triple, arch):
        rng = rng_of(draw)
        tc, ta, tb = split(triple)
        m = 1 if gemv else draw(st.integers(1, 16))
        k = 32 * draw(st.integers(1, 3)) if mx else draw(st.integers(1, 48))
        n = draw(st.integers(1, 24))
        a, av = operand(rng, ta, (m, k))
        b, bv = operand(rng, tb, (k, n))
        loads = [f"%g_a: !pto.tensor_view<{m}x{k}x{ta}>", f"%g_b: !pto.tensor_view<{k}x{n}x{tb}>"]
        tiles = [f"tile %ma : !pto.tile_buf<mat, {m}x{pad(k, ta)}x{ta}, valid={m}x{k}>",
                 f"tile %mb : !pto.tile_buf<mat, {k}x{pad(n, tb)}x{tb}, valid={k}x{n}>",
                 f"tile %l : !pto.tile_buf<left, {m}x{pad(k, ta)}x{ta}, valid={m}x{k}>",
                 f"tile %r : !pto.tile_buf<right, {k}x{pad(n, tb)}x{tb}, valid={k}x{n}>"]
        acc_t = f"!pto.tile_buf<acc, {m}x{pad(n, tc)}x{tc}, valid={m}x{n}>"
        tiles += [f"tile %acc, %acc2 : {acc_t}"]
        body = ["tload %ma, %g_a[0, 0]", "tload %mb, %g_b[0, 0]", "tmov %l, %ma", "tmov %r, %mb"]
        args = {"g_a": a, "g_b": b}
        ins = ["%l", "%r"]
        in_types = [f"!pto.tile_buf<left, {m}x{pad(k, ta)}x{ta}, valid={m}x{k}>",
                    f"!pto.tile_buf<right, {k}x{pad(n, tb)}x{tb}, valid={k}x{n}>"]
        if mx:
            kb = k // 32
            ls = rng.integers(120, 135, size=(m, kb)).astype(np.uint8)
            rs = rng.integers(120, 135, size=(kb, n)).astype(np.uint8)
            av = av * np.repeat(np.exp2(ls.astype(np.float64) - 127), 32, axis=1)
            bv = bv * np.repeat(np.exp2(rs.astype(np.float64) - 127), 32, axis=0)
            loads += [f"%g_ls: !pto.tensor_view<{m}x{kb}xf8E8M0>", f"%g_rs: !pto.tensor_view<{kb}x{n}xf8E8M0>"]
            ls_t = f"!pto.tile_buf<scaling, {m}x32xf8E8M0, valid={m}x{kb}>"
            rs_t = f"!pto.tile_buf<scaling, {kb}x{pad(n, 'f8E8M0')}xf8E8M0, valid={kb}x{n}>"
            tiles += [f"tile %mls : !pto.tile_buf<mat, {m}x32xf8E8M0, valid={m}x{kb}>",
                      f"tile %mrs : !pto.tile_buf<mat, {kb}x{pad(n, 'f8E8M0')}xf8E8M0, valid={kb}x{n}>",
                      f"tile %lsc : {ls_t}", f"tile %rsc : {rs_t}"]
            body += ["tload %mls, %g_ls[0, 0]", "tload %mrs, %g_rs[0, 0]", "tmov %lsc, %mls", "tmov %rsc, %mrs"]
            args.update({"g_ls": ls, "g_rs": rs})
            ins = ["%l", "%lsc", "%r", "%rsc"]
            in_types = [in_types[0], ls_t, in_types[1], rs_t]
        if tc == "i32":
            prod = np.array([[sum(int(av[i, q]) * int(bv[q, j]) for q in range(k)) for j in range(n)] for i in range(m)], dtype=object)
            absum = None
        else:
            prod = av.astype(np.float64) @ bv.astype(np.float64)  # exact enough: see bound below
            prod = np.array([[math.fsum(av[i, :].astype(np.float64) * bv[:, j].astype(np.float64)) for j in range(n)] for i in range(m)])
            absum = np.abs(av.astype(np.float64)) @ np.abs(bv.astype(np.float64))
        name = op.split(".")[0] + (".mx" if mx else "")
        if variant == "bias":
            bias = (rng.integers(-64, 64, size=(1, n)) / 4).astype(np.float32) if tc == "f32" else rng.integers(-1000, 1000, size=(1, n)).astype(np.int32)
            loads.append(f"%g_bias: !pto.tensor_view<1x{n}x{tc}>")
            bias_t = f"!pto.tile_buf<bias, 1x{pad(n, tc)}x{tc}, valid=1x{n}>"
            tiles += [f"tile %mbias : !pto.tile_buf<mat, 1x{pad(n, tc)}x{tc}, valid=1x{n}>", f"tile %bi : {bias_t}"]
            body += ["tload %mbias, %g_bias[0, 0]", "tmov %bi, %mbias"]
            args["g_bias"] = bias
            body.append(f"pto.{name}.bias ins({', '.join(ins + ['%bi'])} : {', '.join(in_types + [bias_t])}) outs(%acc2 : {acc_t})")
            prod = prod + (bias.astype(object) if tc == "i32" else bias.astype(np.float64))
            if absum is not None:
                absum = absum + np.abs(bias.astype(np.float64))
        elif variant == "acc":
            body.append(f"pto.{name} ins({', '.join(ins)} : {', '.join(in_types)}) outs(%acc : {acc_t})")
            body.append(f"pto.{name}.acc ins({', '.join(['%acc'] + ins)} : {', '.join([acc_t] + in_types)}) outs(%acc2 : {acc_t})")
            prod = prod * 2
            if absum is not None:
                absum = absum * 3
        else:
            body.append(f"pto.{name} ins({', '.join(ins)} : {', '.join(in_types)}) outs(%acc2 : {acc_t})")
        loads.append(f"%o_c: !pto.tensor_view<{m}x{n}x{tc}>")
        text = f"kernel @k({', '.join(loads)}) {{\n" + "".join(f"  {x}\n" for x in tiles + body) + \
            "  tstore %o_c[0, 0], %acc2\n}\n"
        note = f"{triple} M={m} K={k} N={n}"
        if tc == "i32":
            return Case(text, args, {"o_c": Expect("i32", core.wrap("i32", prod))}, note)
        want = prod.astype(np.float32)
        return Case(text, args, {"o_c": Expect("f32", want, check=bound_check(prod, absum, k, (m, n)))}, note)
    return draw_case


for _op in ("tmatmul", "tmatmul.acc", "tmatmul.bias", "tgemv", "tgemv.acc", "tgemv.bias"):
    register(_op, "matmul", matmul_draw(_op), dtypes=lambda arch: TRIPLES[arch], tolerance="sum-bound")
for _op in ("tmatmul.mx", "tmatmul.mx.acc", "tmatmul.mx.bias", "tgemv.mx", "tgemv.mx.acc", "tgemv.mx.bias"):
    register(_op, "matmul", matmul_draw(_op), dtypes=lambda arch: MX_TRIPLES if arch == "a5" else [], tolerance="sum-bound")


def tmov_fp_draw(draw, pair, arch):
    """TMOV acc -> vec with a scaling tile (docs/isa/TMOV_FP.md; the quant word's fields as
    docs/language.md "Fixpipe attributes" reads them): per column j, scale = the f32 whose bits
    are word[31:13] followed by 13 zeros, offset = word[45:37], signed range when word[46];
    q = clamp(rint(f32(f32(acc) * scale) + offset), range), each step in f32."""
    dt, tc = pair.split("<-")
    rng = rng_of(draw)
    m, k, n = draw(st.integers(1, 16)), draw(st.integers(1, 32)), draw(st.integers(1, 16))
    ta = "i8" if tc == "i32" else "f32"
    if ta == "i8":
        a, av = operand(rng, "i8", (m, k))
        b, bv = operand(rng, "i8", (k, n))
        acc = np.array([[sum(int(av[i, q]) * int(bv[q, j]) for q in range(k)) for j in range(n)] for i in range(m)], dtype=np.int64)
    else:  # small integers: an exact f32 accumulator
        a = rng.integers(-20, 21, size=(m, k)).astype(np.float32)
        b = rng.integers(-20, 21, size=(k, n)).astype(np.float32)
        acc = a.astype(np.int64) @ b.astype(np.int64)
    signed = dt == "i8"
    scale = (rng.uniform(0.001, 0.5, size=n).astype(np.float32).view(np.uint32) >> 13) << 13
    offset = rng.integers(0, 256 if not signed else 8, size=n).astype(np.uint64)
    words = scale.astype(np.uint64) | (offset << np.uint64(37)) | (np.uint64(1 if signed else 0) << np.uint64(46))
    with np.errstate(all="ignore"):
        x = acc.astype(np.float32)  # i32 -> f32 rounds to nearest even
        r = (x * scale.view(np.float32)).astype(np.float32)
        r = (r.astype(np.float64) + offset.astype(np.float64)).astype(np.float32) if True else r
    lo, hi = (-128, 127) if signed else (0, 255)
    q = np.clip(np.rint(r.astype(np.float64)), lo, hi).astype(core.CARRIER[dt])
    acc_t = f"!pto.tile_buf<acc, {m}x{pad(n, tc)}x{tc}, valid={m}x{n}>"
    fp_t = f"!pto.tile_buf<scaling, 1x{pad(n, 'ui64')}xui64, valid=1x{n}>"
    dst_t = f"!pto.tile_buf<vec, {m}x{pad(n, dt)}x{dt}, valid={m}x{n}>"
    text = (f"kernel @k(%g_a: !pto.tensor_view<{m}x{k}x{ta}>, %g_b: !pto.tensor_view<{k}x{n}x{ta}>, "
            f"%g_w: !pto.tensor_view<1x{n}xui64>, %o_q: !pto.tensor_view<{m}x{n}x{dt}>) {{\n"
            f"  tile %ma : !pto.tile_buf<mat, {m}x{pad(k, ta)}x{ta}, valid={m}x{k}>\n"
            f"  tile %mb : !pto.tile_buf<mat, {k}x{pad(n, ta)}x{ta}, valid={k}x{n}>\n"
            f"  tile %l : !pto.tile_buf<left, {m}x{pad(k, ta)}x{ta}, valid={m}x{k}>\n"
            f"  tile %r : !pto.tile_buf<right, {k}x{pad(n, ta)}x{ta}, valid={k}x{n}>\n"
            f"  tile %acc : {acc_t}\n  tile %wm : !pto.tile_buf<mat, 1x{pad(n, 'ui64')}xui64, valid=1x{n}>\n"
            f"  tile %fp : {fp_t}\n  tile %q : {dst_t}\n"
            f"  tload %ma, %g_a[0, 0]\n  tload %mb, %g_b[0, 0]\n  tload %wm, %g_w[0, 0]\n"
            f"  tmov %l, %ma\n  tmov %r, %mb\n  tmov %fp, %wm\n  tmatmul %acc, %l, %r\n"
            f"  pto.tmov ins(%acc, %fp : {acc_t}, {fp_t}) outs(%q : {dst_t})\n"
            f"  tstore %o_q[0, 0], %q\n}}\n")
    return Case(text, {"g_a": a, "g_b": b, "g_w": words.reshape(1, n)}, {"o_q": Expect(dt, q)},
                f"{pair} M={m} K={k} N={n}")


register("tmov.fp", "matmul", tmov_fp_draw,
         dtypes=lambda arch: ["i8<-i32", "ui8<-i32", "i8<-f32", "ui8<-f32"] if arch == "a5" else [])
