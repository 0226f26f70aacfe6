// The export's per-function machinery (export/CppExport.h): the names every function and
// parameter takes in C++, which registers hold stack addresses, and FunctionEmitter, which prints
// one image function as a C++ function. Its members are defined by job: FunctionEmitter.cpp
// (structure, prologue, tile declarations, blocks and transfers), EmitScalar.cpp (scalar
// instructions and extension control blocks), EmitTile.cpp (tile blocks as pto-isa intrinsics).
#pragma once

#include "asm/mc/ImageCode.h"
#include "export/CppExport.h"

#include <array>
#include <cstdint>
#include <optional>
#include <ostream>
#include <set>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

namespace pto::cppexport::detail {

using namespace obj;
using namespace obj::code;

// ------------------------------------------------------------------ names

struct FunctionNames {
  std::vector<std::string> functions; // C++ name of every image function
  std::vector<std::vector<std::string>> params;
};

/// The C++ name of every function and parameter of the image: a kernel keeps its own name (or
/// the export fails), everything else its own name when usable, else `pto_fn<i>` / `arg<i>`.
std::variant<FunctionNames, ExportError> nameFunctions(const Image& img);

/// "@k1, @k2": the image's entry kernels, for the file comment.
std::string entryList(const Image& img);

// ------------------------------------------------------------------ stack facts

/// Which registers hold stack addresses (derived from sp) at the start of each block: `must`
/// on every path, `may` on some path. A scalar load or store whose address is on the stack
/// becomes a frame access, any other one a GM access.
struct StackFlow {
  std::vector<uint32_t> must, may;
};

/// The stack-address mask after one scalar instruction.
uint32_t stackStep(uint32_t mask, const ScalarOp& m);
/// The masks at the start of every block of `fc` (whose text ends at `end`).
StackFlow stackFlow(const FunctionCode& fc, uint64_t end);
/// The stack a kernel needs: the deepest chain of frames through its calls (an error for
/// recursion).
std::variant<uint64_t, ExportError> kernelStack(const Image& img,
                                                const std::vector<FunctionCode>& code, uint32_t f);

// ------------------------------------------------------------------ the function emitter

class FunctionEmitter {
public:
  FunctionEmitter(const Image& img, const FunctionCode& fc, const FunctionNames& names,
                  uint64_t stackBytes)
      : img_(img), fc_(fc), fn_(img.functions[fc.function]), names_(names), stackBytes_(stackBytes),
        end_(fn_.textOffset + fn_.textSize), isKernel_(fn_.flags & kEntry) {}

  /// The function as C++: signature, locals, tiles, then the blocks in address order.
  std::variant<std::string, ExportError> run();

private:
  // ---------------------------------------------------------------- structure
  // (FunctionEmitter.cpp)
  void findTargets();
  std::string label(uint64_t off) const;
  void nameTiles();
  ExportError error(uint64_t off, const std::string& msg) const;
  /// A register read; `dst` a register written (a register only written is declared
  /// [[maybe_unused]], so that -Wall stays quiet on the exported code).
  std::string reg(uint8_t r);
  std::string dst(uint8_t r);
  void signature(std::ostream& out) const;
  /// The register value of an incoming kernel argument (docs/abi.md: GM addresses, raw bits of
  /// scalars, sign-extended integers).
  std::string argBits(size_t i) const;
  void prologue(std::ostream& out);
  void tiles(std::ostream& out) const;
  /// A scratch tile like fn_.tiles[like] (its type and shape, static valid shape) for a tmp
  /// operand that pto-isa requires and the image does not name: placed in the vector buffer above
  /// every tile of the function (they are all live as far as the export knows).
  std::optional<std::string> scratchLike(uint32_t like);
  std::optional<ExportError> block(size_t i);
  void comment(const Block& b);
  uint64_t blockEnd(const Block& b) const;
  void transfer(const Block& b);

  // ---------------------------------------------------------------- scalar code (EmitScalar.cpp)
  std::string xform(const ScalarOp& m);
  std::string operandB(const ScalarOp& m, bool shifted);
  /// The constant a register holds at this point of straight-line code, when known (it makes
  /// GlobalTensor strides static). Updated with the core's semantics.
  void track(const ScalarOp& m);
  std::string fpuExpr(const ScalarOp& m);
  std::optional<ExportError> scalar(const ScalarInst& s);
  /// true: the address is on the stack; false: in GM; nullopt: it depends on the path.
  std::optional<bool> memory(const ScalarOp& m) const;
  std::string bound(const Bound& b, uint32_t dflt);
  std::optional<ExportError> control(const Block& b);
  std::optional<ExportError> signal(const ControlBlock& c);

  // ---------------------------------------------------------------- tile blocks (EmitTile.cpp)
  /// The element type a scalar operand is read as: the op's source tile, else its destination.
  isa::DType scalarType(const isa::OpInfo& oi, const TileBlock& t,
                        const std::vector<int>& at) const;
  std::optional<std::string> globalTensor(const Block& b, isa::DType elem, std::string& decl);
  std::optional<ExportError> tile(const Block& b);
  /// Why a tile block cannot be exported (the text after "cannot be exported: ").
  struct Why {
    std::string text;
  };
  /// The intrinsic call of a tile block with its arguments `args` (destination first), or why
  /// there is none.
  std::variant<std::string, Why> callText(const TileBlock& t, const std::string& intrinsic,
                                          const std::vector<std::string>& args);
  std::optional<ExportError> assign(const Block& b);
  std::string scalarArg(const isa::Role& role, uint8_t r, isa::DType type);
  /// The template arguments of a TMOV/TSTORE with fixpipe attributes (pto-isa's overloads
  /// that take STPhase, AtomicType, AccToVecMode, ReluPreMode), or why none expresses them.
  std::variant<std::string, std::string>
  fixpipeTemplate(const TileBlock& t, const std::vector<std::string>& args, bool pre, bool fp);
  /// The attributes pto-isa takes after the operands: TCVT's rounding and saturation, the
  /// compare mode of TCMP/TCMPS.
  std::variant<std::vector<std::string>, std::string> trailing(const Block& b,
                                                               const isa::OpInfo& oi);
  /// Tiles with a dynamic valid shape take it from the block's B.DIM: the tile that gives the
  /// block its shape (docs/abi.md), and every operand of an op whose operands share it.
  void setValidShapes(const Block& b, const isa::OpInfo& oi, const std::vector<int>& at);

  const Image& img_;
  const FunctionCode& fc_;
  const Function& fn_;
  const FunctionNames& names_;
  uint64_t stackBytes_;
  uint64_t end_;
  bool isKernel_;
  StackFlow flow_;
  uint32_t stackMust_ = 0, stackMay_ = 0;
  std::array<std::optional<uint64_t>, 32> known_{};
  std::set<uint64_t> targets_;
  std::set<uint8_t> used_, read_;
  std::set<uint32_t> tileUsed_;
  struct Scratch {
    std::string type, name;
    uint64_t address = 0, bytes = 0;
  };
  std::vector<Scratch> scratch_;
  std::vector<std::string> tileNames_;
  bool usesCond_ = false;
  std::ostringstream body_;
};

} // namespace pto::cppexport::detail
