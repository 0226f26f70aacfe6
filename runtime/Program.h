// The decoded program: every function of an image decoded once into micro-ops (scalar code,
// control transfers, tile ops with resolved operands and a kernel picked per dtype).
// Internal to the runtime (runtime/Runtime.h is the public API).
#pragma once

#include "asm/mc/ImageCode.h"
#include "isa/Encoding.h"
#include "isa/TileLayout.h"
#include "obj/Image.h"
#include "runtime/Runtime.h"
#include "support/Numbers.h"
#include "support/ZeroedPages.h"

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace pto::rt {

// ------------------------------------------------------------------ simulated core state
inline constexpr unsigned kNumRegs = 32; // 24 GPRs; index 31 is the sink for writes to `zero`
inline constexpr unsigned kSinkReg = 31;
inline constexpr unsigned kRegionShift = 40; // GM virtual address = (region << 40) | offset
inline constexpr uint64_t kRegionMask = (uint64_t{1} << kRegionShift) - 1;
inline constexpr uint64_t kStackRegion = 0xFFFF;
/// The region of a poisoned address: one formed from an argument's pointer with an offset that
/// leaves its region in exact arithmetic (index 2^62 + 2 wraps back into it, 2^38 f32 elements
/// reach the next argument); its use is an error naming the element and the argument.
inline constexpr uint64_t kPoisonRegion = 0xFFFFFF;

struct GmRegion {
  uint8_t* data = nullptr;
  uint64_t size = 0;
  isa::DType dtype = isa::DType::U8;
  std::string name; // parameter name
};

struct TileInst;
struct Program;

/// The rows of GM a TLOAD or TSTORE touches (`rows` of `rowBytes` bytes, `stride` bytes apart):
/// what a remote access (World::remote) reads or sends, and nothing between the rows. An
/// atomic add of `dtype` elements sets atomicAdd; the world then answers `staged` = true when
/// the op must write its addends, not sums, to the staging copy (the add happens at the rank).
struct GmRows {
  uint64_t rows = 1, rowBytes = 0, stride = 0;
  bool atomicAdd = false;
  isa::DType dtype = isa::DType::U8;
  mutable bool staged = false;
};

/// Where a GM address is: the rank whose window it is in, the argument (index into the
/// rank's regions) and the byte offset in it.
struct GmPlace {
  uint32_t rank = 0;
  size_t region = 0;
  uint64_t offset = 0;
};

/// A staging copy of remote GM an op reads or writes (World::remote), sent when the op ends.
struct RemoteStage {
  GmPlace place;
  bool write = false;
  GmRows rows; // rows.rows == 0: one contiguous span of data.size() bytes
  std::vector<uint8_t> data;
};

/// One simulated AI core (one block). Buffers are reused from block to block.
struct Core {
  std::array<uint64_t, kNumRegs> r{};
  bool cond = false;
  std::array<uint8_t*, 7> buf{};    // by isa::Loc
  std::array<size_t, 7> bufSize{};  // bytes of each buffer (the arch's capacity)
  isa::Arch arch = isa::Arch::A2A3; // the kernels whose NPU forms differ by arch (TPARTARGMAX)
  // Backing of buf: anonymous mappings, zero pages the kernel never touches never faulted in.
  // A zero-filled vector (or calloc, which glibc serves from its heap once a buffer has been
  // freed) wrote every byte of every buffer (1-2 MB a core) at each launch: most of a small
  // kernel's run time.
  std::array<support::ZeroedPages, 7> storage;
  /// Buffer `loc` as `bytes` zeroed bytes, page-aligned (the NPU's buffers are 64-byte aligned:
  /// vector kernels never split a cache line).
  void allocateBuffer(unsigned loc, size_t bytes) {
    storage[loc] = support::ZeroedPages(bytes);
    buf[loc] = storage[loc].data();
    bufSize[loc] = bytes;
  }
  std::vector<uint8_t> stack;                // frame + stack parameters
  const std::vector<GmRegion>* gm = nullptr; // region i+1 = argument i
  uint32_t blockIdx = 0, blockNum = 1;
  std::string error;  // first error (without location)
  std::string output; // what TPRINT printed in this block (the launch collects it, block order)
  uint64_t tileOps = 0, scalarOps = 0;
  uint64_t instructionLimit = 0;                                  // 0 = none; checked at branches
  const std::atomic<bool>* cancel = nullptr;                      // RunOptions::cancel
  const std::vector<struct DecodedFunction>* functions = nullptr; // call targets
  unsigned callDepth = 0;
  // A block with cross-core pipes runs as a cluster of three cores (runtime/Cluster.h): this
  // core's lane (0 = AIC, 1 = AIV0, 2 = AIV1) and its sub-block index and count.
  class Cluster* cluster = nullptr;
  // A multi-device run (runtime/Comm.h): the ranks' shared world and this core's rank.
  class World* world = nullptr;
  uint32_t rank = 0;
  uint8_t lane = 0;
  uint32_t subblockIdx = 0, subblockNum = 1;
  // Cross-core flags raised and not yet taken (pto.sync.set/wait), and per A5 buffer id the
  // pipes holding its token (pto.get_buf/rls_buf), by id 0..31.
  std::array<uint32_t, 32> crossFlags{};
  std::array<uint16_t, 32> bufTokens{};
  // The npu model's time of the op being executed (its start and cost, in cycles); a pipe op
  // that found its data or slot later sets simNotBefore, and the op starts then.
  uint64_t simStart = 0, simCost = 0, simNotBefore = 0;

  /// Translates a GM/stack virtual address range; nullptr (and error set) when out of bounds.
  /// `rows`: the rows a TLOAD/TSTORE touches in it (what a remote access sends, GmRows).
  uint8_t* translate(uint64_t addr, uint64_t bytes, const char* what, bool write,
                     const GmRows* rows = nullptr);
  /// The argument and offset a GM address range is in (a rank tag names a peer's window,
  /// runtime/Comm.h), checked to lie inside it; nullopt with the error set when it does not.
  std::optional<GmPlace> locate(uint64_t addr, uint64_t bytes, const char* what, bool write);
  /// Staging copies of remote GM the current op reads or writes (World::remote).
  std::vector<RemoteStage> remote;
  /// Ends an op that staged remote GM (World::finishRemote); false with the error set.
  bool finishRemote();
  /// The one GM bounds check in exact arithmetic, used by the cpu backend, the npu model and
  /// the reference interpreter: the access of `bytes` at pointer `base` plus `offset` bytes (the
  /// scaled index as an exact integer, not reduced mod 2^64). nullptr and the error set, naming
  /// the access, the element and the argument, when it is not inside the argument.
  uint8_t* access(uint64_t base, obj::WideInt offset, uint64_t bytes, const char* what, bool write);
  /// `base` + `offset` bytes as the core computes it (mod 2^64), or, when that lands elsewhere
  /// than the exact sum (an argument's pointer and an offset beyond +-2^39 bytes), a poisoned
  /// address whose access is an error naming element offset / `elemBytes` of the argument.
  uint64_t offsetAddress(uint64_t base, obj::WideInt offset, uint64_t elemBytes);
  /// offsetAddress between ranks' windows (runtime/Comm.h); nullopt when no rank tag moves.
  std::optional<uint64_t> peerAddress(uint64_t base, obj::WideInt offset, uint64_t elemBytes);
  std::vector<std::string> poisons; // what each poisoned address names (at most 1024)
  /// A GM offset whose exact value left int64 (issue 34, item 11): the code generator computes
  /// a partition's element offset as sum(offset_i * stride_i) with `mulu` (the bits of `mul`)
  /// and `add`, and scales it into the address with a shifted add. Register `wideReg` holds the
  /// wrapped bits, `wideExact` the exact value, until the register is written otherwise;
  /// kNoWideReg when none.
  static constexpr uint8_t kNoWideReg = 0xFF;
  uint8_t wideReg = kNoWideReg;
  obj::WideInt wideExact = 0;
  /// The exact value of register `reg` (the wide one, or its bits as a signed integer).
  obj::WideInt exactValue(uint8_t reg) const {
    return reg == wideReg ? wideExact : static_cast<obj::WideInt>(static_cast<int64_t>(r[reg]));
  }
  /// The argument region an address falls in (nullptr if none).
  const GmRegion* regionOf(uint64_t addr) const;
};

// ------------------------------------------------------------------ tile operands
struct TileOperand {
  uint8_t loc = 0;
  isa::DType dtype = isa::DType::F32;
  isa::BLayout blayout = isa::BLayout::RowMajor;
  isa::SLayout slayout = isa::SLayout::NoneBox;
  uint32_t offset = 0; // byte offset in the buffer
  uint32_t rows = 0, cols = 0;
  /// A view bound at run time whose last line (row of a row-major tile, column of a column-major
  /// one; `lastLineWidth` of them on a boxed tile) ends in its parent's last bytes: the elements
  /// of its pitch inside the parent (0: the whole line is).
  uint32_t lastLine = 0, lastLineWidth = 1;
  int32_t validRows = 0, validCols = 0;  // descriptor (kDynamicDim = -1 when dynamic)
  uint32_t innerRows = 1, innerCols = 1; // box shape (1x1 for NoneBox)
  isa::PadValue pad = isa::PadValue::Null;
  int32_t runtimeDesc = -1; // placed at run time: the descriptor whose TASSIGN gives `offset`
  std::string name;

  /// Whether a vr x vc valid region lies inside the operand's storage.
  bool holds(uint32_t vr, uint32_t vc) const {
    if (vr > rows || vc > cols || lastLine == 0) return vr <= rows && vc <= cols;
    return blayout == isa::BLayout::ColMajor ? vc + lastLineWidth <= cols || vr <= lastLine
                                             : vr + lastLineWidth <= rows || vc <= lastLine;
  }
  bool plainRowMajor() const {
    return blayout == isa::BLayout::RowMajor && slayout == isa::SLayout::NoneBox;
  }
  /// Element offset of (r, c) (reference 4.3, GetTileElementOffset).
  size_t elemOffset(uint32_t r, uint32_t c) const {
    return isa::elementOffset(blayout, slayout, {innerRows, innerCols}, rows, cols, r, c);
  }
  size_t bytes() const { return (size_t{rows} * cols * isa::bitWidth(dtype) + 7) / 8; }
};

/// A loop bound or event id: (GPR + imm)[15:0]; reg 0 = constant (as asm/mc/ImageCode decodes it).
using Bound = obj::code::Bound;

using TileKernel = void (*)(Core&, const TileInst&);

struct TileInst {
  isa::OpId op{};
  const char* name = "";                  // spec name for messages (TLOAD, TADD, ...)
  isa::DType startType = isa::DType::F32; // BSTART DataType (data the op reads)
  std::optional<isa::enc::Datr> datr;     // B.DATR, as decoded (Layout: TLOAD/TSTORE's GM side)
  bool gmDn = false;          // TLOAD/TSTORE: GM is column-major (stride = between columns)
  Bound dim[3];               // LB0 valid cols, LB1 valid rows, LB2 physical cols (matmul: M, N, K)
  uint8_t ior[3] = {0, 0, 0}; // B.IOR sources
  unsigned numIor = 0;
  uint8_t iorDst = 0; // B.IOR RegDst: a register the op writes (0 = the zero register: none)
  std::vector<TileOperand> tiles; // destination first, as B.IOT lists them
  // Operand positions by role (-1 when absent), filled by the role matcher.
  int dst = -1, src0 = -1, src1 = -1, src2 = -1, acc = -1, bias = -1;
  int src3 = -1, tmp = -1;      // TMRGSORT's fourth list; the scratch tile (role `tmp`)
  int dst1 = -1;                // a second output (TPARTARGMAX's indices)
  int lscale = -1, rscale = -1; // MX matmul scale tiles
  TileKernel kernel = nullptr;
  std::string text; // PRINT: its format (isa/PrintFormat.h, checked when the image was read)
  isa::RoundMode round = isa::RoundMode::CAST_NONE;
  isa::SatMode satMode = isa::SatMode::ON;
  isa::fix::Attrs fix;       // TMOV/TSTORE: the fixpipe's B.FPATR and B.XATR (isa/Fixpipe.h)
  bool runtimeTiles = false; // an operand is placed at run time (resolved when the op issues)

  uint32_t bound(const Core& c, unsigned lb, uint32_t dflt) const {
    const Bound& b = dim[lb];
    if (!b.present) return dflt;
    return static_cast<uint32_t>((c.r[b.reg] + b.imm) & 0xFFFF);
  }
  uint32_t validCols(const Core& c) const { return bound(c, 0, 1); }
  uint32_t validRows(const Core& c) const { return bound(c, 1, 1); }
  uint64_t scalar(const Core& c, unsigned i) const { return c.r[ior[i]]; }
};

// ------------------------------------------------------------------ micro-ops
enum class MKind : uint8_t {
  Alu,       // rd = op(r[rs1], B)   B = useImm ? imm : xform(r[rs2]) << shamt
  Setc,      // cond = op(r[rs1], B)
  Csel,      // rd = r[rs3] ? r[rs1] : xform(r[rs2])
  Fpu,       // rd = isa::scalarFp(fp, fpSrc, fpDst, r[rs1], r[rs2])
  Load,      // rd = mem[r[rs1] + B]  (size, signed)
  Store,     // mem[r[rs1] + B] = r[rs3]
  Tile,      // tiles[index]
  BlockInfo, // rd = block idx / num / subblock idx / num (imm = which)
  Jump,      // pc = target
  JumpIf,    // if cond: pc = target
  ClearCond,
  Ret,
  Call,      // run function `target` (its image index; imm = the call's text target), then go on
  Sync,      // syncs[target]: set_flag / wait_flag / pipe_barrier (the cpu backend runs in program
             // order and skips them; the npu model blocks and releases pipes on them)
  Bind,      // TASSIGN: descriptor `target` of the function is at byte address r[s.rs1] from now on
  BindScale, // TGET_SCALE_ADDR: descriptor `target` is at (descriptor s.imm's address) >> 4
  Comm,      // COMM_NOTIFY/WAIT/TEST/SYNCALL (target = the ExtCtl): signal r[rs1], value r[rs2],
             // mode imm, test result into rd (runtime/Comm.h)
};

using AluOp = obj::code::AluOp; // the scalar operations, as asm/mc/ImageCode decodes them

/// One micro-op. The scalar kinds (Alu..Store) carry the decoded operation itself (`s`, as
/// asm/mc/ImageCode reads it, with rd 0 redirected to kSinkReg); BlockInfo uses s.rd and s.imm
/// (which query); Call uses s.imm (the call's text target) until the callee's index is known.
struct MOp {
  MKind kind = MKind::Ret;
  obj::code::ScalarOp s{};
  uint32_t target = 0;     // Jump/JumpIf: micro-op index; Tile: TileInst index; Call: function
  uint32_t textOffset = 0; // image .text offset of the word (for source locations)
};
static_assert(sizeof(MOp) <= 40, "the interpreter's hot loop walks these");

/// A set_flag / wait_flag (src -> dst pipe, event id = bound) or a pipe_barrier (src = dst).
struct SyncInst {
  isa::enc::ExtCtl kind = isa::enc::ExtCtl::SET_FLAG;
  isa::Pipe src = isa::Pipe::S, dst = isa::Pipe::S;
  Bound event; // (GPR + imm)[15:0]
  uint32_t eventId(const Core& c) const {
    return event.present ? static_cast<uint32_t>((c.r[event.reg] + event.imm) & 0xFFFF) : 0;
  }
};

struct DecodedFunction {
  uint32_t index = 0; // in Image::functions
  std::string name;
  std::vector<MOp> code;
  std::vector<TileInst> tiles;
  std::vector<SyncInst> syncs;
  std::vector<Module::ParamInfo> params;
  uint32_t frameSize = 0;
  uint32_t flags = 0;                   // obj::FunctionFlag (kernel kind: which cores run it)
  bool crossCore = false;               // uses a cross-core pipe op
  bool usesComm = false;                // uses a signal op or syncall (runtime/Comm.h)
  std::array<uint64_t, 7> bufferUsed{}; // bytes to clear at block start
  // The function's tile descriptors when one is placed at run time (obj::kRuntimePlaced), else
  // empty: TASSIGN binds them and each op naming one resolves it (resolveTiles).
  std::vector<obj::TileDesc> runtimeDescs;
  isa::Arch arch = isa::Arch::A2A3; // for the buffers' capacity and alignment
};

/// The byte offsets a function's TASSIGNs bound, per descriptor (-1: not bound), for one call.
using TileBindings = std::vector<int64_t>;

/// TASSIGN: checks that descriptor `desc` at `addr` lies inside its buffer (a view: inside its
/// parent) and records it; an error message otherwise (docs/runtime.md, run-time placement).
std::optional<std::string> bindTile(const DecodedFunction& fn, TileBindings& b, uint32_t desc,
                                    uint64_t addr);

/// SYNC_SET / SYNC_WAIT / GET_BUF / RLS_BUF (pto.sync.set/wait, pto.get_buf/rls_buf).
bool isCoreSync(isa::enc::ExtCtl k);
/// Their effect on the core's flags and buffer tokens, in program order (docs/sync.md): a set
/// raises its flag, a wait takes one (none raised: an error, the core would wait forever), a
/// pipe acquires a buffer id once before releasing it. An error message otherwise.
std::optional<std::string> coreSyncStep(Core& c, const SyncInst& s);

/// TGET_SCALE_ADDR: binds scaling descriptor `desc` at the address of descriptor `src` shifted
/// right by SHIFT_MX_ADDR (4), checked like a TASSIGN.
std::optional<std::string> bindScaleTile(const DecodedFunction& fn, TileBindings& b, uint32_t desc,
                                         uint32_t src);

/// A copy of `t` with every operand placed at run time at its bound offset (a view bound at run
/// time keeps the rows left in its parent); an error message when one is not bound yet.
std::optional<std::string> resolveTiles(const DecodedFunction& fn, const TileBindings& b,
                                        TileInst& t);

struct Program {
  obj::Image image;
  bool crossCore = false; // some function uses a cross-core pipe: blocks run as clusters
  std::string fileName;
  std::vector<DecodedFunction> functions; // one per image function
  std::vector<uint32_t> entries;          // function indices of the entry table
  /// The entry table's position of each kernel name (a look-up a call, for images of many
  /// kernels: --list, launch and the extents scanned every entry for each).
  std::unordered_map<std::string, size_t> entryByName;
  /// The image entry named `kernel`, or null.
  const obj::ImageEntry* entry(std::string_view kernel) const {
    auto it = entryByName.find(std::string(kernel));
    return it == entryByName.end() ? nullptr : &image.entries[it->second];
  }

  /// "file:line:col" of the source op that produced the word at `textOffset`, or "".
  std::string locationOf(uint32_t function, uint64_t textOffset) const;
  /// The same for any text offset: "file:line:col", or "@function+0xoffset" without a line entry.
  std::string locationAt(uint64_t textOffset) const;
};

/// Decodes every function of a validated image.
Result<std::shared_ptr<Program>> decodeImage(obj::Image image, std::string fileName);

/// Runs one block of `fn` on `core` (registers set up by the caller). Returns false on error
/// (core.error set, `failedAt` = text offset of the failing word).
bool runBlock(const DecodedFunction& fn, Core& core, uint32_t& failedAt);

/// Fills the operand positions of `t` (dst, src0, ..., by role) from its tiles in B.IOT order
/// (isa::tileOperandRoles); an error when operands are missing or TMRGSORT's count is wrong.
std::optional<std::string> assignTileRoles(TileInst& t);

/// Sets the operand positions of `t` from each tile's role (an index into the op's roles, -1
/// for none) by the op table's slot column (isa::slotOperands). TMRGSORT's are counted, not
/// named: assignTileRoles and the reference interpreter set those themselves.
void assignSlots(TileInst& t, std::span<const int> roles);

/// Picks the cpu kernel of a decoded tile instruction; an error message when unsupported.
std::optional<std::string> selectKernel(TileInst& t);

} // namespace pto::rt
