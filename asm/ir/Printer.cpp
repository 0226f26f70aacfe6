// The Kernel IR's text form (print): the one printer behind --emit=ir, the round trip and the
// tests. Split from IR.cpp, which keeps the types, attributes and queries.
#include "asm/ir/IR.h"

#include "isa/Pipes.h"
#include "support/Text.h"
#include <cctype>
#include <map>
#include <set>
#include <sstream>

namespace pto::ir {

namespace {

class Printer {
public:
  std::string module(const Module& m) {
    mod_ = &m;
    out_ << "module";
    if (!m.attrs.empty()) out_ << " attributes " << attrDict(m.attrs);
    out_ << " {\n";
    for (const auto& f : m.functions)
      function(*f);
    out_ << "}" << loc(m.frontLoc) << "\n";
    // The aliases after the module, as MLIR prints them; each location keeps its text, so the
    // printed IR refers to them as the source did.
    for (const LocAlias& a : m.locAliases)
      out_ << "#" << a.name << " = " << m.frontLocText(a.loc) << "\n";
    return out_.str();
  }

private:
  void function(const Function& f) {
    fn_ = &f;
    names_.clear();
    used_.clear();
    indent_ = 1;
    line() << "func.func " << (f.isPrivate ? "private " : "") << "@" << f.name << "(";
    for (size_t i = 0; i < f.body.args.size(); ++i) {
      ValueId a = f.body.args[i];
      out_ << (i ? ", " : "") << name(a) << ": " << toString(f.type(a)) << loc(f.value(a).frontLoc);
    }
    out_ << ")";
    if (!f.resultTypes.empty()) {
      out_ << " -> (";
      for (size_t i = 0; i < f.resultTypes.size(); ++i)
        out_ << (i ? ", " : "") << toString(f.resultTypes[i]);
      out_ << ")";
    }
    if (!f.attrs.empty()) out_ << " attributes " << attrDict(f.attrs);
    if (f.isDeclaration) {
      out_ << loc(f.frontLoc) << "\n";
      return;
    }
    out_ << " {\n";
    region(f.body);
    line() << "}" << loc(f.frontLoc) << "\n";
  }

  /// " loc(...)" for a location index, as written; empty for none.
  std::string loc(uint32_t id) const {
    if (id == 0) return {};
    return " " + std::string(mod_->frontLocText(id));
  }

  std::ostream& line() {
    for (int i = 0; i < indent_; ++i)
      out_ << "  ";
    return out_;
  }

  // Value names are printed as written; a name reused in a sibling region gets a suffix so the
  // printed function never defines a name twice.
  std::string name(ValueId v) {
    if (v == kNoValue) return "%<invalid>";
    if (auto it = names_.find(v); it != names_.end()) return it->second;
    std::string base = fn_->value(v).name;
    std::string n = base;
    if (base.find('#') == std::string::npos) {
      for (int k = 1; used_.count(n); ++k)
        n = base + "_" + std::to_string(k);
    }
    used_.insert(n);
    return names_[v] = "%" + n;
  }

  std::string results(const Op& op) {
    if (op.results.empty()) return "";
    // %x#0, %x#1 ... come from a `%x:N` group and print as one.
    const std::string& first = fn_->value(op.results[0]).name;
    if (auto hash = first.find('#'); hash != std::string::npos) {
      std::string base = first.substr(0, hash);
      for (ValueId r : op.results)
        name(r);
      return "%" + base + ":" + std::to_string(op.results.size()) + " = ";
    }
    std::string s;
    for (size_t i = 0; i < op.results.size(); ++i)
      s += (i ? ", " : "") + name(op.results[i]);
    return s + " = ";
  }

