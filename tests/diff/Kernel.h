// Random kernels for differential testing (pto-diff): a small AST of MLIR-style scalar and tile
// code, a seeded generator of well-formed programs, a printer to .pto text, and an evaluator that
// is the oracle: it computes every output buffer from the arith/scf/pto op definitions, with no
// code from the assembler, the lowering or the runtime. See docs/development.md.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

namespace pto::diff {

/// Scalar types. Integer values are kept as bits masked to their width (i1: 0 or 1); float
/// values as their IEEE bit pattern.
enum class Ty : uint8_t { I1, I32, I64, Index, F16, BF16, F32 };
constexpr int kNumTys = 7;

const char* tyName(Ty t);
unsigned bitWidth(Ty t);
bool isFloat(Ty t);
bool isInt(Ty t); // I32, I64, Index (not I1)

struct Stmt;
using Block = std::vector<Stmt>;

/// A region: its block arguments, its statements and the values its terminator passes on
/// (scf.yield operands; for the before region of scf.while: the condition, then the forwarded).
struct Region {
  std::vector<int> params;
  Block body;
  std::vector<int> yields;
};

struct Stmt {
  enum class Kind : uint8_t {
    Const,      // res[0] = imm
    Binary,     // res[0] = op(args[0], args[1])         arith.addi ... / arith.addf ...
    Unary,      // res[0] = op(args[0])                  arith.negf
    Cmp,        // res[0] = cmpi/cmpf op(args[0], args[1]) (op = predicate; ty = operand type)
    Select,     // res[0] = args[0] ? args[1] : args[2]
    Cast,       // res[0] = op(args[0]) to ty             arith.index_cast ...
    Load,       // res[0] = buf[args[0]]
    Store,      // buf[args[1]] = args[0]
    For,        // args = lb, ub, step, inits...; regions[0].params = iv, iter args
    If,         // args = cond; regions[0] then, regions[1] else (hasElse)
    While,      // args = inits; regions[0] before (yields = cond, forwarded), regions[1] after
    Call,       // res[0] = callee(args...)
    TileLoad,   // tile <- tbuf[args[0] ..+ width]
    TileBinary, // tile = op(tileA, tileB)          pto.tadd / tsub / tmul
    TileScalar, // tile = op(tileA, args[0])        pto.tadds / tmuls
    TileStore,  // tbuf[args[0] ..+ width] <- tileA
  };
  Kind kind = Kind::Const;
  std::string op;
  Ty ty = Ty::I32; // result type (Cmp: operand type; Store: value type; For: iv type)
  uint64_t imm = 0;
  std::vector<int> res, args;
  int buf = -1; // Load/Store: buffer; tile ops: tile buffer
  int callee = -1;
  int tile = -1, tileA = -1, tileB = -1;
  bool hasElse = false;
  std::vector<Region> regions;
};

struct Function {
  std::string name;
  std::vector<int> params;
  std::optional<Ty> result;
  Block body;
  int ret = -1;             // returned value (helpers)
  std::vector<Ty> valueTys; // value id -> type (params, results, region params)
  int newValue(Ty t) {
    valueTys.push_back(t);
    return int(valueTys.size()) - 1;
  }
};

/// A GM buffer: a `!pto.ptr<T>` kernel parameter with exactly `init.size()` elements.
struct Buffer {
  Ty elem = Ty::I32;
  std::vector<uint64_t> init; // element bits before the run
  bool tiles = false;         // accessed by tload/tstore only (f32, `tileRows` x width)
};

/// The entry kernel's scalar parameters (index or integer), bound to fixed values.
struct ScalarParam {
  Ty ty = Ty::Index;
  uint64_t value = 0;
};

struct Program {
  std::vector<Function> funcs;      // helpers first, the kernel last
  std::vector<Buffer> buffers;      // kernel params %b0.. (in this order, before the scalars)
  std::vector<ScalarParam> scalars; // kernel params after the buffers: kernel().params[i]
  int numTiles = 0;
  int tileWidth = 8; // tiles are 1 x tileWidth f32
  Function& kernel() { return funcs.back(); }
  const Function& kernel() const { return funcs.back(); }
};

struct GenOptions {
  bool floats = false; // f32 scalar arithmetic, compares, casts, f32 buffers
  bool halfs = false;  // also f16 / bf16 (implies floats)
  bool tiles = false;  // alloc_tile + tload/tadd/tmuls/tstore on 1xN f32 tiles
  int maxStmts = 40;   // statements (roughly) per program
  int maxDepth = 3;    // region nesting
  int maxHelpers = 2;
  // Constructs to leave out (to keep a long run going past a known bug).
  bool noWhile = false, noCalls = false, noIf = false;
  bool noWideConsts = false; // 64-bit constants only in the int32 range
  std::vector<std::string>
      exclude; // op names ("divsi", "maxnumf") and casts by source ("extsi-i1")
};

/// Evaluation: the expected buffer contents, or why the program is not a valid test (a division
/// by zero, an index out of range, too many steps: the generator then draws again).
struct EvalResult {
  bool ok = false;
  std::string why;
  std::vector<std::vector<uint64_t>> buffers; // final element bits per buffer
  uint64_t steps = 0;
};

EvalResult evaluate(const Program& p, uint64_t maxSteps = 200000);

/// A valid program (its evaluation succeeds) drawn from `seed`; `attempts` tells how many draws
/// were needed.
Program generate(uint64_t seed, const GenOptions& opts, EvalResult& expected,
                 int* attempts = nullptr);

/// The program as .pto text (MLIR style, accepted by pto-as).
std::string print(const Program& p);

/// Scalar semantics (written from the MLIR arith definitions; Values.cpp).
namespace sem {
uint64_t mask(Ty t, uint64_t v);
int64_t sext(Ty t, uint64_t v);
/// Integer binary op; false when the result is undefined (division by zero, signed overflow of
/// a division, a shift amount out of range).
bool intBinary(const std::string& op, Ty t, uint64_t a, uint64_t b, uint64_t& out);
bool intCmp(const std::string& pred, Ty t, uint64_t a, uint64_t b);
uint64_t floatBinary(const std::string& op, Ty t, uint64_t a, uint64_t b);
uint64_t floatNeg(Ty t, uint64_t a);
bool floatCmp(const std::string& pred, Ty t, uint64_t a, uint64_t b);
bool cast(const std::string& op, Ty from, Ty to, uint64_t a, uint64_t& out);
double toDouble(Ty t, uint64_t bits);
/// A double rounded once to nearest even to `t` (f16, bf16, f32, f64 bits).
uint64_t fromDouble(Ty t, double v);
bool isNaN(Ty t, uint64_t bits);
} // namespace sem

} // namespace pto::diff
