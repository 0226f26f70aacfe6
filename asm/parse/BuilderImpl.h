// Internal to the front end (not installed): the IR builder that interprets a parse tree as
// Kernel IR. Builder.cpp drives it; its members are defined by construct in the Build*.cpp files
// named at each group of declarations below.
#pragma once

#include "asm/parse/AttrValues.h"
#include "asm/parse/Structurize.h"
#include "asm/parse/Syntax.h"

#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace pto::as::detail {

using namespace pto::ir;

// ---------------------------------------------------------------- pieces
struct OperandRef {
  enum Kind { Value, Literal, Memory } kind = Value;
  std::string name; // value name without '%', with "#N" for result-group uses
  SrcLoc loc;
  P::LiteralContext* lit = nullptr;
  std::vector<OperandRef> indices; // Memory: base[indices]
  P::AttrDictContext* dict = nullptr;
};

struct Keyword {
  std::string key;
  P::AttrValueContext* value;
  SrcLoc loc;
};

enum class PieceKind {
  Operand,
  Types,
  To,
  Arrow,
  Dict,
  Keyword,
  ColonKeyword, // `offset: [...]` (memref.reinterpret_cast)
  Hash,
  Angle,
  Call,
  Bracket,
  Symbol,
  Paren,
  Sizes,
  WordBracket, // `valid [%r, %c]` (pto.subview's run-time valid shape)
  BareWord,    // `single_cache_line`, `all` (pto.cmo.cacheinvalid)
  OutsType,
  Props,     // `<{...}>`: MLIR's properties dictionary of the generic form
  Successor, // `^bb1`, `^bb1(%x : i32)`: a cf branch's successor
  Regions,   // `({ ... }, { ... })`: the regions of an op in MLIR's generic form
  Comma
};

struct PieceSeen {
  PieceKind kind;
  SrcLoc loc;
  std::string word;               // keyword key or call name
  antlr4::ParserRuleContext* ctx; // for the text of "unexpected ..." errors
};

struct Pieces {
  std::vector<PieceSeen> seen; // every top-level piece, in order (for "unexpected ..." errors)
  std::vector<OperandRef> operands;
  std::vector<P::TypeContext*> types; // after ':'
  P::TypeContext* toType = nullptr;   // `: A to B`
  std::vector<P::TypeContext*> arrowTypes;
  bool hasArrow = false;
  SrcLoc typesLoc;
  std::vector<P::AttrDictContext*> dicts;
  std::vector<Keyword> keywords;
  std::vector<Keyword> colonKeywords;
  std::vector<P::HashPieceContext*> hashes;
  std::vector<P::AngleContext*> angles;
  std::vector<P::CallPieceContext*> calls;
  std::vector<P::BracketContext*> brackets;
  std::vector<P::SymbolPieceContext*> symbols;
  std::vector<P::ParenPieceContext*> parens;
  P::SizesPieceContext* sizes = nullptr;
  P::WordBracketPieceContext* validBracket = nullptr; // `valid [..]`
  std::vector<std::string> bareWords;                 // `single_cache_line`, `all`
  P::TypeContext* outsType = nullptr;
  P::AttrDictContext* props = nullptr;               // `<{...}>` (generic form)
  std::vector<P::SuccessorPieceContext*> successors; // a cf branch's
  bool generic = false; // the op name was quoted: `"pto.tmov"(%a, %b) : (A, B) -> ()`

  P::CallPieceContext* call(std::string_view kw) const {
    for (auto* c : calls)
      if (c->callKw->getText() == kw) return c;
    return nullptr;
  }
  const Keyword* keyword(std::string_view k) const {
    for (const Keyword& kw : keywords)
      if (kw.key == k) return &kw;
    return nullptr;
  }
  const Keyword* colonKeyword(std::string_view k) const {
    for (const Keyword& kw : colonKeywords)
      if (kw.key == k) return &kw;
    return nullptr;
  }
};

/// The pieces of a bracket, paren or call piece (ctx->piece(), without a dynamic_cast per child).
inline std::vector<P::PieceContext*> piecesOf(antlr4::ParserRuleContext* ctx) {
  return ruleChildren<P::PieceContext>(ctx, P::RulePiece);
}

/// Reads a run of pieces: a statement's, or the contents of a bracket, paren or call piece.
Pieces collectPieces(const std::vector<P::PieceContext*>& pieces);

/// Reports the first piece an op does not take ("unexpected '...' in 'op'"); keyword and call
/// pieces must also be among the allowed words.
bool onlyPieces(DiagEngine& diags, const Pieces& p, const std::string& op,
                std::initializer_list<PieceKind> kinds,
                std::initializer_list<std::string_view> words = {});

