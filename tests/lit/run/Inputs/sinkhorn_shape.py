"""A kernel of the shape of the DeepSeek V4 decode `comb_sinkhorn` kernel issue #27 names (more
than 64 tiles, every tile at its author's address, in-place chains over the same bytes), its
inputs and its expected output, computed here from the definitions (not by the tools):
for each group g of 12: row_g[r][c] = mix_g[r][c] * inv[r] * k + cb_g[c] for r < 8, c < 4.
Each group's tiles: mix_g and cb_g loaded, t1 = trowexpandmul(mix_g, inv) at 0x0, t2 = tmuls(t1,
k) at 0x0 over t1, t3 = tcolexpand(cb_g) at 0x100, row_g = tadd(t2, t3) at 0x100 over t3: 6 tiles
a group, 73 in all. Small integers keep every f32 result exact.

usage: sinkhorn_shape.py pto | input DIR | expected DIR"""
from npy_write import write_npy
import sys

GROUPS, K = 12, 2.0
T88 = ("!pto.tile_buf<loc=vec, dtype=f32, rows=8, cols=8, v_row=8, v_col=4, blayout=row_major, "
       "slayout=none_box, fractal=512, pad=0>")
T18 = ("!pto.tile_buf<loc=vec, dtype=f32, rows=1, cols=8, v_row=1, v_col=4, blayout=row_major, "
       "slayout=none_box, fractal=512, pad=0>")
T81 = ("!pto.tile_buf<loc=vec, dtype=f32, rows=8, cols=1, v_row=8, v_col=1, blayout=col_major, "
       "slayout=none_box, fractal=512, pad=0>")
TV = "!pto.tensor_view<?x?xf32>"


def kernel():
    o = ["module attributes {pto.target_arch = \"a2a3\"} {",
         "  func.func @sinkhorn(%inv: !pto.ptr<f32>, %mix: !pto.ptr<f32>, %cb: !pto.ptr<f32>, "
         "%z: !pto.ptr<f32>, %k: f32) attributes {pto.kernel_kind = #pto.kernel_kind<vector>} {"]
    for v in (0, 1, 4, 8, 12, 96):
        o.append("    %%c%d = arith.constant %d : index" % (v, v))
    addrs = {0, 256, 512 + 256 * GROUPS + 32 * GROUPS}
    addrs |= {512 + 256 * g for g in range(GROUPS)} | {512 + 256 * GROUPS + 32 * g for g in range(GROUPS)}
    for a in sorted(addrs):
        o.append("    %%a%d = arith.constant %d : i64" % (a, a))
    o += ["    %%vinv = pto.make_tensor_view %%inv, shape = [%%c8, %%c1], strides = [%%c1, %%c8] "
          "{layout = #pto.layout<dn>} : %s" % TV,
          "    %%vmix = pto.make_tensor_view %%mix, shape = [%%c96, %%c4], strides = [%%c4, %%c1] : %s" % TV,
          "    %%vcb = pto.make_tensor_view %%cb, shape = [%%c12, %%c4], strides = [%%c4, %%c1] : %s" % TV,
          "    %%vz = pto.make_tensor_view %%z, shape = [%%c96, %%c4], strides = [%%c4, %%c1] : %s" % TV]
    inv_addr = 512 + 256 * GROUPS + 32 * GROUPS
    o += ["    %%ti = pto.alloc_tile addr = %%a%d : %s" % (inv_addr, T81),
          "    %%pi = pto.partition_view %%vinv, offsets = [%%c0, %%c0], sizes = [%%c8, %%c1] : %s -> "
          "!pto.partition_tensor_view<8x1xf32>" % TV,
          "    pto.tload ins(%%pi : !pto.partition_tensor_view<8x1xf32>) outs(%%ti : %s)" % T81]
    for g in range(GROUPS):
        o += ["    %%r%d = arith.constant %d : index" % (g, 8 * g),
              "    %%g%d = arith.constant %d : index" % (g, g),
              "    %%mix%d = pto.alloc_tile addr = %%a%d : %s" % (g, 512 + 256 * g, T88),
              "    %%pm%d = pto.partition_view %%vmix, offsets = [%%r%d, %%c0], sizes = [%%c8, %%c4] : %s -> "
              "!pto.partition_tensor_view<8x4xf32>" % (g, g, TV),
              "    pto.tload ins(%%pm%d : !pto.partition_tensor_view<8x4xf32>) outs(%%mix%d : %s)" % (g, g, T88),
              "    %%cb%d = pto.alloc_tile addr = %%a%d : %s" % (g, 512 + 256 * GROUPS + 32 * g, T18),
              "    %%pc%d = pto.partition_view %%vcb, offsets = [%%g%d, %%c0], sizes = [%%c1, %%c4] : %s -> "
              "!pto.partition_tensor_view<1x4xf32>" % (g, g, TV),
              "    pto.tload ins(%%pc%d : !pto.partition_tensor_view<1x4xf32>) outs(%%cb%d : %s)" % (g, g, T18),
              "    %%t1_%d = pto.alloc_tile addr = %%a0 : %s" % (g, T88),
              "    pto.trowexpandmul ins(%%mix%d, %%ti : %s, %s) outs(%%t1_%d : %s)" % (g, T88, T81, g, T88),
              "    %%t2_%d = pto.alloc_tile addr = %%a0 : %s" % (g, T88),
              "    pto.tmuls ins(%%t1_%d, %%k : %s, f32) outs(%%t2_%d : %s)" % (g, T88, g, T88),
              "    %%t3_%d = pto.alloc_tile addr = %%a256 : %s" % (g, T88),
              "    pto.tcolexpand ins(%%cb%d : %s) outs(%%t3_%d : %s)" % (g, T18, g, T88),
              "    %%row%d = pto.alloc_tile addr = %%a256 : %s" % (g, T88),
              "    pto.tadd ins(%%t2_%d, %%t3_%d : %s, %s) outs(%%row%d : %s)" % (g, g, T88, T88, g, T88),
              "    %%pz%d = pto.partition_view %%vz, offsets = [%%r%d, %%c0], sizes = [%%c8, %%c4] : %s -> "
              "!pto.partition_tensor_view<8x4xf32>" % (g, g, TV),
              "    pto.tstore ins(%%row%d : %s) outs(%%pz%d : !pto.partition_tensor_view<8x4xf32>)" % (g, T88, g)]
    o += ["    return", "  }", "}"]
    return "\n".join(o) + "\n"


def inputs():
    inv = [r % 3 + 1 for r in range(8)]
    mix = [[(7 * r + 3 * c + g) % 11 - 5 for c in range(4)] for g in range(GROUPS) for r in range(8)]
    cb = [[(5 * g + c) % 9 - 4 for c in range(4)] for g in range(GROUPS)]
    return inv, mix, cb


def main():
    inv, mix, cb = inputs()
    if sys.argv[1] == "pto":
        sys.stdout.write(kernel())
    elif sys.argv[1] == "input":
        d = sys.argv[2]
        write_npy(d + "/inv.npy", inv, [8, 1])
        write_npy(d + "/mix.npy", [v for row in mix for v in row], [96, 4])
        write_npy(d + "/cb.npy", [v for row in cb for v in row], [12, 4])
    else:
        z = [mix[8 * g + r][c] * inv[r] * K + cb[g][c]
             for g in range(GROUPS) for r in range(8) for c in range(4)]
        write_npy(sys.argv[2] + "/z.npy", z, [96, 4])


main()