  std::string operandList(const std::vector<ValueId>& vs, size_t begin = 0,
                          size_t end = ~size_t(0)) {
    std::string s;
    end = std::min(end, vs.size());
    for (size_t i = begin; i < end; ++i)
      s += (i > begin ? ", " : "") + name(vs[i]);
    return s;
  }
  std::string typeList(const std::vector<ValueId>& vs, size_t begin = 0, size_t end = ~size_t(0)) {
    std::string s;
    end = std::min(end, vs.size());
    for (size_t i = begin; i < end; ++i)
      s += (i > begin ? ", " : "") + typeOf(vs[i]);
    return s;
  }
  std::string typeOf(ValueId v) { return v == kNoValue ? "none" : toString(fn_->type(v)); }

  static std::string attrDict(std::span<const NamedAttr> attrs) {
    std::string s = "{";
    for (size_t i = 0; i < attrs.size(); ++i) {
      const std::string& k = attrs[i].key;
      // Keys that are not identifiers ("pto.device-spec") are printed quoted, as MLIR does.
      bool plain = !k.empty() && (std::isalpha(static_cast<unsigned char>(k[0])) || k[0] == '_');
      for (char c : k)
        plain = plain &&
                (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '$');
      s += (i ? ", " : "") + (plain ? k : "\"" + k + "\"");
      if (!attrs[i].value.empty()) s += " = " + attrs[i].value;
    }
    return s + "}";
  }

  void region(const Region& r) {
    ++indent_;
    for (size_t i = 0; i < r.ops.size(); ++i) {
      const auto& op = r.ops[i];
      // A subview's `valid [%r, %c]` clause is the pto.set_validshape built right after it.
      if (i + 1 < r.ops.size() && isValidClause(*op, *r.ops[i + 1])) {
        subviewWithClause(*op, *r.ops[++i]);
        continue;
      }
      this->op(*op);
      // The location goes at the end of the op's last line (after its regions' closing brace).
      if (op->frontLoc != 0) {
        out_.seekp(-1, std::ios_base::cur);
        out_ << loc(op->frontLoc) << "\n";
      }
    }
    --indent_;
  }

  static bool isValidClause(const Op& view, const Op& next) {
    return view.kind == OpKind::Subset && view.ints.size() > 2 && view.ints[2] == 1 &&
           next.kind == OpKind::SetValidShape && next.operands.size() == 3 &&
           next.operands[0] == view.results[0] && next.frontLoc == view.frontLoc;
  }

  void subviewWithClause(const Op& op, const Op& set) {
    const auto& ops = op.operands;
    line() << results(op) << op.name << " " << name(ops[0]) << "[" << operandList(ops, 1)
           << "] sizes [" << op.ints[0] << ", " << op.ints[1] << "] valid ["
           << operandList(set.operands, 1) << "] : " << typeOf(ops[0]) << " -> "
           << typeOf(op.results[0]) << loc(op.frontLoc) << "\n";
  }

  std::string eventText(const Op& op) {
    std::string s = "[<" + std::string(isa::spelling(op.srcPipe)) + ">, <" +
                    std::string(isa::spelling(op.dstPipe)) + ">";
    switch (op.event->kind) {
    case EventRef::Kind::Const:
      s += ", <EVENT_ID" + std::to_string(op.event->id) + ">";
      break;
    case EventRef::Kind::Symbolic:
      if (!op.event->symbol.empty()) s += ", @" + op.event->symbol;
      break;
    case EventRef::Kind::Dynamic:
      s += ", " + name(op.operands.at(0));
      break;
    }
    return s + "]";
  }

