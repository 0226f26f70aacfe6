"""GM partitions against numpy slicing: a random window of a row-major GM view (its row stride
wider than its columns, as a view of a larger array is) loaded into a tile whose valid region is
the window, then stored at another random window of the output. Offsets are run-time values or
constants, drawn by hypothesis; the expected output is numpy's slice assignment."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from drawn import BACKENDS, examples, run_on

EXAMPLES = 100  # per backend


@st.composite
def windows(draw):
    rows, cols = draw(st.integers(1, 24)), draw(st.integers(1, 40))
    pitch = cols + draw(st.integers(0, 9))  # the view's row stride, in elements
    h, w = draw(st.integers(1, rows)), draw(st.integers(1, cols))
    src = (draw(st.integers(0, rows - h)), draw(st.integers(0, cols - w)))
    dst = (draw(st.integers(0, rows - h)), draw(st.integers(0, cols - w)))
    return rows, cols, pitch, h, w, src, dst, draw(st.booleans())


def kernel(rows, cols, pitch, h, w, runtime):
    tw = -(-w // 8) * 8  # tile columns: a row of 32-byte multiples
    tile = f"!pto.tile_buf<loc=vec, dtype=f32, rows={h}, cols={tw}, v_row={h}, v_col={w}>"
    view = f"!pto.tensor_view<{rows}x{cols}xf32>"
    part = f"!pto.partition_tensor_view<{h}x{w}xf32>"
    offsets = ("    %r0 = arith.index_cast %a : i64 to index\n"
               "    %c0_ = arith.index_cast %b : i64 to index\n"
               "    %r1 = arith.index_cast %c : i64 to index\n"
               "    %c1_ = arith.index_cast %d : i64 to index\n")
    return f"""module {{
  func.func @win(%x: !pto.ptr<f32>, %out: !pto.ptr<f32>, %a: i64, %b: i64, %c: i64, %d: i64)
      attributes {{pto.entry}} {{
    %c1 = arith.constant 1 : index
    %R = arith.constant {rows} : index
    %C = arith.constant {cols} : index
    %P = arith.constant {pitch} : index
    %H = arith.constant {h} : index
    %W = arith.constant {w} : index
{offsets if runtime else ""}    %xv = pto.make_tensor_view %x, shape = [%R, %C], strides = [%P, %c1] : {view}
    %ov = pto.make_tensor_view %out, shape = [%R, %C], strides = [%P, %c1] : {view}
    %xp = pto.partition_view %xv, offsets = [%r0, %c0_], sizes = [%H, %W] : {view} -> {part}
    %op = pto.partition_view %ov, offsets = [%r1, %c1_], sizes = [%H, %W] : {view} -> {part}
    %t = pto.alloc_tile : {tile}
    pto.tload ins(%xp : {part}) outs(%t : {tile})
    pto.tstore ins(%t : {tile}) outs(%op : {part})
    return
  }}
}}
"""


def constants(src, dst):
    return ("    %r0 = arith.constant {} : index\n    %c0_ = arith.constant {} : index\n"
            "    %r1 = arith.constant {} : index\n    %c1_ = arith.constant {} : index\n"
            ).format(*src, *dst)


@pytest.mark.parametrize("backend", BACKENDS)
def test_windows_match_numpy_slices(pto, backend):
    seen = []

    @examples(EXAMPLES)
    @given(case=windows(), seed=st.integers(0, 2**32 - 1))
    def check(case, seed):
        rows, cols, pitch, h, w, src, dst, runtime = case
        source = kernel(rows, cols, pitch, h, w, runtime)
        if not runtime:
            source = source.replace("    %xv =", constants(src, dst) + "    %xv =", 1)
        x = np.random.default_rng(seed).integers(-1000, 1000, (rows, pitch)).astype(np.float32)
        out = np.zeros((rows, pitch), np.float32)
        args = {"x": x.ravel()[:(rows - 1) * pitch + cols], "out": out.ravel()[:(rows - 1) * pitch + cols],
                "a": src[0], "b": src[1], "c": dst[0], "d": dst[1]}
        run = run_on(pto, backend, source, **args)
        got = np.zeros(rows * pitch, np.float32)
        got[:(rows - 1) * pitch + cols] = run["out"]
        want = out.copy()
        want[dst[0]:dst[0] + h, dst[1]:dst[1] + w] = x[src[0]:src[0] + h, src[1]:src[1] + w]
        np.testing.assert_array_equal(got.reshape(rows, pitch), want, err_msg=source)
        seen.append(runtime)

    check()
    assert len(seen) == EXAMPLES and any(seen) and not all(seen)
