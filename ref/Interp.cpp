// The reference interpreter: kernel binding, control flow and scalar ops (docs/runtime.md,
// "The reference interpreter"). Tiles and views are in ref/Tiles.cpp.
#include "ref/Interp.h"

#include "support/Numbers.h"

#include "ref/Exec.h"
#include "ref/Scalar.h"

#include <algorithm>
#include <cstring>

namespace pto::ref {

using ir::Op;
using ir::OpKind;
using ir::TypeKind;

// ------------------------------------------------------------------ kernels and binding
std::vector<std::string> kernelNames(const ir::Module& m) {
  std::vector<std::string> marked, defined;
  for (const auto& f : m.functions) {
    if (f->isDeclaration) continue;
    if (f->isEntry || f->isFragment) marked.push_back(f->name);
    if (!f->isPrivate || f->isFragment) defined.push_back(f->name);
  }
  size_t definitions = 0;
  for (const auto& f : m.functions)
    definitions += !f->isDeclaration;
  if (marked.empty() && definitions == 1 && defined.size() == 1) return defined;
  return marked;
}

rt::Result<Kernel> Kernel::find(const ir::Module& m, isa::Arch arch, std::string_view name) {
  for (const auto& f : m.functions) {
    if (f->name != name || f->isDeclaration) continue;
    Kernel k;
    k.mod_ = &m;
    k.fn_ = f.get();
    k.arch_ = arch;
    for (ir::ValueId a : f->body.args) {
      const ir::Type& t = f->type(a);
      rt::Module::ParamInfo p;
      p.name = f->value(a).name;
      p.dtype = t.elem;
      switch (t.kind) {
      case TypeKind::Ptr:
        p.kind = rt::Module::ParamInfo::Kind::Pointer;
        break;
      case TypeKind::PartView: // a partition passed in, of static shape: a buffer of its own
        if (std::find(t.shape.begin(), t.shape.end(), ir::kDynamic) != t.shape.end())
          return rt::Error{m.fileName + ":" + std::to_string(f->value(a).loc.line) + ":" +
                           std::to_string(f->value(a).loc.col) +
                           ": error: a partition parameter needs a static shape, found " +
                           ir::toString(t)};
        [[fallthrough]];
      case TypeKind::TensorView:
        p.kind = rt::Module::ParamInfo::Kind::TensorView;
        p.shape = t.shape;
        break;
      case TypeKind::Index:
        p.kind = rt::Module::ParamInfo::Kind::Index;
        p.dtype = isa::DType::I64;
        break;
      case TypeKind::Scalar:
        p.kind = rt::Module::ParamInfo::Kind::Scalar;
        break;
      default:
        return rt::Error{m.fileName + ":" + std::to_string(f->value(a).loc.line) + ":" +
                         std::to_string(f->value(a).loc.col) +
                         ": error: a kernel parameter of type " + ir::toString(t) +
                         " cannot be bound to a host buffer or scalar"};
      }
      k.params_.push_back(p);
    }
    k.bindings_.resize(k.params_.size());
    return k;
  }
  std::string names;
  for (const std::string& n : kernelNames(m))
    names += (names.empty() ? "" : ", ") + n;
  return rt::Error{m.fileName + ": error: no kernel '" + std::string(name) +
                   "' (entries: " + names + ")"};
}

std::string_view Kernel::name() const {
  return fn_->name;
}

std::optional<size_t> Kernel::index(std::string_view param, rt::Status& err) const {
  if (!param.empty() && param[0] == '%') param.remove_prefix(1);
  for (size_t i = 0; i < params_.size(); ++i)
    if (params_[i].name == param) return i;
  std::string names;
  for (const auto& p : params_)
    names += (names.empty() ? "%" : ", %") + p.name;
  err = rt::Error{"error: kernel @" + fn_->name + " has no parameter '%" + std::string(param) +
                  "' (parameters: " + names + ")"};
  return std::nullopt;
}

rt::Status Kernel::bind(std::string_view param, rt::Tensor* buffer) {
  rt::Status err;
  auto i = index(param, err);
  if (!i) return err;
  const auto& p = params_[*i];
  using K = rt::Module::ParamInfo::Kind;
  if (p.kind != K::Pointer && p.kind != K::TensorView)
    return rt::Error{"error: parameter %" + p.name + " of @" + fn_->name +
                     " is a scalar, not a buffer"};
  if (isa::bitWidth(buffer->dtype) != isa::bitWidth(p.dtype))
    return rt::Error{"error: parameter %" + p.name + " has element type " +
                     std::string(isa::spelling(p.dtype)) + " but the buffer holds " +
                     std::string(isa::spelling(buffer->dtype))};
  if (p.kind == K::TensorView) {
    // In exact arithmetic: a shape of more elements than int64 holds needs more than any buffer.
    int64_t need = 1;
    bool huge = false;
    for (int64_t d : p.shape) {
      auto m = obj::checkedMul(need, d);
      huge = huge || !m;
      need = m.value_or(need);
    }
    if (huge)
      return rt::Error{"error: parameter %" + p.name +
                       " is a tensor_view of more elements than any buffer holds"};
    if (buffer->numel() < need)
      return rt::Error{"error: parameter %" + p.name + " is a tensor_view of " +
                       std::to_string(need) + " elements but the buffer has " +
                       std::to_string(buffer->numel())};
  }
  bindings_[*i].buffer = buffer;
  return std::nullopt;
}

rt::Status Kernel::bindScalarBits(std::string_view param, uint64_t bits) {
  rt::Status err;
  auto i = index(param, err);
  if (!i) return err;
  const auto& p = params_[*i];
  using K = rt::Module::ParamInfo::Kind;
  if (p.kind == K::Pointer || p.kind == K::TensorView)
    return rt::Error{"error: parameter %" + p.name + " of @" + fn_->name +
                     " is a buffer, not a scalar"};
  bindings_[*i].bits = p.kind == K::Index ? bits : truncBits(bits, isa::bitWidth(p.dtype));
  return std::nullopt;
}

rt::Status Kernel::bindScalar(std::string_view param, int64_t value) {
  rt::Status err;
  auto i = index(param, err);
  if (!i) return err;
  const auto& p = params_[*i];
  if (p.kind == rt::Module::ParamInfo::Kind::Scalar && isScalarFloat(p.dtype))
    return bindScalar(param, static_cast<double>(value));
  return bindScalarBits(param, static_cast<uint64_t>(value));
}

rt::Status Kernel::bindScalar(std::string_view param, double value) {
  rt::Status err;
  auto i = index(param, err);
  if (!i) return err;
  const auto& p = params_[*i];
  if (p.kind == rt::Module::ParamInfo::Kind::Scalar && isScalarFloat(p.dtype))
    return bindScalarBits(param, doubleToFloat(p.dtype, value));
  return bindScalarBits(param, static_cast<uint64_t>(static_cast<int64_t>(value)));
}

rt::Status Kernel::run(const Options& opts, Stats* stats) const {
  std::vector<rt::GmRegion> regions(params_.size());
  std::vector<Val> args(params_.size());
  using K = rt::Module::ParamInfo::Kind;
  for (size_t i = 0; i < params_.size(); ++i) {
    const auto& p = params_[i];
    regions[i].name = p.name;
    regions[i].dtype = p.dtype;
    if (p.kind == K::Pointer || p.kind == K::TensorView) {
      if (!bindings_[i].buffer)
        return rt::Error{"error: parameter %" + p.name + " of @" + fn_->name + " is not bound"};
      regions[i].data = bindings_[i].buffer->data.data();
      regions[i].size = bindings_[i].buffer->data.size();
      const uint64_t base = (static_cast<uint64_t>(i) + 1) << rt::kRegionShift;
      if (p.kind == K::Pointer) {
        args[i] = base;
      } else {
        ViewVal v;
        v.elem = p.dtype;
        v.base = base;
        v.shape = p.shape;
        v.strides.assign(p.shape.size(), 1);
        for (size_t d = p.shape.size(); d-- > 1;)
          v.strides[d - 1] = v.strides[d] * p.shape[d];
        args[i] = v;
      }
    } else {
      if (!bindings_[i].bits)
        return rt::Error{"error: parameter %" + p.name + " of @" + fn_->name + " is not bound"};
      args[i] = *bindings_[i].bits;
    }
  }
  const uint32_t blocks = std::max<uint32_t>(1, opts.blocks);
  Machine m(*mod_, arch_, regions, opts.maxOps);
  m.cancel = opts.cancel;
  for (uint32_t b = 0; b < blocks; ++b) {
    auto fail = m.runBlock(*fn_, args, b, blocks);
    if (stats) {
      stats->tileOps = m.tileOps;
      stats->scalarOps = m.scalarOps;
      stats->output = m.output();
    }
    if (fail) {
      std::string msg = mod_->fileName;
      if (fail->loc.valid())
        msg += ":" + std::to_string(fail->loc.line) + ":" + std::to_string(fail->loc.col);
      msg += ": runtime error: " + fail->message;
      if (blocks > 1) msg += " (block " + std::to_string(b) + ")";
      return rt::Error{msg};
    }
  }
  return std::nullopt;
}

// ------------------------------------------------------------------ the machine
Machine::Machine(const ir::Module& m, isa::Arch arch, const std::vector<rt::GmRegion>& gm,
                 uint64_t maxOps)
    : mod_(m), arch_(arch), maxOps_(maxOps) {
  // Each alloc_tile gets storage of its own above the physical buffer (explicit addresses stay
  // inside it): every buffer is its capacity plus the sum of the module's automatic tiles.
  std::array<uint64_t, 7> extra{};
  for (const auto& f : m.functions) {
    ir::walk(f->body, [&](const Op& op) {
      for (ir::ValueId r : op.results)
        defs_[{f.get(), r}] = &op;
      if (op.kind == OpKind::AllocTile && !op.results.empty()) {
        const ir::TileType& t = f->type(op.results[0]).tile;
        extra[static_cast<unsigned>(t.loc)] += (t.byteSize() + 63) / 64 * 64;
      }
    });
  }
  core_.gm = &gm;
  core_.arch = arch;
  for (unsigned l = 0; l < 7; ++l) {
    const uint64_t capacity =
        std::max<uint32_t>(isa::buffer(arch, static_cast<isa::Loc>(l)).capacity, 32);
    core_.allocateBuffer(l, (capacity + 63) / 64 * 64 + extra[l]);
    nextFree_[l] = (capacity + 63) / 64 * 64;
  }
}

/// pto.sync.set/wait and pto.get_buf/rls_buf: the runtime's rule (rt::coreSyncStep) on this
/// core's flags and tokens.
std::optional<Failure> Machine::coreSync(Frame& f, const Op& op) {
  rt::SyncInst s;
  s.kind = op.named == ir::NamedOp::SyncSet    ? isa::enc::ExtCtl::SYNC_SET
           : op.named == ir::NamedOp::SyncWait ? isa::enc::ExtCtl::SYNC_WAIT
           : op.named == ir::NamedOp::GetBuf   ? isa::enc::ExtCtl::GET_BUF
                                               : isa::enc::ExtCtl::RLS_BUF;
  s.src = s.dst = op.srcPipe;
  s.event.present = true;
  s.event.reg = 0; // the zero register: the id is the immediate
  s.event.imm = static_cast<uint32_t>(op.event->kind == ir::EventRef::Kind::Dynamic
                                          ? scalar(f, op.operands[0])
                                          : static_cast<uint64_t>(op.event->id));
  if (auto e = rt::coreSyncStep(core_, s)) return Failure{op.loc, *e};
  return std::nullopt;
}

/// pto.comm.tnotify / twait / ttest on a one-element i32 signal (docs/abi.md, "Signals"). This
/// interpreter runs one block at a time, so a twait whose condition does not hold can never be
/// released: it is reported at once rather than spun on.
std::optional<Failure> Machine::signal(Frame& f, const Op& op) {
  if (op.named == ir::NamedOp::SyncAll) {
    if (core_.blockNum > 1)
      return Failure{op.loc, "'pto.syncall' waits for every block, and the reference "
                             "interpreter runs one block at a time: a deadlock"};
    return std::nullopt; // one block of one rank: everyone has arrived
  }
  const ViewVal& v = std::get<ViewVal>(f.v[op.operands[0]]);
  const bool notify = op.named == ir::NamedOp::Notify;
  uint8_t* p = core_.translate(v.base, 4, "signal", notify);
  if (!p) {
    Failure e{op.loc, core_.error};
    core_.error.clear();
    return e;
  }
  int32_t sig;
  std::memcpy(&sig, p, 4);
  const auto value = static_cast<int32_t>(scalar(f, op.operands[1]));
  if (notify) {
    const int32_t next =
        op.ints[0] == 1
            ? static_cast<int32_t>(static_cast<uint32_t>(sig) + static_cast<uint32_t>(value))
            : value;
    std::memcpy(p, &next, 4);
    return std::nullopt;
  }
  bool holds = false;
  switch (static_cast<isa::CmpMode>(op.ints[0])) {
  case isa::CmpMode::EQ:
    holds = sig == value;
    break;
  case isa::CmpMode::NE:
    holds = sig != value;
    break;
  case isa::CmpMode::LT:
    holds = sig < value;
    break;
  case isa::CmpMode::LE:
    holds = sig <= value;
    break;
  case isa::CmpMode::GT:
    holds = sig > value;
    break;
  case isa::CmpMode::GE:
    holds = sig >= value;
    break;
  }
  if (op.named == ir::NamedOp::Test) {
    f.v[op.results[0]] = static_cast<uint64_t>(holds);
    return std::nullopt;
  }
  if (!holds)
    return Failure{op.loc, "'pto.comm.twait' waits for the signal (now " + std::to_string(sig) +
                               ") to be " +
                               std::string(isa::spelling(static_cast<isa::CmpMode>(op.ints[0]))) +
                               " " + std::to_string(value) +
                               ", and nothing else runs in the reference interpreter (one block "
                               "at a time) to change it: a deadlock"};
  return std::nullopt;
}

std::optional<Failure> Machine::runBlock(const ir::Function& fn, std::vector<Val> args,
                                         uint32_t blockIdx, uint32_t blockNum) {
  core_.blockIdx = blockIdx;
  core_.blockNum = blockNum;
  core_.r.fill(0);
  core_.crossFlags.fill(0);
  core_.bufTokens.fill(0);
  core_.error.clear();
  for (unsigned l = 0; l < 7; ++l)
    std::memset(core_.buf[l], 0, core_.bufSize[l]);
  std::vector<Val> results;
  return call(fn, std::move(args), results, fn.loc);
}

std::optional<Failure> Machine::countOp(const Op& op) {
  ++scalarOps;
  if (maxOps_ && scalarOps + tileOps > maxOps_)
    return Failure{op.loc,
                   "the kernel ran more than " + std::to_string(maxOps_) +
                       " operations (an endless loop? raise the limit with --max-instructions)"};
  if (cancel && cancel->load(std::memory_order_relaxed))
    return Failure{op.loc, "the run was cancelled"};
  return std::nullopt;
}

std::optional<Failure> Machine::call(const ir::Function& fn, std::vector<Val> args,
                                     std::vector<Val>& results, ir::SrcLoc at) {
  constexpr unsigned kMaxDepth = 256;
  if (fn.isDeclaration)
    return Failure{at, "call to @" + fn.name + ", which is declared but has no body"};
  if (depth_ >= kMaxDepth) return Failure{at, "call depth exceeds " + std::to_string(kMaxDepth)};
  Frame f{&fn, std::vector<Val>(fn.values.size())};
  for (size_t i = 0; i < args.size() && i < fn.body.args.size(); ++i)
    f.v[fn.body.args[i]] = std::move(args[i]);
  ++depth_;
  const Op* term = nullptr;
  Step s = runRegion(f, fn.body, &term);
  --depth_;
  if (auto* fail = std::get_if<Failure>(&s)) return *fail;
  results.clear();
  if (term && term->kind == OpKind::Return)
    for (ir::ValueId v : term->operands)
      results.push_back(f.v[v]);
  return std::nullopt;
}

Machine::Step Machine::runRegion(Frame& f, const ir::Region& r, const Op** term) {
  *term = nullptr;
  for (const auto& op : r.ops) {
    if (op->kind == OpKind::Yield || op->kind == OpKind::Condition || op->kind == OpKind::Return) {
      *term = op.get();
      return op->kind == OpKind::Return ? Flow::Return : Flow::Next;
    }
    Step s = runOp(f, *op, term);
    if (!std::holds_alternative<Flow>(s) || std::get<Flow>(s) == Flow::Return) return s;
  }
  return Flow::Next;
}

Machine::Step Machine::runOp(Frame& f, const Op& op, const Op** term) {
  if (auto e = countOp(op)) return *e;
  switch (op.kind) {
  case OpKind::Constant: {
    // Integers (and hex patterns) wrap to their type's width; floats and lanes are exact.
    const ir::ConstantValue& c = op.constant;
    const ir::Type& t = f.fn->type(op.results[0]);
    if (c.kind == ir::ConstantValue::Kind::None) {
      const ir::NamedAttr* a = op.attr("value");
      return Failure{op.loc, "the constant '" + (a ? a->value : std::string()) +
                                 "' is not supported by the reference interpreter"};
    }
    const bool wraps =
        c.kind == ir::ConstantValue::Kind::Int || c.kind == ir::ConstantValue::Kind::Bool;
    f.v[op.results[0]] =
        wraps ? truncBits(c.bits, t.kind == TypeKind::Index ? 64 : intWidth(t.elem)) : c.bits;
    return Flow::Next;
  }
  case OpKind::Arith:
    if (auto e = arith(f, op)) return *e;
    return Flow::Next;
  case OpKind::For:
  case OpKind::If:
  case OpKind::While:
  case OpKind::Section:
  case OpKind::Comm:
  case OpKind::AsyncComm:
    return structured(f, op);
  case OpKind::Call: {
    const ir::Function* callee = nullptr;
    std::string name = op.name[0] == '@' ? op.name.substr(1) : op.name;
    for (const auto& g : mod_.functions)
      if (g->name == name) callee = g.get();
    if (!callee) return Failure{op.loc, "call to @" + name + ", which the module does not define"};
    std::vector<Val> args, results;
    for (ir::ValueId v : op.operands)
      args.push_back(f.v[v]);
    if (auto e = call(*callee, std::move(args), results, op.loc)) return *e;
    for (size_t i = 0; i < op.results.size() && i < results.size(); ++i)
      f.v[op.results[i]] = results[i];
    return Flow::Next;
  }
  case OpKind::Return:
  case OpKind::Yield:
  case OpKind::Condition:
    *term = &op;
    return Flow::Return;
  case OpKind::BlockInfo: {
    const uint64_t v = op.named == ir::NamedOp::GetBlockIdx      ? core_.blockIdx
                       : op.named == ir::NamedOp::GetBlockNum    ? core_.blockNum
                       : op.named == ir::NamedOp::GetSubblockIdx ? 0
                                                                 : 1;
    f.v[op.results[0]] = v;
    return Flow::Next;
  }
  case OpKind::DeclareEventIdArray: {
    // An event-id array or a local array (one slot per element, its dimensions row-major).
    int64_t n = 1;
    for (int64_t d : f.fn->type(op.results[0]).shape)
      n *= std::max<int64_t>(d, 0);
    f.v[op.results[0]] = std::make_shared<std::vector<uint64_t>>(static_cast<size_t>(n), 0);
    return Flow::Next;
  }
  case OpKind::EventIdArrayGet:
  case OpKind::EventIdArraySet: {
    auto& arr = *std::get<EventArray>(f.v[op.operands[0]]);
    const ir::Type& at = f.fn->type(op.operands[0]);
    const bool set = op.kind == OpKind::EventIdArraySet;
    uint64_t i = 0;
    for (size_t k = 0; k < at.shape.size(); ++k) {
      const uint64_t ik = scalar(f, op.operands[1 + k]);
      if (ik >= static_cast<uint64_t>(at.shape[k]))
        return Failure{op.loc, std::string(at.localArray ? "local" : "event id") + " array index " +
                                   std::to_string(ik) + " is out of range"};
      i = i * static_cast<uint64_t>(at.shape[k]) + ik;
    }
    if (set)
      arr[i] = scalar(f, op.operands.back());
    else
      f.v[op.results[0]] = arr[i];
    return Flow::Next;
  }
  case OpKind::SetFlag:
  case OpKind::WaitFlag:
  case OpKind::Barrier:
    return Flow::Next; // program order is the model
  case OpKind::CoreSync:
    if (auto e = coreSync(f, op)) return *e;
    return Flow::Next;
  case OpKind::Signal:
    if (auto e = signal(f, op)) return *e;
    return Flow::Next;
  case OpKind::Print:
    if (op.named == ir::NamedOp::Trap) return Failure{op.loc, "pto.trap executed"};
    printScalar(f, op);
    return Flow::Next;
  case OpKind::TGetVal:
    if (auto e = tileGetVal(f, op)) return *e;
    return Flow::Next;
  case OpKind::AllocTile:
    if (auto e = tileAlloc(f, op)) return *e;
    return Flow::Next;
  case OpKind::TileOp:
    if (auto e = tileOp(f, op)) return *e;
    return Flow::Next;
  default:
    if (auto e = viewOp(f, op)) return *e;
    return Flow::Next;
  }
}

// ------------------------------------------------------------------ structured control flow
Machine::Step Machine::structured(Frame& f, const Op& op) {
  const Op* term = nullptr;
  auto assign = [&](const std::vector<ir::ValueId>& dst, const std::vector<Val>& src) {
    for (size_t i = 0; i < dst.size() && i < src.size(); ++i)
      f.v[dst[i]] = src[i];
  };
  auto values = [&](const std::vector<ir::ValueId>& ids, size_t from = 0) {
    std::vector<Val> out;
    for (size_t i = from; i < ids.size(); ++i)
      out.push_back(f.v[ids[i]]);
    return out;
  };
  switch (op.kind) {
  case OpKind::Section:
  case OpKind::Comm: // a put, get or collective: its TLOAD / TSTORE steps
    return runRegion(f, op.regions[0], &term);
  case OpKind::AsyncComm: // a put's or get's copy, complete when issued: a wait or test is true
    if (op.name.ends_with("_async_event")) f.v[op.results[0]] = Val{uint64_t{1}};
    if (op.regions.empty()) return Flow::Next;
    return runRegion(f, op.regions[0], &term);
  case OpKind::If: {
    const bool c = scalar(f, op.operands[0]) & 1;
    const ir::Region& r = op.regions[c ? 0 : 1];
    if (!c && (op.regions.size() < 2 || op.regions[1].ops.empty()))
      return Flow::Next; // no else: no results
    Step s = runRegion(f, r, &term);
    if (!std::holds_alternative<Flow>(s) || std::get<Flow>(s) == Flow::Return) return s;
    if (term) assign(op.results, values(term->operands));
    return Flow::Next;
  }
  case OpKind::For: {
    const ir::Region& body = op.regions[0];
    const ir::Type& ivType = f.fn->type(body.args[0]);
    const unsigned w = ivType.kind == TypeKind::Index ? 64 : isa::bitWidth(ivType.elem);
    const int64_t lb = signedValue(scalar(f, op.operands[0]), w),
                  ub = signedValue(scalar(f, op.operands[1]), w),
                  step = signedValue(scalar(f, op.operands[2]), w);
    // As the compiled loop runs it (asm/codegen lowerFor): leave when iv >= ub (signed, 64
    // bits), else the body, then iv += step in 64-bit two's complement. A loop that does not
    // run has any step (10 to 0 step -1: no trip, as on cpu and npu); one that would run with
    // a step that is not positive is an error here (MLIR requires a positive step; compiled
    // code would not end). An index iv that overflows wraps and goes on, as the core's does
    // (until the --max-instructions budget); narrower ivs cannot overflow 64 bits.
    if (step <= 0 && lb < ub)
      return Failure{op.loc, "scf.for step " + std::to_string(step) + " is not positive"};
    std::vector<Val> iter = values(op.operands, 3);
    for (int64_t iv = lb; iv < ub;) {
      f.v[body.args[0]] = truncBits(static_cast<uint64_t>(iv), w);
      assign(std::vector<ir::ValueId>(body.args.begin() + 1, body.args.end()), iter);
      Step s = runRegion(f, body, &term);
      if (!std::holds_alternative<Flow>(s) || std::get<Flow>(s) == Flow::Return) return s;
      if (term) iter = values(term->operands);
      iv = static_cast<int64_t>(static_cast<uint64_t>(iv) + static_cast<uint64_t>(step));
      if (auto e = countOp(op)) return *e;
    }
    assign(op.results, iter);
    return Flow::Next;
  }
  case OpKind::While: {
    std::vector<Val> carried = values(op.operands);
    for (;;) {
      assign(op.regions[0].args, carried);
      Step s = runRegion(f, op.regions[0], &term);
      if (!std::holds_alternative<Flow>(s) || std::get<Flow>(s) == Flow::Return) return s;
      if (!term || term->kind != OpKind::Condition)
        return Failure{op.loc, "the before region of scf.while does not end with scf.condition"};
      const bool c = scalar(f, term->operands[0]) & 1;
      std::vector<Val> passed = values(term->operands, 1);
      if (!c) {
        assign(op.results, passed);
        return Flow::Next;
      }
      assign(op.regions[1].args, passed);
      s = runRegion(f, op.regions[1], &term);
      if (!std::holds_alternative<Flow>(s) || std::get<Flow>(s) == Flow::Return) return s;
      carried = term ? values(term->operands) : std::vector<Val>{};
      if (auto e = countOp(op)) return *e;
    }
  }
  default:
    return Failure{op.loc, "'" + op.name + "' is not supported by the reference interpreter"};
  }
}

// ------------------------------------------------------------------ arith
std::optional<Failure> Machine::arith(Frame& f, const Op& op) {
  using ir::ArithOp;
  const ArithOp arith = op.arith;
  const ir::Type& rt = f.fn->type(op.results[0]);
  auto widthOf = [](const ir::Type& t) {
    return t.kind == TypeKind::Index ? 64u : isa::bitWidth(t.elem);
  };
  auto unsupported = [&](const std::string& why) {
    return Failure{op.loc,
                   "'" + op.name + "'" + why + " is not supported by the reference interpreter"};
  };
  const ir::Type& t0 = f.fn->type(op.operands[0]);
  uint64_t& out = std::get<uint64_t>(f.v[op.results[0]] = uint64_t{0});
  const uint64_t a = scalar(f, op.operands[0]);
  const uint64_t b = op.operands.size() > 1 && std::holds_alternative<uint64_t>(f.v[op.operands[1]])
                         ? scalar(f, op.operands[1])
                         : 0;
  if (arith == ArithOp::Select) {
    // select may pick any kind of value (tiles and views too).
    f.v[op.results[0]] = (a & 1) ? f.v[op.operands[1]] : f.v[op.operands[2]];
    return std::nullopt;
  }
  if (arith == ArithOp::CmpI || arith == ArithOp::CmpF) {
    const ir::CmpPredicate pred = op.predicate;
    auto r = arith == ArithOp::CmpI
                 ? intCompare(pred, a, b, widthOf(t0))
                 : (isScalarFloat(t0.elem) ? floatCompare(pred, t0.elem, a, b) : std::nullopt);
    if (!r)
      return unsupported(" with predicate '" + std::string(ir::spelling(pred)) + "' on " +
                         ir::toString(t0));
    out = *r;
    return std::nullopt;
  }
  if (arith == ArithOp::NegF) {
    if (!isScalarFloat(rt.elem)) return unsupported(" on " + ir::toString(rt));
    out = a ^ (uint64_t{1} << (isa::bitWidth(rt.elem) - 1));
    return std::nullopt;
  }
  if (auto r =
          rt.isIntLike() && t0.isIntLike() ? intBinary(arith, a, b, widthOf(rt)) : std::nullopt) {
    out = *r;
    return std::nullopt;
  }
  if (rt.isFloatScalar() && isScalarFloat(rt.elem) && op.operands.size() == 2) {
    if (arith == ArithOp::RemF) return unsupported("");
    if (auto r = floatBinary(arith, rt.elem, a, b)) {
      out = *r;
      return std::nullopt;
    }
  }
  // Casts.
  const unsigned wi = t0.isIntLike() ? widthOf(t0) : 0, wo = rt.isIntLike() ? widthOf(rt) : 0;
  if (arith == ArithOp::IndexCast || arith == ArithOp::ExtSI || arith == ArithOp::TruncI) {
    if (!wi || !wo) return unsupported(" on " + ir::toString(t0));
    out = truncBits(static_cast<uint64_t>(signedValue(a, wi)), wo);
    return std::nullopt;
  }
  if (arith == ArithOp::IndexCastUI || arith == ArithOp::ExtUI) {
    if (!wi || !wo) return unsupported(" on " + ir::toString(t0));
    out = truncBits(truncBits(a, wi), wo);
    return std::nullopt;
  }
  if (arith == ArithOp::Bitcast) {
    // An index and a pointer (pto.castptr) are 64-bit whatever their element type.
    out = truncBits(
        a, rt.kind == TypeKind::Index || rt.kind == TypeKind::Ptr ? 64 : isa::bitWidth(rt.elem));
    return std::nullopt;
  }
  if (arith == ArithOp::SIToFP || arith == ArithOp::UIToFP) {
    if (!wi || !isScalarFloat(rt.elem))
      return unsupported(" from " + ir::toString(t0) + " to " + ir::toString(rt));
    const uint64_t v =
        arith == ArithOp::SIToFP ? static_cast<uint64_t>(signedValue(a, wi)) : truncBits(a, wi);
    out = intToFloat(rt.elem, v, arith == ArithOp::SIToFP);
    return std::nullopt;
  }
  if (arith == ArithOp::FPToSI || arith == ArithOp::FPToUI) {
    if (!wo || !isScalarFloat(t0.elem))
      return unsupported(" from " + ir::toString(t0) + " to " + ir::toString(rt));
    out = floatToInt(t0.elem, a, wo, arith == ArithOp::FPToSI);
    return std::nullopt;
  }
  if (arith == ArithOp::ExtF || arith == ArithOp::TruncF) {
    if (!isScalarFloat(t0.elem) || !isScalarFloat(rt.elem))
      return unsupported(" from " + ir::toString(t0) + " to " + ir::toString(rt));
    out = doubleToFloat(rt.elem, floatToDouble(t0.elem, a)); // extf is exact; truncf rounds once
    return std::nullopt;
  }
  return unsupported(" on " + ir::toString(rt));
}

} // namespace pto::ref
