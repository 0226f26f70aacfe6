// The npu model against hardware: every hardware-profiled point of
// samples/npu-calibration/hw-points.txt (pto-isa's cost-model tests, A2/A3 and A5) becomes one
// small kernel of the op alone, run through pto-as, pto-ld --auto-sync and the npu model; the op's
// cycles (its own profile records) are compared with the measured figure. The result, the
// whole-instruction anchors of samples/npu-calibration/*.pto and the per-point table are
// docs/npu-calibration.md, which this test regenerates (PTO_UPDATE_DOCS=1) or checks.
#include "asm/codegen/CodeGen.h"
#include "asm/ir/Verifier.h"
#include "asm/parse/Parser.h"
#include "isa/Numerics.h"
#include "link/Linker.h"
#include "obj/Image.h"
#include "runtime/Runtime.h"
#include "tests/unit/TestSupport.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <variant>

using namespace pto;
using namespace pto::rt;

namespace {

using test::readText;
using test::sourcePath;

// ------------------------------------------------------------------ the anchors

struct Anchor {
  std::string file, op;
  uint64_t cycles = 0;
};

/// The whole-instruction anchors: each samples/npu-calibration/*.pto names its op and the cycles
/// measured on 910B3 (`anchor: TADD 160`).
std::vector<Anchor> calibrationSamples() {
  std::vector<Anchor> out;
  const std::regex anchor(R"(anchor: (\w+) (\d+))");
  for (const auto& e : std::filesystem::directory_iterator(sourcePath("samples/npu-calibration"))) {
    if (e.path().extension() != ".pto") continue;
    std::smatch m;
    const std::string text = readText(e.path().string());
    if (!std::regex_search(text, m, anchor)) continue;
    out.push_back({e.path().string(), m[1], std::stoull(m[2])});
  }
  std::sort(out.begin(), out.end(),
            [](const Anchor& a, const Anchor& b) { return a.file < b.file; });
  return out;
}

/// The anchors' table; every anchor within 10%.
std::string anchorTable() {
  std::string table =
      "| sample | op | anchor (cycles) | model (cycles) | error |\n|---|---|---:|---:|---:|\n";
  for (const Anchor& a : calibrationSamples()) {
    Module mod = test::buildModule(a.file);
    auto l = mod.launch(mod.kernelNames().at(0));
    EXPECT_TRUE(l.ok());
    std::vector<Tensor> bufs(l.value().params().size());
    for (size_t i = 0; i < bufs.size(); ++i) {
      bufs[i] = Tensor::zeros(l.value().params()[i].dtype, l.value().params()[i].shape);
      EXPECT_FALSE(l.value().bind("#" + std::to_string(i), &bufs[i]));
    }
    RunOptions opts;
    opts.backend = Backend::Npu;
    opts.recordOps = true;
    RunStats stats;
    EXPECT_FALSE(l.value().run(opts, &stats));
    uint64_t model = 0;
    for (const NpuOp& r : stats.npu.at(0).records)
      if (a.op == r.name) model = r.end - r.start;
    const double err = (static_cast<double>(model) - static_cast<double>(a.cycles)) /
                       static_cast<double>(a.cycles);
    EXPECT_LE(std::fabs(err), 0.10)
        << a.op << " in " << a.file << ": model " << model << ", anchor " << a.cycles;
    char row[256];
    snprintf(row, sizeof row, "| `%s` | %s | %llu | %llu | %+.1f%% |\n",
             std::filesystem::path(a.file).filename().string().c_str(), a.op.c_str(),
             static_cast<unsigned long long>(a.cycles), static_cast<unsigned long long>(model),
             100 * err);
    table += row;
  }
  return table;
}

// ------------------------------------------------------------------ the points

struct HwPoint {
  std::string line; // as written in hw-points.txt (the split hashes it)
  std::string arch, op, dtype, variant;
  int rows = 0, cols = 0, validRows = 0, validCols = 0;
  double cycles = 0;
};

std::vector<HwPoint> readPoints() {
  std::vector<HwPoint> out;
  std::istringstream in(readText(sourcePath("samples/npu-calibration/hw-points.txt")));
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ls(line);
    HwPoint p;
    p.line = line;
    ls >> p.arch >> p.op >> p.dtype >> p.rows >> p.cols >> p.validRows >> p.validCols >>
        p.variant >> p.cycles;
    if (ls.fail()) ADD_FAILURE() << "bad point line: " << line;
    out.push_back(p);
  }
  return out;
}

/// The deterministic held-out fifth: FNV-1a of the point's line, modulo 5.
bool heldOut(const HwPoint& p) {
  uint32_t h = 2166136261u;
  for (unsigned char ch : p.line)
    h = (h ^ ch) * 16777619u;
  return h % 5 == 0;
}