// ---------------------------------------------------------------- the builder
class Builder {
public:
  Builder(const SourceFile& src, DiagEngine& diags, std::optional<isa::Arch> arch)
      : src_(src), diags_(diags), types_(diags, [this] { return this->arch(); }), archFlag_(arch) {}

  std::unique_ptr<Module> build(P::FileContext* file) {
    begin();
    return finish(file);
  }
  // Building while parsing (Builder.cpp's FunctionStreamer): begin(), then each module's
  // attributes and each function or kernel as soon as the parser has read it (its parse tree is
  // freed right after), then finish() with the whole file for the rest, in the same order.
  void begin();
  /// `f` is a FuncOpContext or a KernelOpContext.
  void buildStreamed(antlr4::ParserRuleContext* f);
  void typeAliasStreamed(P::TypeAliasContext* a);
  void moduleAttrsStreamed(P::ModuleOpContext* m);
  /// A statement of a file of bare statements (FunctionStreamer streams one only when the file
  /// holds nothing else): built into the fragment at once, which finish() closes.
  void fragmentStmtStreamed(P::StmtContext* s);
  /// A function body built one top-level statement at a time (FunctionStreamer, for bodies of
  /// one block): bodyStreamBegin when the parser enters `f`'s body (its signature read), each
  /// statement of the body as it ends, bodyStreamEnd when `f` ends.
  void bodyStreamBegin(antlr4::ParserRuleContext* f);
  void bodyStmtStreamed(P::StmtContext* s);
  void bodyStreamEnd(antlr4::ParserRuleContext* f);
  std::unique_ptr<Module> finish(P::FileContext* file);

private:
  // ------------------------------------------------------------ types
  struct ResultName {
    std::string name;
    SrcLoc loc;
  };
  /// One entry of a `[a, b, c]` sync list: an enum word, a symbol or a value.
  struct SyncItem {
    std::string word;
    std::string symbol;
    std::optional<OperandRef> value;
    SrcLoc loc;
  };
  enum class Kind { Tile, View, Scalar, Unknown };
  /// A tile op's attributes as read: canonical text for printing, typed modes for meaning.
  struct TileAttrs {
    std::vector<NamedAttr> list;
    TileModes modes;
  };
  struct Bound {
    OperandRef ref;
    int role; // index into info.roles
    std::optional<Type> annotated;
  };
  struct EventSite {
    Region* region;
    Op* op;
  };
  struct EventUses {
    std::vector<EventSite> records, waits;
  };

