"""Views of a boxed tile against numpy: on A5 a left tile is Nz (column blocks of 16x16 f16
boxes). Chains of one or two pto.subview on its box grid, at constant or run-time offsets, are
multiplied by B on the cube; the product must be numpy's X[r:r+h, c:c+w] @ B[:w] whatever the
offsets (small integers: every product and sum exact in f16 and f32)."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from drawn import BACKENDS, examples, run_on

EXAMPLES = 80  # per backend


def left(rows, cols):
    return f"!pto.tile_buf<loc=left, dtype=f16, rows={rows}, cols={cols}, v_row={rows}, v_col={cols}>"


def mat(rows, cols):
    return (f"!pto.tile_buf<loc=mat, dtype=f16, rows={rows}, cols={cols}, v_row={rows}, v_col={cols}, "
            "blayout=col_major, slayout=row_major, fractal=512, pad=0>")


@st.composite
def chains(draw):
    """X's shape (multiples of 16) and one or two views on the 16x16 box grid, each relative to
    the one before: (row offset, column offset, rows, cols, run-time?)."""
    m, k = 16 * draw(st.integers(1, 4)), 16 * draw(st.integers(1, 4))
    chain, h, w = [], m, k
    for _ in range(draw(st.integers(1, 2))):
        r, c = 16 * draw(st.integers(0, h // 16 - 1)), 16 * draw(st.integers(0, w // 16 - 1))
        vh, vw = 16 * draw(st.integers(1, (h - r) // 16)), 16 * draw(st.integers(1, (w - c) // 16))
        chain.append((r, c, vh, vw, draw(st.booleans())))
        h, w = vh, vw
    return m, k, chain


def kernel(m, k, chain):
    h, w = chain[-1][2], chain[-1][3]
    params = "".join(f", %o{i}r: i64, %o{i}c: i64" for i in range(len(chain)))
    body = [
        f"module attributes {{pto.target_arch = \"a5\"}} {{\n  func.func @bv(%x: !pto.ptr<f16>, "
        f"%b: !pto.ptr<f16>, %out: !pto.ptr<f32>{params}) attributes {{pto.entry}} {{",
        "    %c0 = arith.constant 0 : index",
        "    %c1 = arith.constant 1 : index",
        "    %c16 = arith.constant 16 : index",
        f"    %M = arith.constant {m} : index",
        f"    %K = arith.constant {k} : index",
        f"    %H = arith.constant {h} : index",
        f"    %W = arith.constant {w} : index",
        f"    %xv = pto.make_tensor_view %x, shape = [%M, %K], strides = [%K, %c1] : !pto.tensor_view<{m}x{k}xf16>",
        f"    %xp = pto.partition_view %xv, offsets = [%c0, %c0], sizes = [%M, %K] : "
        f"!pto.tensor_view<{m}x{k}xf16> -> !pto.partition_tensor_view<{m}x{k}xf16>",
        f"    %bv = pto.make_tensor_view %b, shape = [%W, %c16], strides = [%c16, %c1] : !pto.tensor_view<{w}x16xf16>",
        f"    %bp = pto.partition_view %bv, offsets = [%c0, %c0], sizes = [%W, %c16] : "
        f"!pto.tensor_view<{w}x16xf16> -> !pto.partition_tensor_view<{w}x16xf16>",
        f"    %ov = pto.make_tensor_view %out, shape = [%H, %c16], strides = [%c16, %c1] : !pto.tensor_view<{h}x16xf32>",
        f"    %op = pto.partition_view %ov, offsets = [%c0, %c0], sizes = [%H, %c16] : "
        f"!pto.tensor_view<{h}x16xf32> -> !pto.partition_tensor_view<{h}x16xf32>",
        f"    %xm = pto.alloc_tile : {mat(m, k)}",
        f"    %bm = pto.alloc_tile : {mat(w, 16)}",
        f"    %l = pto.alloc_tile : {left(m, k)}",
        f"    %r = pto.alloc_tile : !pto.tile_buf<loc=right, dtype=f16, rows={w}, cols=16, v_row={w}, v_col=16>",
        f"    %acc = pto.alloc_tile : !pto.tile_buf<loc=acc, dtype=f32, rows={h}, cols=16, v_row={h}, v_col=16>",
        f"    pto.tload ins(%xp : !pto.partition_tensor_view<{m}x{k}xf16>) outs(%xm : {mat(m, k)})",
        f"    pto.tload ins(%bp : !pto.partition_tensor_view<{w}x16xf16>) outs(%bm : {mat(w, 16)})",
        f"    pto.tmov ins(%xm : {mat(m, k)}) outs(%l : {left(m, k)})",
        f"    pto.tmov ins(%bm : {mat(w, 16)}) outs(%r : !pto.tile_buf<loc=right, dtype=f16, rows={w}, "
        f"cols=16, v_row={w}, v_col=16>)",
    ]
    parent, name = left(m, k), "%l"
    for i, (r, c, vh, vw, runtime) in enumerate(chain):
        if runtime:
            body.append(f"    %r{i} = arith.index_cast %o{i}r : i64 to index")
            body.append(f"    %q{i} = arith.index_cast %o{i}c : i64 to index")
        else:
            body.append(f"    %r{i} = arith.constant {r} : index")
            body.append(f"    %q{i} = arith.constant {c} : index")
        body.append(f"    %v{i} = pto.subview {name}[%r{i}, %q{i}] sizes [{vh}, {vw}] : {parent} -> {left(vh, vw)}")
        parent, name = left(vh, vw), f"%v{i}"
    body += [
        f"    pto.tmatmul ins({name}, %r : {parent}, !pto.tile_buf<loc=right, dtype=f16, rows={w}, cols=16, "
        f"v_row={w}, v_col=16>) outs(%acc : !pto.tile_buf<loc=acc, dtype=f32, rows={h}, cols=16, v_row={h}, "
        "v_col=16>)",
        f"    pto.tstore ins(%acc : !pto.tile_buf<loc=acc, dtype=f32, rows={h}, cols=16, v_row={h}, v_col=16>) "
        f"outs(%op : !pto.partition_tensor_view<{h}x16xf32>)",
        "    return\n  }\n}\n",
    ]
    return "\n".join(body)


@pytest.mark.parametrize("backend", BACKENDS)
def test_boxed_view_chains_match_numpy(pto, backend):
    seen = []

    @examples(EXAMPLES)
    @given(case=chains(), seed=st.integers(0, 2**32 - 1))
    def check(case, seed):
        m, k, chain = case
        h, w = chain[-1][2], chain[-1][3]
        rng = np.random.default_rng(seed)
        x = rng.integers(-4, 5, (m, k)).astype(np.float16)
        b = rng.integers(-4, 5, (w, 16)).astype(np.float16)
        args = {"x": x, "b": b, "out": np.zeros((h, 16), np.float32)}
        r0 = c0 = 0
        for i, (r, c, *_rest) in enumerate(chain):
            args[f"o{i}r"], args[f"o{i}c"] = r, c
            r0, c0 = r0 + r, c0 + c
        source = kernel(m, k, chain)
        run = run_on(pto, backend, source, **args)
        want = x[r0:r0 + h, c0:c0 + w].astype(np.float32) @ b.astype(np.float32)
        np.testing.assert_array_equal(run["out"].reshape(h, 16), want, err_msg=source)
        seen.append(len(chain))

    check()
    assert len(seen) == EXAMPLES and max(seen) > 1


def acc(rows, cols):
    return (f"!pto.tile_buf<loc=acc, dtype=f32, rows={rows}, cols={cols}, v_row={rows}, v_col={cols}, "
            "blayout=col_major, slayout=row_major, fractal=1024, pad=0>")


def strip_kernel(m, n, view):
    """C = X @ B (m x 16 by 16 x n) in an acc tile, then one view of C stored to out."""
    r, c, h, w, runtime = view
    offsets = ("    %vr = arith.index_cast %or : i64 to index\n    %vc = arith.index_cast %oc : i64 to index"
               if runtime else f"    %vr = arith.constant {r} : index\n    %vc = arith.constant {c} : index")
    return f"""module attributes {{pto.target_arch = "a5"}} {{
  func.func @strip(%x: !pto.ptr<f16>, %b: !pto.ptr<f16>, %out: !pto.ptr<f32>, %or: i64, %oc: i64) attributes {{pto.entry}} {{
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %M = arith.constant {m} : index
    %N = arith.constant {n} : index
    %H = arith.constant {h} : index
    %W = arith.constant {w} : index
    %xv = pto.make_tensor_view %x, shape = [%M, %c16], strides = [%c16, %c1] : !pto.tensor_view<{m}x16xf16>
    %xp = pto.partition_view %xv, offsets = [%c0, %c0], sizes = [%M, %c16] : !pto.tensor_view<{m}x16xf16> -> !pto.partition_tensor_view<{m}x16xf16>
    %bv = pto.make_tensor_view %b, shape = [%c16, %N], strides = [%N, %c1] : !pto.tensor_view<16x{n}xf16>
    %bp = pto.partition_view %bv, offsets = [%c0, %c0], sizes = [%c16, %N] : !pto.tensor_view<16x{n}xf16> -> !pto.partition_tensor_view<16x{n}xf16>
    %ov = pto.make_tensor_view %out, shape = [%H, %W], strides = [%W, %c1] : !pto.tensor_view<{h}x{w}xf32>
    %op = pto.partition_view %ov, offsets = [%c0, %c0], sizes = [%H, %W] : !pto.tensor_view<{h}x{w}xf32> -> !pto.partition_tensor_view<{h}x{w}xf32>
    %xm = pto.alloc_tile : {mat(m, 16)}
    %bm = pto.alloc_tile : {mat(16, n)}
    %l = pto.alloc_tile : {left(m, 16)}
    %r = pto.alloc_tile : !pto.tile_buf<loc=right, dtype=f16, rows=16, cols={n}, v_row=16, v_col={n}>
    %acc = pto.alloc_tile : {acc(m, n)}
    pto.tload ins(%xp : !pto.partition_tensor_view<{m}x16xf16>) outs(%xm : {mat(m, 16)})
    pto.tload ins(%bp : !pto.partition_tensor_view<16x{n}xf16>) outs(%bm : {mat(16, n)})
    pto.tmov ins(%xm : {mat(m, 16)}) outs(%l : {left(m, 16)})
    pto.tmov ins(%bm : {mat(16, n)}) outs(%r : !pto.tile_buf<loc=right, dtype=f16, rows=16, cols={n}, v_row=16, v_col={n}>)
    pto.tmatmul ins(%l, %r : {left(m, 16)}, !pto.tile_buf<loc=right, dtype=f16, rows=16, cols={n}, v_row=16, v_col={n}>) outs(%acc : {acc(m, n)})
{offsets}
    %s = pto.subview %acc[%vr, %vc] sizes [{h}, {w}] : {acc(m, n)} -> {acc(h, w)}
    pto.tstore ins(%s : {acc(h, w)}) outs(%op : !pto.partition_tensor_view<{h}x{w}xf32>)
    return
  }}
}}
"""


@st.composite
def strips(draw):
    m, n = 16 * draw(st.integers(1, 4)), 16 * draw(st.integers(1, 4))
    r, c = 16 * draw(st.integers(0, m // 16 - 1)), 16 * draw(st.integers(0, n // 16 - 1))
    h, w = 16 * draw(st.integers(1, (m - r) // 16)), 16 * draw(st.integers(1, (n - c) // 16))
    return m, n, (r, c, h, w, draw(st.booleans()))


@pytest.mark.parametrize("backend", BACKENDS)
def test_acc_views_match_numpy(pto, backend):
    """A view of an acc tile (Nz, 16x16 f32 boxes) stored to GM: the rows and columns numpy's
    slice of X @ B names, at constant or run-time offsets (PTOAS's DeepSeek prefill strips)."""
    seen = []

    @examples(EXAMPLES)
    @given(case=strips(), seed=st.integers(0, 2**32 - 1))
    def check(case, seed):
        m, n, (r, c, h, w, runtime) = case
        rng = np.random.default_rng(seed)
        x = rng.integers(-4, 5, (m, 16)).astype(np.float16)
        b = rng.integers(-4, 5, (16, n)).astype(np.float16)
        args = {"x": x, "b": b, "out": np.zeros((h, w), np.float32), "or": r, "oc": c}
        source = strip_kernel(m, n, (r, c, h, w, runtime))
        run = run_on(pto, backend, source, **args)
        want = (x.astype(np.float32) @ b.astype(np.float32))[r:r + h, c:c + w]
        np.testing.assert_array_equal(run["out"].reshape(h, w), want, err_msg=source)
        seen.append(runtime)

    check()
    assert len(seen) == EXAMPLES and any(seen) and not all(seen)