  /// A data-moving comm op as PTOAS writes it (asm/parse/BuildComm.cpp): the custom form
  /// `pto.comm.tput(%dst, %src, buf(%ping) : A, B, C) {atomicType = ...}` or the generic one
  /// `"pto.treduce"(...) <{operandSegmentSizes = array<i32: ...>, ...}> : (...) -> ()`. Its
  /// region (what it does in machine ops) is not printed: the builder makes it again.
  void commOp(const Op& op) {
    const auto& ops = op.operands;
    if (op.ints.size() == 3 && op.ints[0] == 1 && op.ints[2] > 0) { // a collective's custom form
      const size_t fixed = op.attr("reduceOp") ? 2 : 1;             // the local view, treduce's acc
      const size_t group = ops.size() - static_cast<size_t>(op.ints[2]);
      line() << op.name << "(" << operandList(ops, 0, fixed) << ", recv("
             << operandList(ops, fixed, group) << "), group(" << operandList(ops, group)
             << ") : " << typeList(ops) << ")";
      if (!op.attrs.empty()) out_ << " " << attrDict(op.attrs);
      out_ << "\n";
      return;
    }
    if (op.ints.size() == 3 && op.ints[0] == 1) {
      line() << op.name << "(" << name(ops[0]) << ", " << name(ops[1]) << ", buf("
             << operandList(ops, 2) << ") : " << typeList(ops) << ")";
      if (!op.attrs.empty()) out_ << " " << attrDict(op.attrs);
      out_ << "\n";
      return;
    }
    std::vector<NamedAttr> props;
    if (op.ints.size() == 3 && op.ints[2] > 0) { // a collective: its operand segments
      const bool reduce = op.attr("reduceOp") != nullptr;
      const int64_t pong = op.ints[1] - (reduce ? 2 : 1);
      props.push_back({"operandSegmentSizes",
                       "array<i32: 1, 1, " + std::string(reduce ? "1, " : "") +
                           std::to_string(pong) + ", " + std::to_string(op.ints[2]) + ">"});
    }
    for (const NamedAttr& a : op.attrs)
      props.push_back(a);
    line() << "\"" << op.name << "\"(" << operandList(ops) << ")";
    if (!props.empty()) out_ << " <" << attrDict(props) << ">";
    out_ << " : (" << typeList(ops) << ") -> ()\n";
  }

  /// An asynchronous comm op as written (asm/parse/BuildAsyncComm.cpp): custom
  /// `%e = pto.tput_async(%d, %s, %sess : A, B, !pto.async_session) -> !pto.async_event` or
  /// generic `%e = "pto.tput_async"(%d, %s, %sess) : (...) -> !pto.async_event`. Its region
  /// (the copy) is not printed: the builder makes it again.
  void asyncCommOp(const Op& op) {
    const auto& ops = op.operands;
    const std::string rt = op.results.empty() ? "()" : typeOf(op.results[0]);
    if (op.ints.size() == 1 && op.ints[0] == 1) {
      line() << results(op) << "\"" << op.name << "\"(" << operandList(ops) << ")";
      if (!op.attrs.empty()) out_ << " <" << attrDict(op.attrs) << ">";
      out_ << " : (" << typeList(ops) << ") -> " << rt << "\n";
      return;
    }
    line() << results(op) << op.name << "(" << operandList(ops) << " : " << typeList(ops) << ")";
    if (!op.attrs.empty()) out_ << " " << attrDict(op.attrs);
    out_ << " -> " << rt << "\n";
  }

  void op(const Op& op) {
    switch (op.kind) {
    case OpKind::Constant:
    case OpKind::Arith:
    case OpKind::For:
    case OpKind::If:
    case OpKind::While:
    case OpKind::Condition:
    case OpKind::Yield:
    case OpKind::Return:
    case OpKind::Call:
    case OpKind::Section:
      return controlOp(op);
    case OpKind::MakeTensorView:
    case OpKind::ReinterpretView:
    case OpKind::PartitionView:
    case OpKind::GetTensorViewDim:
    case OpKind::AllocTile:
    case OpKind::Subset:
    case OpKind::Reshape:
    case OpKind::Bitcast:
    case OpKind::SetValidShape:
    case OpKind::GetValidShape:
    case OpKind::MultiTileGet:
    case OpKind::TAssign:
    case OpKind::LoadScalar:
    case OpKind::StoreScalar:
    case OpKind::AddPtr:
      return viewOp(op);
    case OpKind::BlockInfo:
    case OpKind::TGetVal:
    case OpKind::DeclareEventIdArray:
    case OpKind::ReserveBuffer:
    case OpKind::ImportReserved:
    case OpKind::PipeInit:
    case OpKind::PipePush:
    case OpKind::PipePop:
    case OpKind::PipeFree:
    case OpKind::PipeAlloc:
    case OpKind::DeclareGlobal:
    case OpKind::EventIdArrayGet:
    case OpKind::EventIdArraySet:
    case OpKind::Print:
    case OpKind::TileOp:
      return tileAndPipeOp(op);
    case OpKind::SetFlag:
    case OpKind::WaitFlag:
    case OpKind::Signal:
    case OpKind::Barrier:
    case OpKind::CoreSync:
      return syncOp(op);
    case OpKind::Comm:
      return commOp(op);
    case OpKind::AsyncComm:
      return asyncCommOp(op);
    }
  }