  // -------- module structure, functions, values, regions, statements, calls (BuildModule.cpp)
  void buildItem(P::ItemContext* item, std::vector<P::StmtContext*>& fragment);
  void readModuleAttrs(P::AttrDictContext* dict);
  /// The value of `key = value [: type]` as canonical text (empty for a unit attribute).
  static std::string entryValue(P::AttrEntryContext* e);
  static std::string entryKey(P::AttrEntryContext* e);
  std::vector<NamedAttr> readAttrs(P::AttrDictContext* dict);
  isa::Arch arch() const;
  /// A new function, or the declared one of that name built again in its place (a declaration
  /// and its definition are one function, in one module or in sibling modules); a
  /// `declaration` of a function already defined is read, checked and dropped by buildFunc.
  Function* beginFunction(std::string name, SrcLoc loc, bool declaration = false);
  /// A redeclared function's signature must be the first declaration's (or definition's).
  void checkRedeclaration(const Function& fn);
  /// A function's signature and where it was written.
  struct Declared {
    std::vector<Type> args, results;
    SrcLoc loc;
  };
  static Declared signatureOf(const Function& f);
  void readArgs(const std::vector<P::FuncArgContext*>& args, Region& region);
  void buildFunc(P::FuncOpContext* f);
  void buildKernel(P::KernelOpContext* k);
  /// The signature of a function or kernel: a Function begun, its arguments defined.
  Function* beginFuncHeader(P::FuncOpContext* f);
  Function* beginKernelHeader(P::KernelOpContext* k);
  /// The body of the function begun, then finishFunction.
  void buildFunctionBody(P::RegionContext* r);
  void buildFragment(const std::vector<P::StmtContext*>& stmts);
  void beginFragment(P::StmtContext* first);
  void endFragment();
  /// The function attributes with a meaning, read once into Function::isEntry and kernelKind
  /// (asm/ir/IR.h), for definitions and declarations alike.
  void readFunctionAttrs();
  void finishFunction();
  ValueId define(const std::string& name, Type type, SrcLoc loc);
  std::optional<ValueId> lookup(const std::string& name) const;
  ValueId use(const OperandRef& r);
  Region& cur() { return *regions_.back(); }
  /// Whether `v` is the result of an arith.constant in an enclosing region.
  bool definedByConstant(ValueId v) const;
  std::optional<int64_t> integerConstant(ValueId v) const;
  /// The valid rows and columns pto.alloc_tile gives `tile` as constants (`valid_row = %c1`),
  /// when it does and nothing has changed them since (pto.set_validshape).
  std::optional<std::pair<int64_t, int64_t>> constantAllocValid(ValueId tile) const;
  Op& emit(OpKind kind, SrcLoc loc, std::string name = {});
  /// Emits a helper op (a constant) so that it comes before the op being built, which may
  /// already be in the region when its operands are read.
  Op& emitBefore(OpKind kind, SrcLoc loc, std::string name);
  void addOperand(Op& op, ValueId v, SrcLoc loc);
  void buildRegionBody(P::RegionContext* r, Region& region, bool newScope = true);
  std::vector<ResultName> resultNames(P::ResultListContext* rl);
  /// Defines result values; for a single-result group "%x:1" also binds "%x".
  void defineResults(Op& op, const std::vector<ResultName>& names, const std::vector<Type>& types);
  static std::string opLabel(const Op& op) { return op.name.empty() ? "operation" : op.name; }
  void buildStmt(P::StmtContext* s);
  void buildStmtBody(P::StmtContext* s);
  std::optional<Type> readType(P::TypeContext* t) { return types_.read(t); }
  void dropOpWithRejectedResults();
  bool expectResults(const std::string& name, SrcLoc loc, const std::vector<ResultName>& results,
                     size_t n);
  void buildTerminator(OpKind kind, const std::string& name, SrcLoc loc, Pieces& p,
                       const std::vector<ResultName>& results);
  /// `op %a, %b : A, B`: the annotated types must match the operands' types.
  void checkAnnotatedTypes(Op& op, Pieces& p);
  void buildCall(SrcLoc loc, Pieces& p, const std::vector<ResultName>& results);
  /// A call of `callee` with `args`'s operands and its arrow types as results.
  void buildCallTo(const std::string& callee, SrcLoc calleeLoc, SrcLoc loc, Pieces& args,
                   const std::vector<ResultName>& results);

  // -------- the generic form of the ops that are not tile ops (BuildGenericForm.cpp)
  Pieces customPieces(const std::string& name, const Pieces& p);
  bool buildGenericScalar(const std::string& name, SrcLoc loc, Pieces& p,
                          const std::vector<ResultName>& results);
  void buildGenericBranch(const std::string& name, SrcLoc loc, const Pieces& p, const Pieces& c,
                          const std::vector<ResultName>& results);

  // -------- cf blocks and scf.execute_region (BuildBlocks.cpp)
  /// Whether a region is written as several blocks (a label after a statement, or two labels).
  static bool hasBlocks(P::RegionContext* r);
  /// Builds a region of blocks and appends its structured form to `out` (Structurize.h); the
  /// values its exits pass, or nullopt after an error.
  std::optional<std::vector<ValueId>> buildBlocks(P::RegionContext* r, Region& out,
                                                  bool functionBody,
                                                  const std::vector<Type>& exitTypes);
  ValueId branchCondition(const OperandRef& r);
  void buildBranch(const std::string& name, SrcLoc loc, Pieces& p,
                   const std::vector<ResultName>& results);
  void buildExecuteRegion(P::ScfExecuteContext* e, const std::vector<ResultName>& results);
  CfgBlock* curBlock_ = nullptr; // the block being built (its terminator is a cf branch)

  // -------- generic statements: the per-op dispatch (BuildGeneric.cpp)
  void buildGeneric(P::GenericOpContext* g, const std::vector<ResultName>& results);

