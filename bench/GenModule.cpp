#include "bench/GenModule.h"

#include <array>
#include <cstdint>
#include <map>
#include <string_view>

namespace pto::bench {
namespace {

// splitmix64: tiny, fully specified, so the module text is identical on every platform.
class Rng {
public:
  explicit Rng(uint64_t seed) : state_(seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  /// Uniform-ish integer in [lo, hi].
  unsigned range(unsigned lo, unsigned hi) {
    return lo + static_cast<unsigned>(next() % (hi - lo + 1));
  }
  bool coin() { return (next() & 1) != 0; }

private:
  uint64_t state_;
};

constexpr std::string_view kTileF32 =
    "!pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=64, v_row=16, v_col=64, blayout=row_major, "
    "slayout=none_box, fractal=512, pad=0>";
constexpr std::string_view kTileF16 =
    "!pto.tile_buf<loc=vec, dtype=f16, rows=16, cols=64, v_row=16, v_col=64, blayout=row_major, "
    "slayout=none_box, fractal=512, pad=0>";
// Row-reduction destination: 16 x 1 valid, 8 physical f32 columns (32-byte rows).
constexpr std::string_view kTileRow =
    "!pto.tile_buf<loc=vec, dtype=f32, rows=16, cols=8, v_row=16, v_col=1, blayout=row_major, "
    "slayout=none_box, fractal=512, pad=0>";
constexpr std::string_view kViewF32 = "!pto.tensor_view<?x?xf32>";
constexpr std::string_view kViewF16 = "!pto.tensor_view<?x?xf16>";
constexpr std::string_view kPartF32 = "!pto.partition_tensor_view<16x64xf32>";
constexpr std::string_view kPartF16 = "!pto.partition_tensor_view<16x64xf16>";
constexpr std::string_view kPartRow = "!pto.partition_tensor_view<16x1xf32>";

/// Emits one function. SSA results are numbered %0, %1, ... and block arguments %argN, as MLIR's
/// printer does, so every name is unique within the function and defined before its use.
class FuncEmitter {
public:
  FuncEmitter(std::string& out, Rng& rng) : out_(out), rng_(rng) {}

  void emit(unsigned index, unsigned loops) {
    numTiles_ = std::array<unsigned, 4>{8, 16, 32, 64}[rng_.range(0, 3)];
    line(1, "func.func @k" + std::to_string(index) +
                "(%arg0: !pto.ptr<f32>, %arg1: !pto.ptr<f32>, %arg2: !pto.ptr<f32>, "
                "%arg3: !pto.ptr<f16>, %arg4: !pto.ptr<f32>) {");
    nextArg_ = 5;
    for (unsigned v : {0u, 1u, 2u, 4u, 16u, 64u, numTiles_, numTiles_ * 16})
      constant(v);
    cst_ = "%cst";
    line(2, cst_ + " = arith.constant 1.250000e-01 : f32");

    const std::string rows = c(numTiles_ * 16);
    viewA_ = tensorView("%arg0", rows, c(64), kViewF32);
    viewB_ = tensorView("%arg1", rows, c(64), kViewF32);
    viewOut_ = tensorView("%arg2", rows, c(64), kViewF32);
    viewHalf_ = tensorView("%arg3", rows, c(64), kViewF16);
    viewRow_ = tensorView("%arg4", rows, c(1), kViewF32, /*rowStride=*/c(1));

    line(2, "pto.section.vector {");
    // Block partition of the tile range, as frontends emit it.
    std::string bidx = fresh(), bidxI = fresh(), bnum = fresh(), bnumI = fresh();
    line(3, bidx + " = pto.get_block_idx");
    line(3, bidxI + " = arith.index_cast " + bidx + " : i64 to index");
    line(3, bnum + " = pto.get_block_num");
    line(3, bnumI + " = arith.index_cast " + bnum + " : i64 to index");
    std::string per = fresh(), lo = fresh(), hiRaw = fresh(), hi = fresh();
    line(3, per + " = arith.ceildivsi " + c(numTiles_) + ", " + bnumI + " : index");
    line(3, lo + " = arith.muli " + bidxI + ", " + per + " : index");
    line(3, hiRaw + " = arith.addi " + lo + ", " + per + " : index");
    line(3, hi + " = arith.minui " + hiRaw + ", " + c(numTiles_) + " : index");
    lo_ = lo;
    hi_ = hi;

    for (auto& t : work_)
      t = allocTile(kTileF32);
    tmp_ = allocTile(kTileF32);
    row_ = allocTile(kTileRow);
    half_ = allocTile(kTileF16);

    for (unsigned l = 0; l < loops; ++l)
      emitLoop();

    line(3, "pto.barrier <PIPE_ALL>");
    line(2, "}");
    line(2, "return");
    line(1, "}");
  }

private:
  void line(unsigned depth, std::string_view text) {
    out_.append(depth * 2, ' ');
    out_.append(text);
    out_.push_back('\n');
  }
  std::string fresh() { return "%" + std::to_string(nextValue_++); }
  std::string freshArg() { return "%arg" + std::to_string(nextArg_++); }

