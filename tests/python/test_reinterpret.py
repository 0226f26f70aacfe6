"""memref.reinterpret_cast of a local buffer against numpy: MLIR counts a cast's offset from its
source's base buffer, so a cast of a cast (or of the view an scf.for iter_arg carries) names
buf[o:o + s] whatever its source's own offset. Chains of one to three casts, each adding its own
constant to its window, are drawn by hypothesis; numpy's slices give the expected buffer."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from drawn import BACKENDS, examples, run_on

EXAMPLES = 80  # per backend
VIEW = "memref<?x{s}xf32, strided<[?, ?], offset: ?>, #pto.address_space<vec>>"


@st.composite
def casts(draw):
    """A buffer of n f32 (a multiple of 8) and casts (offset, size, inside a loop?), offsets and
    sizes in steps of 8 elements (32 bytes, a vector tile's alignment)."""
    n = 8 * draw(st.integers(2, 8))
    chain = []
    for _ in range(draw(st.integers(1, 3))):
        o = 8 * draw(st.integers(0, n // 8 - 1))
        s = 8 * draw(st.integers(1, (n - o) // 8))
        chain.append((o, s))
    return n, chain, draw(st.booleans())


def kernel(n, chain, loop):
    buf = f"memref<{n}xf32, #pto.address_space<vec>>"
    lines = [
        "module {",
        "  func.func @rc(%x: !pto.ptr<f32>, %out: !pto.ptr<f32>) attributes {pto.entry} {",
        "    %c0 = arith.constant 0 : index",
        "    %c1 = arith.constant 1 : index",
        f"    %N = arith.constant {n} : index",
        f"    %xv = pto.make_tensor_view %x, shape = [%c1, %N], strides = [%N, %c1] : !pto.tensor_view<1x{n}xf32>",
        f"    %xp = pto.partition_view %xv, offsets = [%c0, %c0], sizes = [%c1, %N] : "
        f"!pto.tensor_view<1x{n}xf32> -> !pto.partition_tensor_view<1x{n}xf32>",
        f"    %ov = pto.make_tensor_view %out, shape = [%c1, %N], strides = [%N, %c1] : !pto.tensor_view<1x{n}xf32>",
        f"    %op = pto.partition_view %ov, offsets = [%c0, %c0], sizes = [%c1, %N] : "
        f"!pto.tensor_view<1x{n}xf32> -> !pto.partition_tensor_view<1x{n}xf32>",
        f"    %b = memref.alloc() : {buf}",
        f"    pto.tload ins(%xp : !pto.partition_tensor_view<1x{n}xf32>) outs(%b : {buf})",
    ]
    src, src_type = "%b", buf
    for k, (o, s) in enumerate(chain):
        view = VIEW.format(s=s)
        lines.append(f"    %v{k} = memref.reinterpret_cast {src} to offset: [{o}], sizes: [1, {s}], "
                     f"strides: [{n}, 1] : {src_type} to {view}")
        lines.append(f"    %k{k} = arith.constant {10.0 ** k} : f32")
        lines.append(f"    pto.tadds ins(%v{k}, %k{k} : {view}, f32) outs(%v{k} : {view})")
        src, src_type = f"%v{k}", view
    if loop:  # the last view carried through a one-trip loop, cast again inside (offset 0, 8)
        view = VIEW.format(s=8)
        lines += [
            f"    %r = scf.for %i = %c0 to %c1 step %c1 iter_args(%t = {src}) -> ({src_type}) {{",
            f"      %w = memref.reinterpret_cast %t to offset: [0], sizes: [1, 8], strides: [{n}, 1] : "
            f"{src_type} to {view}",
            "      %kl = arith.constant 1000.0 : f32",
            f"      pto.tadds ins(%w, %kl : {view}, f32) outs(%w : {view})",
            f"      scf.yield %t : {src_type}",
            "    }",
        ]
    lines += [f"    pto.tstore ins(%b : {buf}) outs(%op : !pto.partition_tensor_view<1x{n}xf32>)",
              "    return\n  }\n}\n"]
    return "\n".join(lines)


@pytest.mark.parametrize("backend", BACKENDS)
def test_cast_chains_match_numpy(pto, backend):
    seen = []

    @examples(EXAMPLES)
    @given(case=casts(), seed=st.integers(0, 2**32 - 1))
    def check(case, seed):
        n, chain, loop = case
        x = np.random.default_rng(seed).integers(-100, 100, n).astype(np.float32)
        want = x.copy()
        for k, (o, s) in enumerate(chain):
            want[o:o + s] += np.float32(10.0 ** k)
        if loop:
            want[0:8] += np.float32(1000.0)
        source = kernel(n, chain, loop)
        args = {"x": x, "out": np.zeros(n, np.float32)}
        run = run_on(pto, backend, source, **args)
        np.testing.assert_array_equal(run["out"].reshape(n), want, err_msg=source)
        seen.append((len(chain), loop))

    check()
    assert len(seen) == EXAMPLES and max(c for c, _ in seen) > 1 and any(l for _, l in seen)