  // -------- scf control flow, constants, arith, scalar ops, print (BuildScalar.cpp)
  std::optional<ValueId> operandValue(P::OperandContext* o, const Type& want);
  std::optional<Type> typeGroup(P::TypeGroupContext* g, std::vector<Type>& out);
  void buildFor(P::ScfForContext* f, const std::vector<ResultName>& results);
  void buildIf(P::ScfIfContext* i, const std::vector<ResultName>& results);
  void buildWhile(P::ScfWhileContext* w, const std::vector<ResultName>& results);
  std::optional<ValueId> constant(P::LiteralContext* lit, const Type& type, SrcLoc loc);
  bool checkLiteral(const std::string& text, const Type& type, SrcLoc loc);
  /// Hex literals for float types are bit patterns (0x3F800000 is 1.0f); print them as such.
  /// A decimal integer written for a float type prints as a float literal ("0" -> "0.0"), as
  /// MLIR requires; hex literals for float types are bit patterns and stay as written.
  static std::string normalizeLiteral(const std::string& text, const Type& type);
  /// MLIR-style names for materialized constants: %c16, %c0_i64, %cm1_i32, %cst (the printer
  /// makes repeated names unique).
  static std::string constantName(const std::string& text, const Type& type);
  void buildUnrealizedCast(SrcLoc loc, Pieces& p, const std::vector<ResultName>& results);
  void buildArith(const ArithDef& def, const std::string& name, SrcLoc loc, const std::string& pred,
                  SrcLoc predLoc, Pieces& p, const std::vector<ResultName>& results);
  ValueId scalarOperand(const OperandRef& r, const Type& want);
  ValueId indexOperand(const OperandRef& r);
  ValueId asIndex(ValueId v, SrcLoc loc);
  void buildConstant(SrcLoc loc, Pieces& p, const std::vector<ResultName>& results);
  void buildCondition(SrcLoc loc, Pieces& p, const std::vector<ResultName>& results);
  ValueId constantInt(int64_t v, const Type& type, SrcLoc loc);
  void buildLoadScalar(const std::string& name, SrcLoc loc, Pieces& p,
                       const std::vector<ResultName>& results);
  void buildStoreScalar(const std::string& name, SrcLoc loc, Pieces& p,
                        const std::vector<ResultName>& results);
  void buildCastPtr(const std::string& name, SrcLoc loc, Pieces& p,
                    const std::vector<ResultName>& results);
  void buildAddPtr(const std::string& name, SrcLoc loc, Pieces& p,
                   const std::vector<ResultName>& results);
  void buildBlockInfo(const std::string& name, SrcLoc loc, Pieces& p,
                      const std::vector<ResultName>& results);
  void buildTGetVal(const std::string& name, SrcLoc loc, Pieces& p,
                    const std::vector<ResultName>& results);
  void buildPrint(const std::string& name, SrcLoc loc, Pieces& p,
                  const std::vector<ResultName>& results);

  // -------- tensor views, tile values and their placement (BuildViews.cpp)
  std::optional<Type> singleType(const std::string& name, SrcLoc loc, Pieces& p);
  std::vector<ValueId> indexList(P::AttrValueContext* v, const std::string& what, SrcLoc loc);
  void buildMakeTensorView(const std::string& name, SrcLoc loc, Pieces& p,
                           const std::vector<ResultName>& results);
  void buildPartitionView(const std::string& name, SrcLoc loc, Pieces& p,
                          const std::vector<ResultName>& results);
  void buildMultiTileGet(const std::string& name, SrcLoc loc, Pieces& p,
                         const std::vector<ResultName>& results);
  void buildGetValidShape(const std::string& name, SrcLoc loc, Pieces& p,
                          const std::vector<ResultName>& results);
  void buildGetDim(const std::string& name, SrcLoc loc, Pieces& p,
                   const std::vector<ResultName>& results);
  void buildAllocTile(const std::string& name, SrcLoc loc, Pieces& p,
                      const std::vector<ResultName>& results);
  ValueId keywordValue(const Keyword& kw, const Type& type);
  bool subviewResultType(const std::string& name, TileType& t, const TileType& parent,
                         P::TypeContext* written, bool validClause);
  static TileType parentShaped(const TileType& view, const TileType& parent);
  void buildSubset(const std::string& name, SrcLoc loc, Pieces& p,
                   const std::vector<ResultName>& results);
  void buildBindTile(const std::string& name, SrcLoc loc, Pieces& p,
                     const std::vector<ResultName>& results);
  void buildReshape(const std::string& name, SrcLoc loc, Pieces& p,
                    const std::vector<ResultName>& results);
  void buildSetValidShape(const std::string& name, SrcLoc loc, Pieces& p,
                          const std::vector<ResultName>& results);
  /// Manual placement: `%t2 = pto.tassign %t, %addr : T -> T` (rebinding), `pto.tassign %t,
  /// tile(0x1000)` / `@tile(0x1000)` / `tassign %t, %addr : T, index` (in place).
  void buildTAssign(const std::string& name, SrcLoc loc, Pieces& p,
                    const std::vector<ResultName>& results);
  /// `tile %a, %b : !pto.tile<...> [addr = 0x1000]`: declares tiles (like pto.alloc_tile).
  void buildTileDecl(SrcLoc loc, Pieces& p, const std::vector<ResultName>& results);
  void buildQuotedGeneric(const std::string& name, SrcLoc loc, Pieces& p,
                          const std::vector<ResultName>& results);
  bool loadClausesSupported(const Pieces& p);
  using PtoHandler = void (Builder::*)(const std::string&, SrcLoc, Pieces&,
                                       const std::vector<ResultName>&);
  static const std::map<std::string, PtoHandler, std::less<>>& ptoHandlers();
  void buildPtoOp(const std::string& name, SrcLoc loc, Pieces& p,
                  const std::vector<ResultName>& results);