  /// Scalar constants and arithmetic, structured control flow, calls, sections.
  void controlOp(const Op& op) {
    const auto& ops = op.operands;
    switch (op.kind) {
    case OpKind::Constant:
      line() << results(op) << "arith.constant " << op.attr("value")->value << " : "
             << typeOf(op.results[0]) << "\n";
      return;
    case OpKind::Arith: {
      line() << results(op) << op.name << " ";
      if (op.predicate != CmpPredicate::None) out_ << spelling(op.predicate) << ", ";
      out_ << operandList(ops);
      if (op.arith == ArithOp::Select)
        out_ << " : " << typeOf(ops[1]) << "\n";
      else if (ops.size() == 1 && op.predicate == CmpPredicate::None && op.arith != ArithOp::NegF)
        out_ << " : " << typeOf(ops[0]) << " to " << typeOf(op.results[0]) << "\n";
      else
        out_ << " : " << typeOf(ops[0]) << "\n";
      return;
    }
    case OpKind::For: {
      const Region& body = op.regions[0];
      line() << results(op) << "scf.for " << name(body.args[0]) << " = " << name(ops[0]) << " to "
             << name(ops[1]) << " step " << name(ops[2]);
      if (ops.size() > 3) {
        out_ << " iter_args(";
        for (size_t i = 3; i < ops.size(); ++i)
          out_ << (i > 3 ? ", " : "") << name(body.args[i - 2]) << " = " << name(ops[i]);
        out_ << ") -> (" << typeList(body.args, 1) << ")";
      }
      if (fn_->type(body.args[0]).kind != TypeKind::Index) out_ << " : " << typeOf(body.args[0]);
      out_ << " {\n";
      region(body);
      line() << "}\n";
      return;
    }
    case OpKind::If: {
      line() << results(op) << "scf.if " << name(ops[0]);
      if (!op.results.empty()) out_ << " -> (" << typeList(op.results) << ")";
      out_ << " {\n";
      region(op.regions[0]);
      if (!op.regions[1].ops.empty() || !op.results.empty()) {
        line() << "} else {\n";
        region(op.regions[1]);
      }
      line() << "}\n";
      return;
    }
    case OpKind::While: {
      const Region& before = op.regions[0];
      const Region& after = op.regions[1];
      line() << results(op) << "scf.while (";
      for (size_t i = 0; i < ops.size(); ++i)
        out_ << (i ? ", " : "") << name(before.args[i]) << " = " << name(ops[i]);
      out_ << ") : (" << typeList(before.args) << ") -> (" << typeList(op.results) << ") {\n";
      region(before);
      line() << "} do {\n";
      ++indent_;
      line() << "^bb0(";
      for (size_t i = 0; i < after.args.size(); ++i)
        out_ << (i ? ", " : "") << name(after.args[i]) << ": " << typeOf(after.args[i]);
      out_ << "):\n";
      --indent_;
      region(after);
      line() << "}\n";
      return;
    }
    case OpKind::Condition:
      line() << "scf.condition(" << name(ops[0]) << ")";
      if (ops.size() > 1) out_ << " " << operandList(ops, 1) << " : " << typeList(ops, 1);
      out_ << "\n";
      return;
    case OpKind::Yield:
    case OpKind::Return:
      line() << (op.kind == OpKind::Return ? "return" : "scf.yield");
      if (!ops.empty()) out_ << " " << operandList(ops) << " : " << typeList(ops);
      out_ << "\n";
      return;
    case OpKind::Call:
      line() << results(op) << "func.call @" << op.name << "(" << operandList(ops) << ") : ("
             << typeList(ops) << ") -> (" << typeList(op.results) << ")\n";
      return;
    case OpKind::Section:
      line() << op.name << " {\n";
      region(op.regions[0]);
      line() << "}\n";
      return;
    default:
      return;
    }
  }

