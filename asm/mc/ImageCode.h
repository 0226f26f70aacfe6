// The meaning of a linked image's code: each function's blocks (asm/mc/Blocks.h, the one block
// decoder) read for execution. Scalar instructions keep their decoded word and get a normalized
// operation (ALU op, registers, immediate) with the semantics of docs/encoding.md; tile blocks
// carry their op and header fields (B.DATR, B.DIM, B.IOR, B.IOT); extension control blocks carry
// their pipes and event id. Used by the runtime (runtime/Program.cpp) and the C++ exporter
// (export/CppExport.h), so that no tool decodes blocks its own way.
#pragma once

#include "asm/mc/BlockHeader.h"
#include "asm/mc/Blocks.h"
#include "isa/Encoding.h"
#include "isa/ScalarFp.h"
#include "isa/ScalarSemantics.h"
#include "obj/Image.h"

#include <array>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace pto::obj::code {

/// What a scalar instruction does (docs/encoding.md, section 2).
enum class ScalarKind : uint8_t {
  Alu,   // rd = op(r[rs1], B)   B = useImm ? imm : xform(r[rs2]) << shamt
  Setc,  // cond = op(r[rs1], B) B = useImm ? imm : xform(r[rs2])
  Csel,  // rd = r[rs3] != 0 ? r[rs1] : xform(r[rs2])
  Load,  // rd = mem[r[rs1] + B], `size` bytes, sign- or zero-extended
  Store, // mem[r[rs1] + B] = r[rs3], `size` bytes;  B = useImm ? imm : xform(r[rs2])
  Fpu,   // rd = isa::scalarFp(fp, fpSrc, fpDst, r[rs1], r[rs2])
};

/// The ALU operations and their semantics: isa/ScalarAlu.def, isa/ScalarSemantics.inc.
using AluOp = isa::AluOp;
using isa::isLogical;

/// SrcR transforms (the SrcRType field): none, .sw, .uw, .neg (.not for logical ops).
enum class RType : uint8_t { None = 0, SignWord = 1, ZeroWord = 2, NegOrNot = 3 };

inline constexpr uint8_t kZeroReg = 0, kSpReg = 1, kA0Reg = 2, kRaReg = 10;

/// (The byte fields come first and imm last, so that it packs into 24 bytes: the runtime's
/// micro-ops embed it in their hot loop.)
struct ScalarOp {
  ScalarKind kind = ScalarKind::Alu;
  AluOp op = AluOp::Add;
  uint8_t rd = 0, rs1 = 0, rs2 = 0, rs3 = 0; // GPR selectors; rd 0 (zero) discards the result
  RType rtype = RType::None;
  uint8_t shamt = 0;
  uint8_t size = 8;      // Load/Store bytes
  bool isSigned = false; // Load: sign-extend
  bool useImm = false;
  isa::FpOp fp = isa::FpOp::Add; // Fpu: the operation, its SrcType and DstType fields
  uint8_t fpSrc = 0, fpDst = 0;
  int64_t imm = 0;
  bool operator==(const ScalarOp&) const = default;
};
static_assert(sizeof(ScalarOp) == 24);

struct ScalarInst {
  uint64_t offset = 0; // image .text offset of the word
  isa::enc::Inst inst;
  ScalarOp op;
};

struct TileBlock {
  isa::enc::TileOp encOp{};               // the encoding's op (TADD, TDEQUANT, TAXPY, ...)
  isa::OpId op{};                         // the op table's op
  isa::DType startType = isa::DType::F32; // BSTART DataType: the data the op reads
  std::optional<isa::enc::Datr> datr;     // B.DATR fields
  Bound dim[3]; // LB0 valid cols, LB1 valid rows, LB2 physical cols (matmul: M, N, K)
  std::optional<std::array<uint8_t, 3>> ior; // B.IOR sources: GM address / row stride / scalars
  uint8_t iorDst = 0;                        // B.IOR RegDst (0: none; TMRGSORT's counts)
  std::vector<uint32_t> tiles; // B.IOT operands, destination first (tile table indices)
  isa::fix::Attrs fix;         // TMOV/TSTORE: B.FPATR and B.XATR (defaults when absent)
  std::string text;            // PRINT: its format (B.DIM ->LB1 the length, ->LB0 two bytes each)
};

struct ControlBlock {
  isa::enc::ExtCtl ctl = isa::enc::ExtCtl::None;
  isa::Pipe pipeA = isa::Pipe::S, pipeB = isa::Pipe::S;
  Bound event;                  // SET_FLAG/WAIT_FLAG: B.DIM ->LB0 (absent: event 0)
  uint8_t result = 0;           // GET_BLOCK_IDX...: the B.IOR destination GPR
  std::array<uint8_t, 3> ior{}; // COMM_*: the B.IOR source GPRs (signal address, value)
};

struct Block {
  uint64_t offset = 0; // image .text offset of the first word
  BlockKind kind = BlockKind::Scalar;
  Transfer transfer = Transfer::Fall;
  uint64_t target =
      0; // Direct/Cond: a block start of the function (or its end); Call: callee offset
  std::vector<ScalarInst> scalars; // Scalar blocks only
  TileBlock tile;                  // Tile blocks only
  ControlBlock control;            // Control blocks only
};

struct FunctionCode {
  uint32_t function = 0;
  std::vector<Block> blocks; // in address order
  /// The index of the block starting at `offset`, or nullopt (the function's end included as
  /// blocks.size()).
  std::optional<size_t> blockAt(uint64_t offset, uint64_t functionEnd) const;
};

/// An error with the place it happened: function, text offset, message.
struct CodeError {
  uint32_t function = 0;
  uint64_t offset = 0;
  std::string message;
};

/// What the scalar instruction `in` does (its form in the scalar group), or why it has no
/// operation here: the decoding the runtime runs, for the linker's reading of slot addresses.
std::variant<ScalarOp, std::string> decodeScalar(const isa::enc::Inst& in);

/// Decodes one function of a validated image into blocks. Branch targets are checked to be
/// block starts of the function; call targets to be function starts.
std::variant<FunctionCode, CodeError> decodeFunction(const Image& img, uint32_t function);

/// "file:line:col" of the source op that produced the word at `offset` of `function`, or "".
/// An op with a frontend location (MLIR debug info) reads "rope.py:23:8 [file:line:col]" unless
/// ptoPositions.
std::string sourceLocation(const Image& img, uint32_t function, uint64_t offset,
                           bool ptoPositions = false);

/// The function whose code starts at `offset` (call targets), or nullopt.
std::optional<uint32_t> functionAt(const Image& img, uint64_t offset);

} // namespace pto::obj::code