  // -------- data-moving comm ops: tput / tget and the collectives (BuildComm.cpp)
  enum class CommKind { Put, Get, Broadcast, Gather, Scatter, Reduce };
  struct CommOperands {
    std::string name;
    SrcLoc loc;
    CommKind kind = CommKind::Put;
    bool custom = false; // written as pto.comm.tput(..., buf(...) : ...)
    std::vector<ValueId> values;
    std::vector<SrcLoc> locs;
    std::vector<size_t> views, tiles, group; // indexes into values
    std::optional<isa::AtomicType> atomic;
    std::optional<int64_t> root;
    SrcLoc rootLoc, segmentsLoc;
    std::optional<std::string> reduceOp;
    std::vector<int64_t> segments; // operandSegmentSizes as written
    // One transfer (a put's view, a collective's member) as rows x cols, and the staging
    // tile's valid shape; chunked when the tile is smaller (pto-isa's chunked mode).
    int64_t unitRows = 0, unitCols = 0, tileRows = 0, tileCols = 0;
    bool chunked = false;
  };
  static std::optional<CommKind> commKindOf(std::string_view name);
  void buildComm(const std::string& name, SrcLoc loc, Pieces& p,
                 const std::vector<ResultName>& results);
  /// Uses each operand of a comm op (sync or async) and reads its written type, which must be
  /// the operand's own; appends them to values / locs. False after an error.
  bool readCommOperands(const std::string& name, const std::vector<OperandRef>& refs,
                        const std::vector<P::TypeContext*>& types, std::vector<ValueId>& values,
                        std::vector<SrcLoc>& locs);
  bool readCommAttr(CommOperands& c, P::AttrEntryContext* e);
  bool splitCommOperands(CommOperands& c);
  bool checkComm(CommOperands& c);
  Op& emitCommTileOp(isa::OpId id, SrcLoc loc, std::initializer_list<ValueId> operands);
  void emitCommBarrier(SrcLoc loc);
  void warnRowsPastView(const CommOperands& c);
  std::optional<ValueId> commSlice(const CommOperands& c, ValueId view, SrcLoc viewLoc,
                                   int64_t row0, int64_t col0, int64_t rows, int64_t cols);
  void expandComm(CommOperands& c);
  bool expandCommChunk(const CommOperands& c, int64_t i, int64_t j, int64_t tr, int64_t tc);
  // -------- asynchronous sessions and events (BuildAsyncComm.cpp)
  struct AsyncOperands {
    std::string name;
    SrcLoc loc;
    std::vector<ValueId> values;
    std::vector<SrcLoc> locs;
  };
  static bool isAsyncCommOp(std::string_view name);
  void buildAsyncComm(const std::string& name, SrcLoc loc, Pieces& p,
                      const std::vector<ResultName>& results);
  bool readAsyncAttr(const AsyncOperands& a, P::AttrEntryContext* e, bool session,
                     std::vector<NamedAttr>& attrs);
  bool checkAsyncSession(const AsyncOperands& a);
  bool checkAsyncTransfer(const AsyncOperands& a);
  bool checkAsyncWait(const AsyncOperands& a);
  std::optional<ValueId> asyncSlice(const AsyncOperands& a, size_t k, int64_t off, int64_t len);
  ValueId asyncStageTile(const AsyncOperands& a, isa::DType elem, int64_t len);
  void expandAsyncTransfer(const AsyncOperands& a, Op& op);
  void buildSyncAll(const std::string& name, SrcLoc loc, Pieces& p,
                    const std::vector<ResultName>& results);
  void buildSignal(const std::string& name, SrcLoc loc, Pieces& p,
                   const std::vector<ResultName>& results);
  void buildMemoryFence(const std::string& name, SrcLoc loc, Pieces& p,
                        const std::vector<ResultName>& results);
  void buildPointerCast(const std::string& name, SrcLoc loc, Pieces& p,
                        const std::vector<ResultName>& results);
  void buildGmSubview(SrcLoc loc, ValueId src, Pieces& p, const std::vector<ResultName>& results);
  void buildMemrefSubview(SrcLoc loc, Pieces& p, const std::vector<ResultName>& results);
  void buildMemrefAlloc(SrcLoc loc, Pieces& p, const std::vector<ResultName>& results);
  void buildMemrefDealloc(SrcLoc loc, Pieces& p, const std::vector<ResultName>& results);
  void buildReinterpretCast(SrcLoc loc, Pieces& p, const std::vector<ResultName>& results);
  void buildLocalReinterpret(SrcLoc loc, ValueId src, const Type& declared, Pieces& p,
                             const std::vector<ResultName>& results);
  std::optional<std::vector<int64_t>> constantList(const Keyword& k, const std::string& what);
  ValueId bufferBase(ValueId view, std::vector<ValueId>* carried = nullptr) const;
  // scf.for iter_args that carry a tile view, and their initial values (bufferBase looks through
  // them); a reinterpret_cast that did records the buffer it assumed, which the loop's yield must
  // keep (buildFor: checkCarriedBases).
  std::map<std::pair<const Function*, ValueId>, ValueId> carriedFrom_;
  struct CarriedBase {
    const Function* fn;
    ValueId arg, base;
    SrcLoc loc;
  };
  std::vector<CarriedBase> carriedBases_;
  void checkCarriedBases(const Op& loop);
  bool annotatedAs(ValueId v, const Type& t) const;
  void refuseViewTypes(const std::vector<Type>& types, SrcLoc loc, const char* what);
  ValueId declareFragmentTile(const OperandRef& r, const Type& type);
  ValueId declareFragmentParam(const OperandRef& r, const Type& type);