  /// Tensor views, tile values and their placement, scalar memory.
  void viewOp(const Op& op) {
    const auto& ops = op.operands;
    switch (op.kind) {
    case OpKind::MakeTensorView: {
      size_t n = op.ints[0], m = op.ints[1];
      line() << results(op) << op.name << " " << name(ops[0]) << ", shape = ["
             << operandList(ops, 1, 1 + n) << "], strides = [" << operandList(ops, 1 + n, 1 + n + m)
             << "]";
      if (!op.attrs.empty()) out_ << " " << attrDict(op.attrs);
      out_ << " : " << typeOf(op.results[0]) << "\n";
      return;
    }
    case OpKind::ReinterpretView: {
      size_t n = op.ints[0];
      line() << results(op) << op.name << " " << name(ops[0]) << " to offset: [" << name(ops[1])
             << "], sizes: [" << operandList(ops, 2, 2 + n) << "], strides: ["
             << operandList(ops, 2 + n, 2 + 2 * n) << "]";
      if (!op.attrs.empty()) out_ << " " << attrDict(op.attrs);
      out_ << " : " << typeOf(ops[0]) << " to " << typeOf(op.results[0]) << "\n";
      return;
    }
    case OpKind::PartitionView: {
      size_t n = op.ints[0], m = op.ints[1];
      line() << results(op) << "pto.partition_view " << name(ops[0]) << ", offsets = ["
             << operandList(ops, 1, 1 + n) << "], sizes = [" << operandList(ops, 1 + n, 1 + n + m)
             << "] : " << typeOf(ops[0]) << " -> " << typeOf(op.results[0]) << "\n";
      return;
    }
    case OpKind::GetTensorViewDim:
      line() << results(op) << op.name << " " << operandList(ops) << " : " << typeOf(ops[0])
             << " -> index\n";
      return;
    case OpKind::AllocTile: {
      line() << results(op)
             << (op.name == "pto.alloc_multi_tile" ? "pto.alloc_multi_tile" : "pto.alloc_tile");
      const char* keys[] = {"addr", "valid_row", "valid_col"};
      size_t k = 0;
      for (int i = 0; i < 3; ++i)
        if (op.ints[i]) out_ << " " << keys[i] << " = " << name(ops[k++]);
      out_ << " : " << typeOf(op.results[0]) << "\n";
      return;
    }
    case OpKind::Subset:
      line() << results(op) << op.name << " " << name(ops[0]) << "[" << operandList(ops, 1)
             << "] sizes [" << op.ints[0] << ", " << op.ints[1] << "] : " << typeOf(ops[0]);
      // A subview's valid shape may differ from its sizes: its result type says it.
      if (op.name.ends_with("subview")) out_ << " -> " << typeOf(op.results[0]);
      out_ << "\n";
      return;
    case OpKind::Reshape:
    case OpKind::Bitcast:
      line() << results(op) << op.name << " " << name(ops[0]) << " : " << typeOf(ops[0]) << " -> "
             << typeOf(op.results[0]) << "\n";
      return;
    case OpKind::SetValidShape:
      line() << op.name << " " << operandList(ops) << " : " << typeOf(ops[0]) << "\n";
      return;
    case OpKind::MultiTileGet:
      line() << results(op) << "pto.multi_tile_get " << name(ops[0]) << "[" << name(ops[1])
             << "] : " << typeOf(ops[0]) << " -> " << typeOf(op.results[0]) << "\n";
      return;
    case OpKind::GetValidShape:
      line() << results(op) << op.name << " " << name(ops[0]) << " : " << typeOf(ops[0])
             << (op.results.size() == 1 ? " -> index" : "") << "\n";
      return;
    case OpKind::TAssign:
      if (!op.results.empty())
        line() << results(op) << "pto.tassign " << operandList(ops) << " : " << typeOf(ops[0])
               << " -> " << typeOf(op.results[0]) << "\n";
      else
        line() << "pto.tassign " << operandList(ops) << " : " << typeOf(ops[0]) << ", "
               << typeOf(ops[1]) << "\n";
      return;
    case OpKind::LoadScalar:
      line() << results(op) << op.name << " " << name(ops[0]) << "[" << name(ops[1])
             << "] : " << typeOf(ops[0]) << " -> " << typeOf(op.results[0]) << "\n";
      return;
    case OpKind::StoreScalar:
      line() << op.name << " " << name(ops[0]) << ", " << name(ops[1]) << "[" << name(ops[2])
             << "] : " << typeOf(ops[1]) << ", " << typeOf(ops[0]) << "\n";
      return;
    case OpKind::AddPtr:
      line() << results(op) << op.name << " " << operandList(ops) << " : " << typeOf(ops[0])
             << " -> " << typeOf(op.results[0]) << "\n";
      return;
    default:
      return;
    }
  }

