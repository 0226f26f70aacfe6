"""Shared kernels of the pto Python tests (docs/python.md). The module is imported from
PYTHONPATH=<build>/python (ctest sets it; see tests/CMakeLists.txt)."""
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]

# z = x + y over n rows of 16 f32 (pointer parameters: the linker records extents 16*n).
VADD = """
module {
  func.func @vadd(%x: !pto.ptr<f32>, %y: !pto.ptr<f32>, %z: !pto.ptr<f32>, %n: index) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c16 = arith.constant 16 : index
    %vx = pto.make_tensor_view %x, shape = [%n, %c16], strides = [%c16, %c1] : !pto.tensor_view<?x?xf32>
    %vy = pto.make_tensor_view %y, shape = [%n, %c16], strides = [%c16, %c1] : !pto.tensor_view<?x?xf32>
    %vz = pto.make_tensor_view %z, shape = [%n, %c16], strides = [%c16, %c1] : !pto.tensor_view<?x?xf32>
    pto.section.vector {
      %a = pto.alloc_tile : !pto.tile_buf<vec, 1x16xf32>
      %b = pto.alloc_tile : !pto.tile_buf<vec, 1x16xf32>
      %c = pto.alloc_tile : !pto.tile_buf<vec, 1x16xf32>
      scf.for %i = %c0 to %n step %c1 {
        %px = pto.partition_view %vx, offsets = [%i, %c0], sizes = [%c1, %c16] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<1x16xf32>
        %py = pto.partition_view %vy, offsets = [%i, %c0], sizes = [%c1, %c16] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<1x16xf32>
        %pz = pto.partition_view %vz, offsets = [%i, %c0], sizes = [%c1, %c16] : !pto.tensor_view<?x?xf32> -> !pto.partition_tensor_view<1x16xf32>
        pto.tload ins(%px : !pto.partition_tensor_view<1x16xf32>) outs(%a : !pto.tile_buf<vec, 1x16xf32>)
        pto.tload ins(%py : !pto.partition_tensor_view<1x16xf32>) outs(%b : !pto.tile_buf<vec, 1x16xf32>)
        pto.tadd ins(%a, %b : !pto.tile_buf<vec, 1x16xf32>, !pto.tile_buf<vec, 1x16xf32>) outs(%c : !pto.tile_buf<vec, 1x16xf32>)
        pto.tstore ins(%c : !pto.tile_buf<vec, 1x16xf32>) outs(%pz : !pto.partition_tensor_view<1x16xf32>)
      }
    }
    return
  }
}
"""

# s[r] = sum of row r of a 16x64 f32 matrix (a row reduction into a 16x1 view).
ROWSUM = """
kernel @rowsum(%x: !pto.tensor_view<16x64xf32>, %s: !pto.tensor_view<16x1xf32>) {
  tile %a, %tmp : !pto.tile<f32, 16, 64>
  tile %r : !pto.tile_buf<vec, 16x8xf32, valid=16x1>
  tload %a, %x[0, 0]
  trowsum %r, %a, %tmp
  tstore %s[0, 0], %r
}
"""

# An endless loop (scalar code only): for the Ctrl-C test (tests/inputs/spin.pto, shared with
# tests/unit/HostArgsTest.cpp).
SPIN = (REPO / "tests" / "inputs" / "spin.pto").read_text()


@pytest.fixture(scope="session")
def pto():
    import pto as module

    return module


@pytest.fixture(scope="session")
def vadd_image(pto):
    return pto.compile(VADD, filename="vadd.pto")


@pytest.fixture(scope="session")
def matmul_source():
    return (REPO / "samples" / "matmul" / "matmul.pto").read_text()