  // -------- tile ops in every spelling: roles, types, attributes (BuildTileOps.cpp)
  Kind kindOf(const OperandRef& r);
  static bool compatible(Kind k, const isa::Role& role);
  /// Assigns operands to roles in order, skipping optional roles when needed (backtracking).
  static bool matchRoles(const std::vector<const isa::Role*>& roles, const std::vector<Kind>& kinds,
                         size_t ri, size_t oi, std::vector<int>& assign);
  std::string signatureHelp(const isa::OpInfo& info);
  void moveMergeScratch(const isa::OpInfo& info, std::vector<Bound>& bound);
  /// TDIVS with its scalar written before the tile is TDIVS_SF (isa::scalarFirstForm); TGATHER
  /// with a scalar operand is TGATHER_CMP (isa::scalarSecondForm).
  const isa::OpInfo& scalarFirstVariant(const isa::OpInfo& info, Pieces& p, bool ssa);
  /// Whether a bare word in ins() is PTOAS's `fp %scale` naming the op's scaling tile (an error
  /// at the word otherwise).
  bool fpClauseFits(const isa::OpInfo& info, const Pieces& in);
  /// The precisionType attribute (pto-isa's *Algorithm): spelled as PTOAS spells it for the op,
  /// and high_precision on A5 makes the op its high-precision form (isa::highPrecisionForm),
  /// which `info` then names. On A2/A3 pto-isa runs the default algorithm: a warning. False
  /// after a located error (an op without the attribute, or without a high-precision form).
  bool resolvePrecision(const isa::OpInfo*& info, SrcLoc loc, TileAttrs& attrs,
                        const std::vector<Bound>& bound);
  /// The value text the attribute reader leaves until the op is known.
  static constexpr std::string_view kHighPrecision = "high_precision",
                                    kDefaultPrecision = "default";
  void buildTileOp(const isa::OpInfo& info, SrcLoc loc, Pieces& p,
                   const std::vector<ResultName>& results);
  /// Binds `ops` to `roles` in order (matchRoles), each with its annotated type if any; false,
  /// binding nothing, when they do not match.
  bool bindRoles(const isa::OpInfo& info, const std::vector<OperandRef>& ops,
                 const std::vector<const isa::Role*>& roles,
                 const std::vector<std::optional<Type>>& annotations, std::vector<Bound>& bound);
  /// The types of `ts`; `bad` set when one does not read (diagnosed).
  std::vector<std::optional<Type>> readTypeList(const std::vector<P::TypeContext*>& ts, bool& bad);
  /// The DPS form `ins(...) outs(...)`; false when the op is not built (diagnosed).
  bool bindDpsForm(const isa::OpInfo& info, SrcLoc loc, Pieces& p,
                   const std::vector<ResultName>& results, std::vector<Bound>& bound,
                   TileAttrs& attrs);
  /// The PTO-AS form `op %dst, %src...` or the SSA form `%dst = op %src...`; false when the op is
  /// not built (diagnosed).
  bool bindPositionalForm(const isa::OpInfo& info, SrcLoc loc, Pieces& p,
                          const std::vector<ResultName>& results, std::vector<Bound>& bound,
                          TileAttrs& attrs);
  /// MLIR's generic form: operands in `(...)` grouped by `operandSegmentSizes`, the properties
  /// `<{...}>` as attributes, the types of the function type.
  bool bindGeneric(const isa::OpInfo& info, SrcLoc loc, Pieces& p, std::vector<Bound>& bound,
                   TileAttrs& attrs);
  std::string asmSignature(const isa::OpInfo& info);
  void assignPoolTypes(const isa::OpInfo& info, std::vector<Bound>& bound,
                       const std::vector<std::optional<Type>>& pool, SrcLoc);
  void readTileAttrs(P::AttrDictContext* d, TileAttrs& attrs);
  void readHashAttr(P::HashPieceContext* h, TileAttrs& attrs);
  void readAngleAttrs(P::AngleContext* a, TileAttrs& attrs);
  void addTileAttr(const std::string& rawKey, std::optional<std::string> word,
                   const std::string& text, SrcLoc loc, TileAttrs& attrs);
  std::optional<std::string> tileModeText(const std::string& key,
                                          const std::optional<std::string>& word,
                                          const std::string& text, SrcLoc loc, TileModes& modes);
  std::optional<std::string> fixpipeModeText(const std::string& key,
                                             const std::optional<std::string>& word,
                                             const std::string& text, SrcLoc loc, TileModes& modes);
  void finishTileOp(const isa::OpInfo& info, SrcLoc loc, std::vector<Bound>& bound,
                    TileAttrs& attrs, const std::vector<std::pair<std::string, SrcLoc>>& waits,
                    const std::vector<std::pair<std::string, SrcLoc>>& records, SrcLoc typesLoc);
  ValueId literalOperand(const OperandRef& r, const Type& want);
  ValueId resolveNamed(Bound& b, const char* what);
  void checkAnnotation(const Bound& b, ValueId v);
  ValueId resolveTile(Bound& b, const isa::Role& role, SrcLoc typesLoc);
  /// `%view[%i, %j]` as a tload/tstore operand: a partition of the view with the tile's shape.
  ValueId memoryView(const OperandRef& r, const std::vector<Bound>& bound,
                     const std::vector<ValueId>& values, const isa::OpInfo& info);