unsigned bytesOf(const std::string& dt) {
  if (dt == "f32" || dt == "i32" || dt == "u32") return 4;
  if (dt == "f16" || dt == "bf16" || dt == "i16" || dt == "u16") return 2;
  return 1;
}

/// A point is implausible when the op would stream its largest operand faster than the vector
/// unit's 256 bytes a cycle (pto-isa's own figure for one repeat), e.g. TROWMIN f32 64x64 in 5.
bool plausible(const HwPoint& p) {
  const double bytes = static_cast<double>(p.validRows) * p.validCols * bytesOf(p.dtype);
  return p.cycles >= bytes / 256;
}

std::string variantValue(const HwPoint& p, const std::string& key) {
  const std::regex re(key + "=(\\w+)");
  std::smatch m;
  return std::regex_search(p.variant, m, re) ? std::string(m[1]) : std::string();
}

// ------------------------------------------------------------------ one kernel per point

std::string ptoType(const std::string& dt) {
  static const std::map<std::string, std::string> names = {{"float8e4m3", "f8E4M3"},
                                                           {"float8e5m2", "f8E5M2"},
                                                           {"hfloat8", "hif8"},
                                                           {"float4e1m2", "f4E1M2x2"},
                                                           {"float4e2m1", "f4E2M1x2"}};
  if (auto it = names.find(dt); it != names.end()) return it->second;
  if (dt[0] == 'u') return "ui" + dt.substr(1);
  return dt;
}

std::string vecTile(const std::string& dt, int rows, int cols, int vr, int vc,
                    const std::string& extra = "") {
  std::ostringstream s;
  s << "!pto.tile_buf<vec, " << rows << "x" << cols << "x" << ptoType(dt) << ", valid=" << vr << "x"
    << vc << extra << ">";
  return s.str();
}

std::string cubeTile(const char* loc, const std::string& dt, int rows, int cols, int vr, int vc) {
  std::ostringstream s;
  s << "!pto.tile_buf<loc=" << loc << ", dtype=" << ptoType(dt) << ", rows=" << rows
    << ", cols=" << cols << ", v_row=" << vr << ", v_col=" << vc << ">";
  return s.str();
}

int roundUp(int v, int m) {
  return (v + m - 1) / m * m;
}