  /// Tile ops, prints, block info, reserved buffers, cross-core pipes, event id arrays.
  void tileAndPipeOp(const Op& op) {
    const auto& ops = op.operands;
    switch (op.kind) {
    case OpKind::BlockInfo:
      line() << results(op) << op.name << "\n";
      return;
    case OpKind::TGetVal:
      line() << results(op) << op.name << " ins(" << operandList(ops) << " : " << typeList(ops)
             << ") outs : " << typeOf(op.results[0]) << "\n";
      return;
    case OpKind::DeclareEventIdArray:
      line() << results(op) << op.name << " -> " << typeOf(op.results[0]) << "\n";
      return;
    case OpKind::ReserveBuffer:
    case OpKind::ImportReserved:
      line() << results(op) << op.name << " " << attrDict(op.attrs) << " -> "
             << typeOf(op.results[0]) << "\n";
      return;
    case OpKind::PipeInit:
      line() << results(op) << op.name << " " << attrDict(op.attrs) << "(" << operandList(ops)
             << " : " << typeList(ops) << ") -> " << typeOf(op.results[0]) << "\n";
      return;
    case OpKind::PipePush:
    case OpKind::PipePop:
    case OpKind::PipeFree:
    case OpKind::PipeAlloc:
      line() << op.name << "(" << operandList(ops) << " : " << typeList(ops)
             << ") {split = " << op.ints[0] << "}\n";
      return;
    case OpKind::DeclareGlobal:
      line() << results(op) << op.name << " -> " << typeOf(op.results[0]) << "\n";
      return;
    case OpKind::EventIdArrayGet:
    case OpKind::EventIdArraySet: {
      const bool set = op.kind == OpKind::EventIdArraySet;
      const bool local = fn_->type(ops[0]).localArray;
      line() << results(op) << op.name << " " << name(ops[0]) << "["
             << operandList(ops, 1, ops.size() - (set ? 1 : 0)) << "]"
             << (set ? ", " + name(ops.back()) : "") << " : " << typeOf(ops[0])
             << (local ? (set ? ", " + typeOf(ops.back()) : " -> " + typeOf(op.results[0])) : "")
             << "\n";
      return;
    }
    case OpKind::Print: {
      line() << op.name;
      const NamedAttr* fmt = op.attr("format");
      if (fmt || !ops.empty()) {
        out_ << " ins(";
        if (fmt) out_ << fmt->value << (ops.empty() ? "" : ", ");
        out_ << operandList(ops);
        if (!ops.empty()) out_ << " : " << typeList(ops);
        out_ << ")";
      }
      out_ << "\n";
      return;
    }
    case OpKind::TileOp: {
      const isa::OpInfo& info = isa::info(op.tileOp);
      std::vector<ValueId> ins, outs;
      for (size_t i = 0; i < ops.size(); ++i)
        (info.roles[op.operandRoles[i]].isOutput ? outs : ins).push_back(ops[i]);
      line() << "pto." << info.mnemonic << " ins(" << operandList(ins);
      if (!ins.empty()) out_ << " : " << typeList(ins);
      out_ << ")";
      if (info.numOutputs() > 0) { // TPRINT has no outputs: `pto.tprint ins(%t : T)`
        out_ << " outs(" << operandList(outs);
        if (!outs.empty()) out_ << " : " << typeList(outs);
        out_ << ")";
      }
      std::vector<NamedAttr> attrs;
      for (const NamedAttr& a : op.attrs)
        if (a.key != "implicit") attrs.push_back(a);
      if (!attrs.empty()) out_ << " " << attrDict(attrs);
      out_ << "\n";
      return;
    }
    default:
      return;
    }
  }

