// PTO object files: the in-memory model of an ELF64 relocatable object (.o) and its reader and
// writer (through libelf). The section and record layouts are documented in
// docs/object-format.md; everything a reader sees is validated before use.
#pragma once

#include "isa/Isa.h"
#include "support/Interned.h"

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace pto::obj {

inline constexpr uint16_t kFormatVersion = 1;
inline constexpr int64_t kUnplaced = -1; // tile placement left to the linker
// Tile placement set at run time by a TASSIGN block (docs/encoding.md 5.2): the linker does not
// place the tile and the image keeps this value; a view with it has its offset in the parent set
// at run time (aliasOffset until the first TASSIGN of it).
inline constexpr int64_t kRuntimePlaced = -2;
inline constexpr int32_t kDynamicDim = -1;

// Sane limits every reader checks (and every writer keeps), so that a corrupt file fails at load
// with a message instead of asking the runtime for terabytes.
inline constexpr uint32_t kMaxFrameSize = 1u << 20;            // a function's stack frame, bytes
inline constexpr int64_t kMaxParamElements = int64_t(1) << 40; // a tensor_view parameter's shape
// B.IOT's 6-bit operand fields index 64 descriptors of the bank B.TBANK selects (512 banks).
inline constexpr uint32_t kMaxTilesPerFunction = 64 * 512;

/// One tile descriptor (the function's tile table, indexed by B.IOT operands).
struct TileDesc {
  std::string name;
  isa::Loc loc = isa::Loc::Vec;
  isa::DType dtype = isa::DType::F32;
  isa::BLayout blayout = isa::BLayout::RowMajor;
  isa::SLayout slayout = isa::SLayout::NoneBox;
  isa::PadValue pad = isa::PadValue::Null;
  isa::CompactMode compact = isa::CompactMode::Null;
  uint16_t fractal = 512;
  uint32_t rows = 0, cols = 0;
  int32_t validRows = 0, validCols = 0; // kDynamicDim when set at run time
  int64_t placement = kUnplaced;        // byte offset in the buffer of `loc`
  int32_t aliasOf = -1;                 // a view (subset/reshape/bitcast) of this tile index
  uint32_t aliasOffset = 0;             // byte offset of the view in its parent
  bool operator==(const TileDesc&) const = default;
};

enum class ParamKind : uint8_t { Pointer, Scalar, TensorView, Index };

struct Param {
  std::string name;
  ParamKind kind = ParamKind::Pointer;
  isa::DType dtype = isa::DType::F32; // pointee / scalar / element type
  std::vector<int64_t> shape;         // TensorView only (static, row-major)
  // Pointer only (.pto.extents, obj/Extent.h): the elements the kernel may touch through it, as
  // an expression over integer scalar parameters ("" = unknown), and whether the values it holds
  // are used as indices or offsets (a runtime then fills it with zeros, not random values).
  std::string extent;
  bool indexValues = false;
  bool operator==(const Param&) const = default;
};

enum FunctionFlag : uint32_t {
  kEntry = 1u << 0,
  kPrivate = 1u << 1,
  kDeclaration = 1u << 2,
  kKernelVector = 1u << 3,
  kKernelCube = 1u << 4,
  // A5: a vector function whose cross-core pipe ops do not split their tiles runs on vector
  // core 0 only (PTOAS guards it with get_subblockid() == 0; docs/pipes.md).
  kSubblockZeroOnly = 1u << 5,
  // The function returns values (in a0..a7): a library function, never a kernel entry.
  kReturnsValues = 1u << 6,
};

struct Function {
  std::string name;
  uint32_t flags = 0;
  uint64_t textOffset = 0; // bytes into .text
  uint64_t textSize = 0;
  uint32_t frameSize = 0; // scalar spill frame, bytes
  std::vector<Param> params;
  std::vector<TileDesc> tiles;
  bool operator==(const Function&) const = default;
};

/// A symbolic event: a set/wait pair whose hardware id the linker assigns.
struct Event {
  uint32_t function = 0;
  std::string name;
  isa::Pipe srcPipe = isa::Pipe::MTE2, dstPipe = isa::Pipe::V;
  bool operator==(const Event&) const = default;
};

enum class RelocType : uint32_t {
  None = 0,
  Tile = 1,  // the word at `offset` names tile `index` of `function` (unplaced placement)
  Call = 2,  // the word at `offset` calls `symbol`
  Event = 3, // the word at `offset` carries symbolic event `index`
};

// Relocations and line entries come a few per op (a million-op module has millions): their names
// are interned handles (support/Interned.h), 32 bytes a record.
struct Reloc {
  uint64_t offset = 0;            // into .text
  support::InternedString symbol; // Call: the callee (possibly undefined in this object)
  uint32_t function = 0;
  uint32_t index = 0; // tile or event index
  RelocType type = RelocType::None;
  bool operator==(const Reloc&) const = default;
};

struct LineEntry {
  uint64_t textOffset = 0;
  support::InternedString file;
  // The frontend's location of the op (MLIR debug info, docs/object-format.md 2.4): empty when
  // none.
  support::InternedString frontend;
  uint32_t line = 0, col = 0;
  bool operator==(const LineEntry&) const = default;
};

/// One GM access of a tile op (.pto.gmaccess, docs/object-format.md): what the linker's
/// dependency analysis knows of the GM bytes a TLOAD, TSTORE or other GM-touching tile op
/// reads or writes, so that auto-sync orders a store and a later load of the same bytes (link/
/// Races.cpp). The byte address is `param`'s base + `offset` + the symbolic part (`symbol`, a
/// hash of its terms; equal hashes: equal values in one run of the function) + `stride` x the
/// iteration of `loop`; the access covers `bytes` from there (the hull of its rows).
struct GmAccess {
  uint64_t textOffset = 0; // the tile op's block, into .text
  uint32_t function = 0;
  int32_t param = -1;  // pointer or tensor_view parameter index; -1: any parameter
  bool write = false;  // writes GM (else reads it)
  bool known = false;  // offset, symbol, loop, stride and bytes hold; else: any byte of param
  int64_t offset = 0;  // bytes
  uint64_t bytes = 0;  // > 0 when known
  uint64_t symbol = 0; // 0: no symbolic part
  uint32_t loop = 0;   // the function's loop (1-based) the address moves with; 0: none
  int64_t stride = 0;  // bytes per iteration of `loop` (0 when loop == 0)
  bool operator==(const GmAccess&) const = default;
};

struct ObjectFile {
  isa::Arch arch = isa::Arch::A2A3;
  bool usesExtensions = false; // declared in the .note.pto.isa identity (docs/encoding.md)
  std::vector<uint8_t> text;   // little-endian command words
  std::vector<Function> functions;
  std::vector<Event> events;
  std::vector<Reloc> relocs;
  std::vector<LineEntry> lines;
  std::vector<GmAccess> gmAccesses; // by textOffset (several may share one)
  bool operator==(const ObjectFile&) const = default;
};

/// An error message, or nothing.
using Error = std::optional<std::string>;

/// Serializes the object as an ELF64 ET_REL image.
std::variant<std::vector<uint8_t>, std::string> writeObject(const ObjectFile& obj);
/// Parses and validates an object image. Corrupt input gives a message naming what is wrong.
std::variant<ObjectFile, std::string> readObject(const uint8_t* data, size_t size);

} // namespace pto::obj
