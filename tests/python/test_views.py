"""Tile views against numpy slicing: chains of one to three pto.subview of a row-major buffer,
each a view of the one before, at constant or run-time offsets, each adding its own constant to
its region in place. A view names its parent's elements (r0 + r, c0 + c), so after the chain the
buffer is x with every view's region raised by its constant: numpy's slices give the expected
buffer."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from drawn import BACKENDS, examples, run_on

EXAMPLES = 150  # per backend


def tile(rows, cols):
    return f"!pto.tile_buf<loc=vec, dtype=f32, rows={rows}, cols={cols}, v_row={rows}, v_col={cols}>"


@st.composite
def view_chains(draw):
    """A buffer shape and a chain of views: (row offset, column offset, rows, cols, run-time?)
    each relative to the one before; columns in steps of 8 f32 (32 bytes, a row-major tile's
    alignment), rows anywhere."""
    rows = draw(st.integers(2, 12))
    cols = 8 * draw(st.integers(1, 6))
    chain = []
    h, w = rows, cols
    for _ in range(draw(st.integers(1, 3))):
        r = draw(st.integers(0, h - 1))
        c = 8 * draw(st.integers(0, w // 8 - 1))
        vh = draw(st.integers(1, h - r))
        vw = 8 * draw(st.integers(1, (w - c) // 8))
        chain.append((r, c, vh, vw, draw(st.booleans())))
        h, w = vh, vw
    return rows, cols, chain


def kernel(rows, cols, chain):
    params = "".join(f", %o{k}r: i64, %o{k}c: i64" for k in range(len(chain)))
    lines = [
        f"module {{\n  func.func @views(%x: !pto.ptr<f32>, %out: !pto.ptr<f32>{params}) "
        "attributes {pto.entry} {",
        "    %c0 = arith.constant 0 : index",
        "    %c1 = arith.constant 1 : index",
        f"    %R = arith.constant {rows} : index",
        f"    %C = arith.constant {cols} : index",
        f"    %xv = pto.make_tensor_view %x, shape = [%R, %C], strides = [%C, %c1] : "
        f"!pto.tensor_view<{rows}x{cols}xf32>",
        f"    %xp = pto.partition_view %xv, offsets = [%c0, %c0], sizes = [%R, %C] : "
        f"!pto.tensor_view<{rows}x{cols}xf32> -> !pto.partition_tensor_view<{rows}x{cols}xf32>",
        f"    %ov = pto.make_tensor_view %out, shape = [%R, %C], strides = [%C, %c1] : "
        f"!pto.tensor_view<{rows}x{cols}xf32>",
        f"    %op = pto.partition_view %ov, offsets = [%c0, %c0], sizes = [%R, %C] : "
        f"!pto.tensor_view<{rows}x{cols}xf32> -> !pto.partition_tensor_view<{rows}x{cols}xf32>",
        f"    %v0 = pto.alloc_tile : {tile(rows, cols)}",
        f"    pto.tload ins(%xp : !pto.partition_tensor_view<{rows}x{cols}xf32>) outs(%v0 : "
        f"{tile(rows, cols)})",
    ]
    parent = tile(rows, cols)
    for k, (r, c, h, w, runtime) in enumerate(chain):
        if runtime:
            lines.append(f"    %r{k} = arith.index_cast %o{k}r : i64 to index")
            lines.append(f"    %q{k} = arith.index_cast %o{k}c : i64 to index")
        else:
            lines.append(f"    %r{k} = arith.constant {r} : index")
            lines.append(f"    %q{k} = arith.constant {c} : index")
        view = tile(h, w)
        lines.append(f"    %v{k + 1} = pto.subview %v{k}[%r{k}, %q{k}] sizes [{h}, {w}] : "
                     f"{parent} -> {view}")
        lines.append(f"    %k{k} = arith.constant {10.0 ** k} : f32")
        lines.append(f"    pto.tadds ins(%v{k + 1}, %k{k} : {view}, f32) outs(%v{k + 1} : {view})")
        parent = view
    lines += [
        f"    pto.tstore ins(%v0 : {tile(rows, cols)}) outs(%op : "
        f"!pto.partition_tensor_view<{rows}x{cols}xf32>)",
        "    return\n  }\n}\n",
    ]
    return "\n".join(lines)


def expected(x, chain):
    want = x.copy()
    r0 = c0 = 0
    for k, (r, c, h, w, _) in enumerate(chain):
        r0, c0 = r0 + r, c0 + c
        want[r0:r0 + h, c0:c0 + w] += np.float32(10.0 ** k)
    return want


@pytest.mark.parametrize("backend", BACKENDS)
def test_view_chains_match_numpy_slices(pto, backend):
    seen = []

    @examples(EXAMPLES)
    @given(case=view_chains(), seed=st.integers(0, 2**32 - 1))
    def check(case, seed):
        rows, cols, chain = case
        x = np.random.default_rng(seed).integers(-100, 100, (rows, cols)).astype(np.float32)
        args = {"x": x, "out": np.zeros((rows, cols), np.float32)}
        for k, (r, c, *_rest) in enumerate(chain):
            args[f"o{k}r"], args[f"o{k}c"] = r, c
        source = kernel(rows, cols, chain)
        run = run_on(pto, backend, source, **args)
        got = run["out"].reshape(rows, cols)
        np.testing.assert_array_equal(got, expected(x, chain), err_msg=kernel(rows, cols, chain))
        seen.append(len(chain))

    check()
    assert len(seen) == EXAMPLES and max(seen) > 1  # nested chains were drawn