std::string lower(std::string s) {
  for (char& c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string scalarConst(const std::string& dt) {
  return dt[0] == 'f' || dt == "bf16" ? "1.0 : " + dt : "1 : " + ptoType(dt);
}

/// The kernel's body: declarations and the op; `out` (%d) is stored to %z (shape zr x zc of zdt).
struct Kernel {
  std::string body, zdt;
  int zr = 0, zc = 0;
  std::string out = "%d";
};

/// Declarations of %a and %d for an elementwise point. pto-isa's A2/A3 cost-model tests declare
/// their tiles with a run-time valid shape (`Tile<Vec, T, R, C, RowMajor, -1, -1>`), which picks
/// the 2-D path of its tile-scalar ops (TBinSOp.hpp), so the A2/A3 kernels do too; the op's
/// result is then moved to a static tile %o for the store.
std::string elementwiseTiles(const HwPoint& p, const std::string& staticType) {
  if (p.arch != "a2a3") return "  tile %a, %d : " + staticType + "\n";
  std::ostringstream s;
  const std::string dyn = "!pto.tile_buf<vec, " + std::to_string(p.rows) + "x" +
                          std::to_string(p.cols) + "x" + ptoType(p.dtype) + ", valid=?x?>";
  s << "  %vr = arith.constant " << p.validRows << " : index\n"
    << "  %vc = arith.constant " << p.validCols << " : index\n";
  for (const char* name : {"%a", "%d"})
    s << "  " << name << " = pto.alloc_tile valid_row = %vr valid_col = %vc : " << dyn << "\n";
  return s.str();
}

std::optional<Kernel> elementwise(const HwPoint& p) {
  static const std::set<std::string> binary = {"TADD", "TSUB", "TMUL", "TDIV", "TMAX", "TMIN"},
                                     unary = {"TABS",   "TEXP", "TNEG",  "TSQRT", "TRSQRT",
                                              "TRECIP", "TLOG", "TRELU", "TNOT"},
                                     scalar = {"TADDS", "TSUBS", "TMULS",
                                               "TDIVS", "TMINS", "TMAXS"};
  const std::string op = lower(p.op),
                    t = vecTile(p.dtype, p.rows, p.cols, p.validRows, p.validCols);
  // Two tiles: the widest A5 shapes (20x1312 f32) do not fit three in UB; a binary op reads
  // its one source twice.
  Kernel k{elementwiseTiles(p, t), p.dtype, p.validRows, p.validCols};
  if (binary.count(p.op)) {
    k.body += "  " + op + " %d, %a, %a\n";
  } else if (unary.count(p.op)) {
    // A HIGH_PRECISION point runs the op's high-precision form (isa::highPrecisionForm).
    const std::string name = p.variant == "hp" ? op + ".hp" : op;
    k.body += p.variant == "inplace" ? "  " + name + " %a, %a\n  tmov %d, %a\n"
                                     : "  " + name + " %d, %a\n";
  } else if (scalar.count(p.op)) {
    k.body += "  %s = arith.constant " + scalarConst(p.dtype) + "\n";
    k.body +=
        p.variant == "scalar_tile" ? "  " + op + " %d, %s, %a\n" : "  " + op + " %d, %a, %s\n";
  } else {
    return std::nullopt;
  }
  if (p.arch == "a2a3") {
    k.body += "  tile %o : " + t + "\n  tmov %o, %d\n";
    k.out = "%o";
  }
  return k;
}

std::optional<Kernel> reduction(const HwPoint& p) {
  const std::string op = lower(p.op),
                    t = vecTile(p.dtype, p.rows, p.cols, p.validRows, p.validCols);
  const int perBlock = 32 / static_cast<int>(bytesOf(p.dtype));
  Kernel k{"  tile %a, %tmp : " + t + "\n", p.dtype, 0, 0};
  if (p.op == "TROWMAX" || p.op == "TROWMIN" || p.op == "TROWSUM") {
    k.body += "  tile %d : " + vecTile(p.dtype, p.rows, perBlock, p.validRows, 1) + "\n";
    k.body += "  " + op + " %d, %a, %tmp\n";
    k.zr = p.validRows, k.zc = 1;
  } else if (p.op == "TCOLMAX" || p.op == "TCOLMIN" || p.op == "TCOLSUM") {
    k.body += "  tile %d : " + vecTile(p.dtype, 1, p.cols, 1, p.validCols) + "\n";
    k.body += "  " + op + " %d, %a" + (p.variant == "binary" ? ", %tmp" : "") + "\n";
    k.zr = 1, k.zc = p.validCols;
  } else if (p.op == "TROWEXPAND") {
    k.body = "  tile %a : " + vecTile(p.dtype, p.rows, perBlock, p.validRows, 1) + "\n";
    k.body += "  tile %d : " + t + "\n  trowexpand %d, %a\n";
    k.zr = p.validRows, k.zc = p.validCols;
  } else {
    return std::nullopt;
  }
  return k;
}

std::optional<Kernel> layoutOp(const HwPoint& p) {
  const std::string t = vecTile(p.dtype, p.rows, p.cols, p.validRows, p.validCols);
  if (p.op == "TCVT") {
    const std::string from = variantValue(p, "from");
    const std::string ts = vecTile(from, p.rows, p.cols, p.validRows, p.validCols);
    return Kernel{"  tile %a : " + ts + "\n  tile %d : " + t +
                      "\n  %d = tcvt %a <rmode=CAST_RINT> : " + ts + " -> " + t + "\n",
                  p.dtype, p.validRows, p.validCols};
  }
  if (p.op == "TTRANS") {
    const std::string tt = vecTile(p.dtype, p.cols, p.rows, p.validCols, p.validRows);
    return Kernel{"  tile %a, %tmp : " + t + "\n  tile %d : " + tt + "\n  ttrans %d, %a, %tmp\n",
                  p.dtype, p.validCols, p.validRows};
  }
  if (p.op == "TMOV") { // variant: Loc:BLayout:SLayout>Loc:BLayout:SLayout
    auto layout = [&](const std::string& side) {
      std::vector<std::string> f;
      std::istringstream s(side);
      for (std::string w; std::getline(s, w, ':');)
        f.push_back(w);
      std::string extra = f.size() > 1 && f[1] == "ColMajor" ? ", blayout=col_major" : "";
      if (f.size() > 2 && f[2] == "RowMajor") extra += ", slayout=row_major";
      if (f.size() > 2 && f[2] == "ColMajor") extra += ", slayout=col_major";
      return vecTile(p.dtype, p.rows, p.cols, p.validRows, p.validCols, extra);
    };
    const size_t arrow = p.variant.find('>');
    if (arrow == std::string::npos) return std::nullopt;
    return Kernel{"  tile %a : " + layout(p.variant.substr(0, arrow)) +
                      "\n  tile %d : " + layout(p.variant.substr(arrow + 1)) + "\n  tmov %d, %a\n",
                  p.dtype, p.validRows, p.validCols};
  }
  if (p.op == "TSEL") {
    const std::string m = vecTile("u8", p.rows, roundUp(p.cols, 32), p.validRows, p.validCols);
    return Kernel{"  tile %a, %d : " + t + "\n  tile %m : " + m + "\n  tsel %d, %m, %a, %a\n",
                  p.dtype, p.validRows, p.validCols};
  }
  if (p.op == "TSORT32") {
    const std::string idx = vecTile("u32", p.rows, p.cols, p.validRows, p.validCols);
    const int outCols = p.cols * 8 / static_cast<int>(bytesOf(p.dtype));
    return Kernel{"  tile %a : " + t + "\n  tile %i : " + idx +
                      "\n  tile %d : " + vecTile(p.dtype, p.rows, outCols, p.validRows, outCols) +
                      "\n  tsort32 %d, %a, %i\n",
                  p.dtype, p.validRows, outCols};
  }
  return std::nullopt;
}

std::optional<Kernel> cubeOp(const HwPoint& p) {
  if (p.op != "TMATMUL" && p.op != "TMATMUL_ACC") return std::nullopt;
  const int m = p.validRows, n = p.validCols, kk = std::stoi(variantValue(p, "k"));
  const int kAlign = std::max(16, 32 / static_cast<int>(bytesOf(p.dtype)));
  const std::string acc = p.dtype == "i8" ? "i32" : "f32";
  Kernel k{"  tile %l : " + cubeTile("left", p.dtype, roundUp(m, 16), roundUp(kk, kAlign), m, kk) +
               "\n  tile %r : " +
               cubeTile("right", p.dtype, roundUp(kk, kAlign), roundUp(n, 16), kk, n) +
               "\n  tile %d : " + cubeTile("acc", acc, roundUp(m, 16), roundUp(n, 16), m, n) + "\n",
           acc, m, n};
  k.body += p.op == "TMATMUL" ? "  tmatmul %d, %l, %r\n" : "  tmatmul.acc %d, %d, %l, %r\n";
  return k;
}

/// The kernel of one point, or why it cannot be written.
std::variant<std::string, std::monostate> kernelText(const HwPoint& p, std::string& why) {
  if (p.op == "TLOAD") {
    if (p.variant.rfind("nd", 0) != 0) {
      why = "DN GM layout";
      return std::monostate{};
    }
    const int slices = std::stoi(variantValue(p, "slices")), perSlice = p.rows / slices;
    std::ostringstream s;
    s << "kernel @point(%x: !pto.tensor_view<" << p.rows << "x" << p.validCols << "x"
      << ptoType(p.dtype) << ">, %z: !pto.tensor_view<" << perSlice << "x" << p.validCols << "x"
      << ptoType(p.dtype)
      << ">) {\n  tile %t : " << vecTile(p.dtype, perSlice, p.cols, perSlice, p.validCols) << "\n";
    for (int i = 0; i < slices; ++i)
      s << "  tload %t, %x[" << i * perSlice << ", 0]\n";
    s << "  tstore %z[0, 0], %t\n}\n";
    return s.str();
  }
  std::optional<Kernel> k = elementwise(p);
  if (!k) k = reduction(p);
  if (!k) k = layoutOp(p);
  if (!k) k = cubeOp(p);
  if (!k) {
    why = "no kernel form for " + p.op;
    return std::monostate{};
  }
  std::ostringstream s;
  s << "kernel @point(%z: !pto.tensor_view<" << k->zr << "x" << k->zc << "x" << ptoType(k->zdt)
    << ">) {\n"
    << k->body << "  tstore %z[0, 0], " << k->out << "\n}\n";
  return s.str();
}

// ------------------------------------------------------------------ measuring

std::optional<Module> build(const std::string& text, isa::Arch arch, std::string& why) {
  as::SourceFile src("point.pto", text);
  std::ostringstream err;
  as::DiagEngine diags(src, err);
  auto m = as::parseModule(src, diags, arch);
  if (!m) {
    why = err.str();
    return std::nullopt;
  }
  as::verifyModule(*m, arch, diags);
  auto o = as::lowerModule(*m, arch, diags);
  if (!o) {
    why = err.str();
    return std::nullopt;
  }
  link::LinkOptions opts;
  opts.sync = link::SyncMode::Insert;
  link::LinkResult r = link::link({{"point.o", *o}}, opts);
  if (!r.ok()) {
    why = r.diags.empty() ? "link failed" : r.diags.front().text;
    return std::nullopt;
  }
  auto bytes = obj::writeImage(*r.image);
  if (bytes.index() != 0) {
    why = "image";
    return std::nullopt;
  }
  auto mod = Module::load(std::get<0>(bytes), "point.pto");
  if (!mod.ok()) {
    why = mod.error().message;
    return std::nullopt;
  }
  return mod.value();
}

/// The op's cycles on the npu model: the sum of its records (a multi-slice load is one record a
/// slice), or nullopt with the reason.
std::optional<uint64_t> measure(const HwPoint& p, std::string& why) {
  auto text = kernelText(p, why);
  if (text.index() != 0) return std::nullopt;
  const isa::Arch arch = p.arch == "a5" ? isa::Arch::A5 : isa::Arch::A2A3;
  std::optional<Module> mod = build(std::get<0>(text), arch, why);
  if (!mod) return std::nullopt;
  auto l = mod->launch("point");
  if (!l.ok()) {
    why = l.error().message;
    return std::nullopt;
  }
  std::vector<Tensor> bufs(l.value().params().size());
  for (size_t i = 0; i < bufs.size(); ++i) {
    bufs[i] = Tensor::zeros(l.value().params()[i].dtype, l.value().params()[i].shape);
    if (l.value().bind("#" + std::to_string(i), &bufs[i])) {
      why = "bind";
      return std::nullopt;
    }
  }
  RunOptions opts;
  opts.backend = Backend::Npu;
  opts.recordOps = true;
  RunStats stats;
  if (auto st = l.value().run(opts, &stats)) {
    why = st->message;
    return std::nullopt;
  }
  const std::string name = p.variant == "scalar_tile" ? p.op + "_SF"
                           : p.variant == "hp"        ? p.op + "_HP"
                                                      : p.op;
  uint64_t sum = 0;
  bool seen = false;
  std::string names;
  for (const NpuOp& r : stats.npu.at(0).records) {
    if (name == r.name) sum += r.end - r.start, seen = true;
    names += std::string(" ") + r.name;
  }
  if (!seen) {
    why = "no " + name + " record (" + names + ")";
    return std::nullopt;
  }
  return sum;
}

// ------------------------------------------------------------------ summary and document

struct Measured {
  HwPoint p;
  std::optional<uint64_t> model;
  std::string why;
  double err() const { return (static_cast<double>(*model) - p.cycles) / p.cycles; }
};

struct Score {
  size_t n = 0, w10 = 0, w25 = 0;
  double median = 0;
};

Score score(const std::vector<const Measured*>& ms) {
  Score s;
  std::vector<double> errs;
  for (const Measured* m : ms) {
    const double e = std::fabs(m->err());
    errs.push_back(e);
    s.w10 += e <= 0.10;
    s.w25 += e <= 0.25;
  }
  s.n = errs.size();
  if (!errs.empty()) {
    std::sort(errs.begin(), errs.end());
    s.median = errs.size() % 2 ? errs[errs.size() / 2]
                               : (errs[errs.size() / 2 - 1] + errs[errs.size() / 2]) / 2;
  }
  return s;
}

std::string scoreRow(const std::string& what, const Score& s) {
  char row[256];
  auto pct = [&](size_t k) { return s.n ? 100.0 * static_cast<double>(k) / s.n : 0.0; };
  snprintf(row, sizeof row, "| %s | %zu | %.0f%% | %.0f%% | %.1f%% |\n", what.c_str(), s.n,
           pct(s.w10), pct(s.w25), 100 * s.median);
  return row;
}

std::vector<Measured> measureAll() {
  std::vector<Measured> out;
  for (const HwPoint& p : readPoints()) {
    Measured m{p, std::nullopt, ""};
    m.model = measure(p, m.why);
    if (!m.why.empty()) m.why = m.why.substr(0, m.why.find('\n'));
    out.push_back(m);
  }
  return out;
}

std::map<std::string, Score> scores(const std::vector<Measured>& ms) {
  std::map<std::string, std::vector<const Measured*>> groups;
  for (const Measured& m : ms) {
    if (!m.model || !plausible(m.p)) continue;
    groups[m.p.arch + " all"].push_back(&m);
    if (heldOut(m.p)) groups[m.p.arch + " held-out fifth"].push_back(&m);
    groups[m.p.arch + " " + m.p.op].push_back(&m);
  }
  std::map<std::string, Score> out;
  for (auto& [k, v] : groups)
    out[k] = score(v);
  return out;
}

std::string summary(const std::vector<Measured>& ms, const std::map<std::string, Score>& sc) {
  std::string s =
      "| points | n | within 10% | within 25% | median error |\n|---|---:|---:|---:|---:|\n";
  for (const char* arch : {"a2a3", "a5"})
    for (const char* what : {" all", " held-out fifth"})
      if (sc.count(std::string(arch) + what))
        s += scoreRow(std::string(arch) + what, sc.at(std::string(arch) + what));
  s += "\nPer op (plausible points):\n\n| arch op | n | within 10% | within 25% | median error "
       "|\n|---|---:|---:|---:|---:|\n";
  for (const auto& [k, v] : sc)
    if (k.find(" all") == std::string::npos && k.find(" held-out") == std::string::npos)
      s += scoreRow(k, v);
  size_t notRun = 0, implausible = 0;
  for (const Measured& m : ms) {
    notRun += !m.model;
    implausible += m.model && !plausible(m.p);
  }
  s += "\n" + std::to_string(ms.size()) + " points; " + std::to_string(implausible) +
       " implausible (excluded above); " + std::to_string(notRun) +
       " not expressible as one kernel today (reasons in the table).\n";
  return s;
}

std::string pointTable(const std::vector<Measured>& ms) {
  std::string s = "| arch | op | dtype | shape | valid | variant | hw | model | error | note "
                  "|\n|---|---|---|---|---|---|---:|---:|---:|---|\n";
  for (const Measured& m : ms) {
    char row[512];
    std::string note = !m.model          ? m.why
                       : !plausible(m.p) ? "implausible (> 256 B/cycle)"
                       : heldOut(m.p)    ? "held out"
                                         : "";
    std::string model = m.model ? std::to_string(*m.model) : "-";
    std::string err = "-";
    if (m.model) {
      char e[32];
      snprintf(e, sizeof e, "%+.1f%%", 100 * m.err());
      err = e;
    }
    snprintf(row, sizeof row, "| %s | %s | %s | %dx%d | %dx%d | %s | %g | %s | %s | %s |\n",
             m.p.arch.c_str(), m.p.op.c_str(), m.p.dtype.c_str(), m.p.rows, m.p.cols, m.p.validRows,
             m.p.validCols, m.p.variant.c_str(), m.p.cycles, model.c_str(), err.c_str(),
             note.c_str());
    s += row;
  }
  return s;
}

} // namespace

const char* kHeader = R"(# npu model calibration

Generated by the unit test `NpuHw.CalibrationMatchesHardwareAndDocs` (regenerate with
`PTO_UPDATE_DOCS=1 build/tests/pto-npu-calibration-tests`). Two parts: the whole-instruction
anchors of `samples/npu-calibration/*.pto` (910B3, `../shared/reference/pto-isa-semantics.md`
7.2; the test fails beyond 10%), and every hardware-profiled point of pto-isa's cost-model tests
(`samples/npu-calibration/hw-points.txt`, transcribed from hw-native-sys/pto-isa
`tests/costmodel/st/testcase/*` for A2/A3 and `tests/costmodel/st_a5_fit` for A5 by
`extract_points.py`), each run as its own kernel -- the op alone, then a TSTORE of its result --
through pto-as, pto-ld --auto-sync and the npu model of its arch, the op's cycles read from its
profile records (a multi-slice TLOAD is one `tload` a slice, the records summed).

The vector lines of `runtime/npu/CostTable.def` are fitted to the points outside the held-out
fifth (FNV-1a of the point's line modulo 5 == 0) by `samples/npu-calibration/fit_costs.py`; the
held-out rows below measure the fit on points it did not see. A line is a formula over the
largest operand, not a table of shapes: `fixed + perRepeat * repeats + perRow * rows`, its
repeats counted as pto-isa issues the op (one run of bytes when the rows are back to back, else
row by row; 256-byte vector repeats, or 32-byte blocks for UB-to-UB copies; column reductions as
a copy of the first row and one instruction a further row; A2/A3 tile-scalar ops as the
instructions of pto-isa's TBinSOp, charged each), and on A5 a second regime for rows longer than
a few repeats (`docs/npu-model.md`, "Cost"). Each least-squares fit is refitted on the points it
meets within 10%, so that one outlier does not pull a line off the rest. Ops that share one
pto-isa implementation are fitted as one group (A2/A3: TADDS, TMULS and TMINS, all TBinSOp;
TDIVS in both operand orders, TBinSOp issuing vector_dup, a pipe barrier and vdiv an
instruction).

The A2/A3 tile-scalar ops on f32 have a line of their own: all seven f32 points of TADDS, TMULS
and TMINS sit about 17 cycles above the line the nine 16-bit and i32 points meet (27 + 0.93 a
repeat + 0.63 an instruction against 12 + 0.91 a repeat), whatever their repeats and instructions
(one instruction of 32 or 64 repeats, seven of seven, two of 255 + 1). It is a line over data
type, fitted to seven points of three shapes, not a table of shapes.

The A2/A3 elementwise kernels declare their tiles with a run-time valid shape, as pto-isa's
A2/A3 cost-model tests do (`Tile<Vec, T, R, C, RowMajor, -1, -1>`): that picks the 2-D path of
its tile-scalar ops, an instruction per 256-byte column chunk repeating over the rows (TADDS f32
256x16 = 266: 255 + 1 repeats of 64 bytes; i32 31x128 = 70: two chunks of 31 repeats; f32 7x448
= 77: seven chunks of 7), where a static valid shape equal to the tile's runs as one instruction.
The model does the same from the tile descriptors (`Chunks`), so it charges a static tile less.

## Outliers

A point is **implausible**, and left out of the scores, when the op would stream its largest
operand faster than 256 bytes a cycle, one vector repeat a cycle (pto-isa's own repeat width):
TROWMIN f32 64x64 = 5 and f16 64x128 = 5 cycles, TROWMAX / TROWSUM / TROWMIN over 16x256 (14 and
32 cycles for 8 and 16 KiB), TDIVS i32 31x128 and i16 15x192 = 4 cycles. They are most likely
the cost of a fast path that skips the op or a mis-read profile; pto-isa re-baselined 13 of its
points in a June 2026 commit, and these sit beside figures of the same op that are 30-100x
larger. Points that are plausible but disagree with their neighbours are kept and scored, and
no line can meet both sides: TEXP f32 32x16 = 30 where 32x32 f16, the same bytes, is 47; TSQRT
f16 64x64 = 160 as f32; TMINS f16 64x64 = 55 and i16 = 70 (one instruction stream); TSUB i32
64x64 = 132 and i16 = 170; TCOLMAX f16 64x64 = 2713 and i16 = 454 (the same 63 instructions,
each behind a pipe barrier). These are the A2/A3 points beyond 10%; matching them would take a
line per shape.

The four TMATMUL points are kept though pto-isa asserts them with accuracy 1.0: they are its
cube formula, which the model shares, rather than measurements. In-place variants (TSQRT,
TRSQRT `inplace`) are run and scored but not fitted: the model does not tell them apart.

The 36 A5 TRECIP `HIGH_PRECISION` points run as `trecip.hp` (the op `{precisionType =
#pto<recip_precision high_precision>}` makes on A5); its f16 and f32 lines are fitted apart,
pto-isa's two sequences differing (about 163 and 345 cycles a 256-byte repeat). TDIV_HP shares
TRECIP_HP's lines (pto-isa's TRECIP is that division with a numerator of 1); TSQRT_HP and
TRSQRT_HP have no hardware points and are derived from pto-isa's instruction sequences
(samples/npu-calibration/fit_costs.py, derive_hp).

Points not run: the two DN TLOADs (a column-major GM view loaded as 3-D to 5-D slices is not
one `tload` in the language).

)";

// Every anchor within 10%, every point of hw-points.txt as its own kernel, and
// docs/npu-calibration.md is the document they give (PTO_UPDATE_DOCS=1 rewrites it).
TEST(NpuHw, CalibrationMatchesHardwareAndDocs) {
  ASSERT_GE(calibrationSamples().size(), 11u);
  const std::string anchors = anchorTable();
  const std::vector<Measured> ms = measureAll();
  ASSERT_GE(ms.size(), 780u);
  const auto sc = scores(ms);
  const std::string sum = summary(ms, sc);
  std::cout << sum;
  const std::string doc = std::string(kHeader) + "## Anchors (A2/A3)\n\n" + anchors +
                          "\n## Hardware points\n\n" + sum + "\n" + pointTable(ms);
  const std::string docPath = sourcePath("docs/npu-calibration.md");
  if (const char* u = std::getenv("PTO_UPDATE_DOCS"); u && std::string(u) == "1")
    std::ofstream(docPath) << doc;
  else
    EXPECT_EQ(readText(docPath), doc)
        << "docs/npu-calibration.md is stale; regenerate it with PTO_UPDATE_DOCS=1";
  // The model's standing on hardware, as measured when the cost table was last fitted: a change
  // that loses ground fails here.
  EXPECT_GE(sc.at("a5 all").w10, sc.at("a5 all").n * 92 / 100);
  EXPECT_LE(sc.at("a5 all").median, 0.02);
  EXPECT_GE(sc.at("a2a3 all").w10, sc.at("a2a3 all").n * 90 / 100);
  EXPECT_LE(sc.at("a2a3 all").median, 0.02);
}

// Blocks that run at the same time share the chip's GM bandwidth (runtime/npu/Cost.cpp, the A3
// figures: 24 cores, 2300 B/cycle): a 64 KiB TLOAD streams at 128 B/cycle alone (264 + 512 =
// 776) and at 2300 / 24 = 95.8 B/cycle a block when 24 or more blocks are launched (264 + 683.8
// = 948); 8 blocks (287.5 B/cycle each) are still limited by their own MTE.
TEST(NpuHw, BlocksShareTheChipsGmBandwidth) {
  const std::string text = "kernel @point(%x: !pto.tensor_view<128x128xf32>, %z: "
                           "!pto.tensor_view<128x128xf32>) {\n"
                           "  tile %t : !pto.tile<f32, 128, 128>\n"
                           "  tload %t, %x[0, 0]\n"
                           "  tstore %z[0, 0], %t\n}\n";
  std::string why;
  std::optional<Module> mod = build(text, isa::Arch::A2A3, why);
  ASSERT_TRUE(mod) << why;
  auto loadCycles = [&](uint32_t blocks) {
    auto l = mod->launch("point");
    EXPECT_TRUE(l.ok());
    std::vector<Tensor> bufs(2);
    for (size_t i = 0; i < 2; ++i) {
      bufs[i] = Tensor::zeros(isa::DType::F32, {128, 128});
      EXPECT_FALSE(l.value().bind("#" + std::to_string(i), &bufs[i]));
    }
    RunOptions opts;
    opts.backend = Backend::Npu;
    opts.recordOps = true;
    opts.blocks = blocks;
    RunStats stats;
    EXPECT_FALSE(l.value().run(opts, &stats));
    std::set<uint64_t> perBlock;
    for (const NpuBlock& b : stats.npu)
      for (const NpuOp& r : b.records)
        if (std::string(r.name) == "TLOAD") perBlock.insert(r.end - r.start);
    EXPECT_EQ(perBlock.size(), 1u) << "every block pays the same";
    return perBlock.empty() ? 0 : *perBlock.begin();
  };
  EXPECT_EQ(loadCycles(1), 776u);
  EXPECT_EQ(loadCycles(8), 776u);
  EXPECT_EQ(loadCycles(24), 948u);
  EXPECT_EQ(loadCycles(48), 948u);
}

// samples/gemm-performance: C = A x B on 24 blocks with pto-isa's gemm_performance tiling, at
// the smallest size it takes (m = 512, k = 512, n = 1536: one 128 x 256 C tile a block, two L1
// groups of four 64-wide k-blocks). Block 0 alone on the cpu backend, and all 24 on the npu model,
// give the reference's C tile (per k-block one f32 fma chain from zero, the accumulator added
// after, as tmatmul.acc does); on the model every block's MTE2 pays its share of the chip's GM
// bandwidth and the cube its eight 518-cycle TMATMULs.
TEST(NpuHw, GemmSampleMatchesReferenceOnBothBackends) {
  Module mod = test::buildModule(sourcePath("samples/gemm-performance/gemm.pto"));
  const int64_t m = 512, k = 512, n = 1536;
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> d(-1, 1);
  Tensor a = Tensor::zeros(isa::DType::F16, {m * k}), b = Tensor::zeros(isa::DType::F16, {k * n});
  for (Tensor* t : {&a, &b})
    for (int64_t i = 0; i < t->numel(); ++i)
      t->setBits(i, isa::encodeFromDouble(isa::DType::F16, d(rng), isa::RoundMode::CAST_RINT,
                                          isa::SatMode::ON));
  auto reference = [&](int64_t i, int64_t j) {
    float acc = 0;
    for (int64_t k0 = 0; k0 < k; k0 += 64) {
      float s = 0;
      for (int64_t kk = k0; kk < k0 + 64; ++kk)
        s = std::fma(static_cast<float>(a.at(i * k + kk)), static_cast<float>(b.at(kk * n + j)), s);
      acc = k0 == 0 ? s : acc + s;
    }
    return acc;
  };
  for (Backend backend : {Backend::Cpu, Backend::Npu}) {
    Tensor c = Tensor::zeros(isa::DType::F32, {m * n});
    auto l = mod.launch("gemm");
    ASSERT_TRUE(l.ok());
    ASSERT_FALSE(l.value().bind("a", &a));
    ASSERT_FALSE(l.value().bind("b", &b));
    ASSERT_FALSE(l.value().bind("c", &c));
    ASSERT_FALSE(l.value().bindScalar("m", m));
    ASSERT_FALSE(l.value().bindScalar("k", k));
    ASSERT_FALSE(l.value().bindScalar("n", n));
    RunOptions opts;
    opts.backend = backend;
    opts.blocks = backend == Backend::Npu ? 24 : 1;
    opts.recordOps = true;
    RunStats stats;
    auto st = l.value().run(opts, &stats);
    ASSERT_FALSE(st) << st->message;
    for (int64_t i = 0; i < 128; ++i) // block 0's C tile
      for (int64_t j = 0; j < 256; ++j)
        ASSERT_EQ(static_cast<float>(c.at(i * n + j)), reference(i, j))
            << i << "," << j << (backend == Backend::Npu ? " npu" : " cpu");
    if (backend != Backend::Npu) continue;
    ASSERT_EQ(stats.npu.size(), 24u);
    // Per block: 2 groups x 2 TLOADs (A 64 KiB, B 128 KiB) at 2300 / 24 B/cycle plus 264 each.
    uint64_t load = 0, cube = 0;
    for (const NpuOp& r : stats.npu.at(0).records) {
      const std::string name = r.name;
      if (name == "TLOAD") load += r.end - r.start;
      if (name.rfind("TMATMUL", 0) == 0) cube += r.end - r.start;
    }
    EXPECT_NEAR(static_cast<double>(load), 2 * (2 * 264 + 196608 / (2300.0 / 24)), 4.0);
    EXPECT_EQ(cube, 8u * 518u) << "8 TMATMULs of 6 + 8 x 4 x 16";
  }
}