  void constant(unsigned v) {
    if (consts_.count(v)) return;
    std::string name = "%c" + std::to_string(v);
    consts_[v] = name;
    line(2, name + " = arith.constant " + std::to_string(v) + " : index");
  }
  const std::string& c(unsigned v) const { return consts_.at(v); }

  std::string tensorView(std::string_view ptr, const std::string& rows, const std::string& cols,
                         std::string_view type, std::string rowStride = {}) {
    if (rowStride.empty()) rowStride = cols;
    std::string v = fresh();
    line(2, v + " = pto.make_tensor_view " + std::string(ptr) + ", shape = [" + rows + ", " + cols +
                "] strides = [" + rowStride + ", " + c(1) + "] : " + std::string(type));
    return v;
  }

  std::string allocTile(std::string_view type) {
    std::string t = fresh();
    line(3, t + " = pto.alloc_tile : " + std::string(type));
    return t;
  }

  std::string partition(const std::string& view, const std::string& row, unsigned cols,
                        std::string_view viewType, std::string_view partType, unsigned depth) {
    std::string p = fresh();
    line(depth, p + " = pto.partition_view " + view + ", offsets = [" + row + ", " + c(0) +
                    "], sizes = [" + c(16) + ", " + c(cols) + "] : " + std::string(viewType) +
                    " -> " + std::string(partType));
    return p;
  }

  void sync(unsigned depth, std::string_view src, std::string_view dst, unsigned event) {
    std::string args = "[<" + std::string(src) + ">, <" + std::string(dst) + ">, <EVENT_ID" +
                       std::to_string(event) + ">]";
    line(depth, "pto.set_flag" + args);
    line(depth, "pto.wait_flag" + args);
  }

  /// One random f32 elementwise op over the work tiles (sources any, destination C or D).
  void elementwise(unsigned depth) {
    const std::string& a = work_[rng_.range(0, 3)];
    const std::string& b = work_[rng_.range(0, 3)];
    const std::string& d = work_[rng_.range(2, 3)];
    const std::string tf(kTileF32);
    static constexpr std::array<std::string_view, 4> kBinary = {"tadd", "tsub", "tmul", "tmax"};
    static constexpr std::array<std::string_view, 2> kUnary = {"texp", "tsqrt"};
    unsigned pick = rng_.range(0, 9);
    if (pick < 6) {
      line(depth, "pto." + std::string(kBinary[pick % 4]) + " ins(" + a + ", " + b + " : " + tf +
                      ", " + tf + ") outs(" + d + " : " + tf + ")");
    } else if (pick < 9) {
      line(depth, "pto." + std::string(kUnary[pick % 2]) + " ins(" + a + " : " + tf + ") outs(" +
                      d + " : " + tf + ")");
    } else {
      line(depth,
           "pto.tmuls ins(" + a + ", " + cst_ + " : " + tf + ", f32) outs(" + d + " : " + tf + ")");
    }
  }

  void rowReduce(unsigned depth) {
    std::string_view op = rng_.coin() ? "trowsum" : "trowmax";
    const std::string tf(kTileF32);
    line(depth, "pto." + std::string(op) + " ins(" + work_[rng_.range(2, 3)] + ", " + tmp_ + " : " +
                    tf + ", " + tf + ") outs(" + row_ + " : " + std::string(kTileRow) + ")");
  }