  /// Flags, signals, barriers and core-to-core sync.
  void syncOp(const Op& op) {
    const auto& ops = op.operands;
    switch (op.kind) {
    case OpKind::SetFlag:
    case OpKind::WaitFlag: {
      bool dyn = op.event->kind == EventRef::Kind::Dynamic;
      line() << (op.kind == OpKind::SetFlag ? "pto.set_flag" : "pto.wait_flag")
             << (dyn ? "_dyn" : "") << eventText(op) << "\n";
      return;
    }
    case OpKind::Signal: {
      if (op.named == NamedOp::SyncAll) {
        line() << "pto.syncall\n";
        return;
      }
      const bool notify = op.named == NamedOp::Notify;
      line() << results(op) << op.name << "(" << name(ops[0]) << ", " << name(ops[1]) << " : "
             << typeOf(ops[0]) << ", " << typeOf(ops[1]) << ") {"
             << (notify ? std::string("notifyOp = #pto<notify_op ") +
                              (op.ints[0] == 1 ? "atomic_add" : "set")
                        : std::string("cmp = #pto<wait_cmp ") +
                              std::string(isa::spelling(static_cast<isa::CmpMode>(op.ints[0]))))
             << ">}\n";
      return;
    }
    case OpKind::Barrier:
      if (const NamedAttr* form = op.attr("form")) { // a memory fence (BuildSync.cpp)
        line() << op.name;
        if (!ops.empty()) out_ << " " << name(ops[0]);
        out_ << " " << form->value;
        if (!ops.empty()) out_ << " : " << typeOf(ops[0]);
        out_ << "\n";
        return;
      }
      line() << "pto.barrier <" << isa::spelling(op.srcPipe) << ">\n";
      return;
    case OpKind::CoreSync: {
      const std::string id = op.event->kind == EventRef::Kind::Dynamic
                                 ? name(op.operands[0])
                                 : std::to_string(op.event->id);
      if (op.named == NamedOp::GetBuf || op.named == NamedOp::RlsBuf)
        line() << op.name << " [#pto.pipe<" << isa::spelling(op.srcPipe) << ">, " << id << "]\n";
      else
        line() << op.name << " <" << isa::spelling(op.srcPipe) << ">, " << id << "\n";
      return;
    }
    default: // op() sends only the kinds above here
      return;
    }
  }

  std::ostringstream out_;
  const Function* fn_ = nullptr;
  const Module* mod_ = nullptr;
  int indent_ = 0;
  std::map<ValueId, std::string> names_;
  std::set<std::string> used_;
};

} // namespace

std::string print(const Module& m) {
  return Printer().module(m);
}

} // namespace pto::ir