  // -------- cross-core pipes, reserved buffers (BuildPipes.cpp)
  struct FrontendPipe {
    ValueId pipe = kNoValue;
    int dir = 0; // dir_mask
    SrcLoc loc;
    Op* init = nullptr; // the internal init op it became (its flag_base is set at the end)
  };
  void assignFrontendFlags();
  void buildGmEntryInit(const std::string& name, SrcLoc loc, const std::vector<NamedAttr>& attrs,
                        std::pair<ValueId, SrcLoc> slotView, int64_t dir, int64_t slotSize,
                        int64_t slots, FrontendPipe& fp);
  std::vector<NamedAttr> pipeAttrs(const std::string& name, SrcLoc loc, Pieces& p);
  std::optional<int64_t> pipeSplit(const std::string& name, SrcLoc loc, Pieces& p);
  std::optional<Type> arrowTileType(const std::string& name, SrcLoc loc, Pieces& p);
  void buildReserve(const std::string& name, SrcLoc loc, Pieces& p,
                    const std::vector<ResultName>& results);
  void buildPipeInit(const std::string& name, SrcLoc loc, Pieces& p,
                     const std::vector<ResultName>& results);
  void buildFrontendInit(const std::string& name, SrcLoc loc, Pieces& p,
                         const std::vector<ResultName>& results);
  void buildPipeData(const std::string& name, SrcLoc loc, Pieces& p,
                     const std::vector<ResultName>& results);
  const FrontendPipe* frontendPipeFor(const std::string& name, SrcLoc loc, Pieces& p, bool c2v);
  void buildFrontendEntry(const std::string& name, SrcLoc loc, Pieces& p,
                          const std::vector<ResultName>& results, const FrontendPipe& fp,
                          int64_t split);
  ValueId declareGlobal(const std::string& name, SrcLoc loc, Pieces& p,
                        const std::vector<ResultName>& results);
  std::pair<ValueId, SrcLoc> soleOperand(const std::string& name, SrcLoc loc, Pieces& p,
                                         const std::string& form);
  void emitPipeData(const std::string& name, SrcLoc loc, ValueId item, SrcLoc itemLoc, ValueId pipe,
                    int64_t split);
  void buildDeclareGlobal(const std::string& name, SrcLoc loc, Pieces& p,
                          const std::vector<ResultName>& results);
  std::optional<Type> arrowViewType(const std::string& name, SrcLoc loc, Pieces& p);
  void buildTAllocSlot(const std::string& name, SrcLoc loc, Pieces& p,
                       const std::vector<ResultName>& results);
  void buildFrontendData(const std::string& name, SrcLoc loc, Pieces& p,
                         const std::vector<ResultName>& results);
  void buildDeclareTile(const std::string& name, SrcLoc loc, Pieces& p,
                        const std::vector<ResultName>& results);
  void buildSetFfts(const std::string& name, SrcLoc loc, Pieces& p,
                    const std::vector<ResultName>& results);
  std::map<const Function*, std::map<int64_t, FrontendPipe>> frontendPipes_; // by `id`