  void emitLoop() {
    const unsigned d = 3;
    std::string iv = freshArg();
    line(d, "scf.for " + iv + " = " + lo_ + " to " + hi_ + " step " + c(1) + " {");
    std::string rowOff = fresh();
    line(d + 1, rowOff + " = arith.muli " + iv + ", " + c(16) + " : index");
    std::string pa = partition(viewA_, rowOff, 64, kViewF32, kPartF32, d + 1);
    std::string pb = partition(viewB_, rowOff, 64, kViewF32, kPartF32, d + 1);
    std::string po = partition(viewOut_, rowOff, 64, kViewF32, kPartF32, d + 1);
    std::string ph = partition(viewHalf_, rowOff, 64, kViewF16, kPartF16, d + 1);
    std::string pr = partition(viewRow_, rowOff, 1, kViewF32, kPartRow, d + 1);
    const std::string tf(kTileF32);
    line(d + 1, "pto.tload ins(" + pa + " : " + std::string(kPartF32) + ") outs(" + work_[0] +
                    " : " + tf + ")");
    line(d + 1, "pto.tload ins(" + pb + " : " + std::string(kPartF32) + ") outs(" + work_[1] +
                    " : " + tf + ")");
    sync(d + 1, "PIPE_MTE2", "PIPE_V", 0);

    for (unsigned i = 0, n = rng_.range(8, 12); i < n; ++i)
      elementwise(d + 1);

    // Nested loop carrying an index accumulator.
    std::string acc = fresh();
    std::string innerIv = freshArg(), accArg = freshArg();
    line(d + 1, acc + " = scf.for " + innerIv + " = " + c(0) + " to " + c(4) + " step " + c(1) +
                    " iter_args(" + accArg + " = " + rowOff + ") -> (index) {");
    for (unsigned i = 0, n = rng_.range(4, 6); i < n; ++i)
      elementwise(d + 2);
    std::string next = fresh();
    line(d + 2, next + " = arith.addi " + accArg + ", " + innerIv + " : index");
    line(d + 2, "scf.yield " + next + " : index");
    line(d + 1, "}");

    // Sometimes a second, plain nested loop.
    if (rng_.coin()) {
      std::string iv2 = freshArg();
      line(d + 1, "scf.for " + iv2 + " = " + c(0) + " to " + c(2) + " step " + c(1) + " {");
      elementwise(d + 2);
      elementwise(d + 2);
      line(d + 1, "}");
    }

    rowReduce(d + 1);
    if (rng_.coin()) rowReduce(d + 1);

    std::string cond = fresh();
    if (rng_.coin())
      line(d + 1, cond + " = arith.cmpi eq, " + iv + ", " + lo_ + " : index");
    else
      line(d + 1, cond + " = arith.cmpi ult, " + acc + ", " + c(numTiles_ * 16) + " : index");
    const std::string& result = work_[rng_.range(2, 3)];
    line(d + 1, "scf.if " + cond + " {");
    line(d + 2, "pto.tcvt ins(" + result + " {rmode = #pto<round_mode CAST_RINT>} : " + tf +
                    ") outs(" + half_ + " : " + std::string(kTileF16) + ")");
    sync(d + 2, "PIPE_V", "PIPE_MTE3", 0);
    line(d + 2, "pto.tstore ins(" + half_ + " : " + std::string(kTileF16) + ") outs(" + ph + " : " +
                    std::string(kPartF16) + ")");
    line(d + 1, "} else {");
    sync(d + 2, "PIPE_V", "PIPE_MTE3", 0);
    line(d + 2, "pto.tstore ins(" + result + " : " + tf + ") outs(" + po + " : " +
                    std::string(kPartF32) + ")");
    line(d + 1, "}");
    sync(d + 1, "PIPE_V", "PIPE_MTE3", 1);
    line(d + 1, "pto.tstore ins(" + row_ + " : " + std::string(kTileRow) + ") outs(" + pr + " : " +
                    std::string(kPartRow) + ")");
    sync(d + 1, "PIPE_MTE3", "PIPE_MTE2", 0);
    line(d, "}");
  }

  std::string& out_;
  Rng& rng_;
  unsigned nextValue_ = 0;
  unsigned nextArg_ = 0;
  unsigned numTiles_ = 8;
  std::map<unsigned, std::string> consts_;
  std::string cst_;
  std::string viewA_, viewB_, viewOut_, viewHalf_, viewRow_;
  std::string lo_, hi_;
  std::array<std::string, 4> work_;
  std::string tmp_, row_, half_;
};

} // namespace

std::string generateLargeModule(unsigned numFunctions, unsigned loopsPerFunction, unsigned seed) {
  std::string out;
  // About 54 lines of ~190 bytes per loop, ~45 lines per function: reserve once.
  out.reserve(size_t(numFunctions) * (size_t(loopsPerFunction) * 55 + 45) * 190 + 64);
  Rng rng(seed);
  out += "module {\n";
  for (unsigned f = 0; f < numFunctions; ++f)
    FuncEmitter(out, rng).emit(f, loopsPerFunction);
  out += "}\n";
  return out;
}

size_t countLines(const std::string& text) {
  size_t n = 0;
  for (char ch : text)
    n += ch == '\n';
  if (!text.empty() && text.back() != '\n') ++n;
  return n;
}

} // namespace pto::bench