  // -------- sync: flags, barriers, event id arrays, event chains (BuildSync.cpp)
  void buildEventIdArray(const std::string& name, SrcLoc loc, Pieces& p,
                         const std::vector<ResultName>& results);
  std::vector<SyncItem> syncItems(P::BracketContext* b);
  std::optional<isa::Pipe> syncPipe(const SyncItem& it, bool highLevel);
  void buildSync(const std::string& name, SrcLoc loc, Pieces& p,
                 const std::vector<ResultName>& results);
  void buildCoreSync(const std::string& name, SrcLoc loc, Pieces& p,
                     const std::vector<ResultName>& results);
  void buildBarrier(const std::string& name, SrcLoc loc, Pieces& p,
                    const std::vector<ResultName>& results);
  bool tokenItems(const std::string& name, SrcLoc loc, Pieces& p, SyncItem& pipeItem,
                  SyncItem& idItem, bool& pipeWord);
  void buildCrossBlockFlag(const std::string& name, SrcLoc loc, Pieces& p,
                           const std::vector<ResultName>& results);
  void buildTSync(const std::string& name, SrcLoc loc, Pieces& p,
                  const std::vector<ResultName>& results);
  /// Gives the chained events their pipes: a record takes the pipe of the op it follows, a
  /// wait the pipe of the op it precedes. Same-pipe chains become a pipe barrier.
  void resolveEvents();
  isa::Pipe neighbourPipe(const EventSite& site, int dir);
  isa::Pipe tilePipe(const Op& op) { return ir::pipeOf(*fn_, op, arch()); }
  void erase(const EventSite& site);

  // ------------------------------------------------------------ state
  const SourceFile& src_;
  DiagEngine& diags_;
  TypeReader types_;
  // bind_tile results: the type a use may annotate them with (PTOAS writes the buffer's memref
  // type, which does not carry the bound layout), by function and value.
  std::map<std::pair<const Function*, ValueId>, Type> boundTileAnnotations_;
  std::optional<isa::Arch> archFlag_;
  std::unique_ptr<Module> mod_;
  Function* fn_ = nullptr;
  /// Set by beginFunction for a redeclaration: the earlier signature, where it was written, and
  /// (for a declaration after the definition) the definition.
  std::optional<Declared> redeclared_;
  Function* definedEarlier_ = nullptr;
  std::vector<std::unordered_map<std::string, ValueId>> scopes_;
  std::vector<Region*> regions_;
  Op* building_ = nullptr;
  bool resultsRejected_ = false; // this statement's result names did not match its op
  uint32_t curFrontLoc_ = 0; // the debug location of the statement being built (Module::frontLocs)
  /// Records a `loc(...)` token's text (read once the whole file is parsed, Locations.h).
  uint32_t recordLoc(antlr4::tree::TerminalNode* loc);
  std::optional<Type> viewAnnotation_;
  struct Placement {
    int64_t addr;
    SrcLoc loc;
  };
  std::map<std::string, Placement> pendingPlacements_;
  std::map<std::string, EventUses> events_;
  std::vector<Op*> pendingEventOps_;
  std::set<std::string> ssaResultNames_;
  // Functions, kernels and modules (their attributes) built while parsing.
  std::set<const antlr4::ParserRuleContext*> streamed_;
  CfgBlock* bodyEnclosingBlock_ = nullptr; // curBlock_ outside the body being streamed
  bool fragmentOpen_ = false; // statements streamed into the fragment, which finish() ends
};

} // namespace pto::as::detail
