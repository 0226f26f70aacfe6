// A generated Program as MLIR-style .pto text (docs/language.md section 1).
#include "tests/diff/Kernel.h"

#include <sstream>

namespace pto::diff {
namespace {

class Printer {
public:
  explicit Printer(const Program& p) : p_(p) {}

  std::string run() {
    out_ << "module {\n";
    for (size_t i = 0; i + 1 < p_.funcs.size(); ++i)
      function(p_.funcs[i], false);
    function(p_.kernel(), true);
    out_ << "}\n";
    return out_.str();
  }

private:
  const Program& p_;
  const Function* fn_ = nullptr;
  std::ostringstream out_;
  int indent_ = 0;
  int views_ = 0;

  std::string v(int id) const { return "%v" + std::to_string(id); }
  const char* ty(int id) const { return tyName(fn_->valueTys[size_t(id)]); }
  std::string pad() const { return std::string(size_t(indent_) * 2, ' '); }

  std::string tileTy() const {
    const std::string w = std::to_string(p_.tileWidth);
    return "!pto.tile_buf<loc=vec, dtype=f32, rows=1, cols=" + w + ", v_row=1, v_col=" + w +
           ", blayout=row_major, slayout=none_box, fractal=512, pad=0>";
  }
  std::string partTy() const {
    return "!pto.partition_tensor_view<" + std::to_string(p_.tileWidth) + "xf32>";
  }

  std::string list(const std::vector<int>& ids) const {
    std::string s;
    for (size_t i = 0; i < ids.size(); ++i)
      s += (i ? ", " : "") + v(ids[i]);
    return s;
  }
  std::string types(const std::vector<int>& ids) const {
    std::string s;
    for (size_t i = 0; i < ids.size(); ++i)
      s += std::string(i ? ", " : "") + ty(ids[i]);
    return s;
  }
  std::string results(const Stmt& s) const { return s.res.empty() ? "" : list(s.res) + " = "; }

  static std::string literal(Ty t, uint64_t bits) {
    if (t == Ty::I1) return bits ? "true" : "false";
    // pto-as refuses the decimal -9223372036854775808 (a frontend bug); the hex pattern works.
    if (isFloat(t) || (bitWidth(t) == 64 && bits == uint64_t{1} << 63)) {
      std::ostringstream o;
      o << "0x" << std::hex << std::uppercase << bits;
      return o.str();
    }
    return std::to_string(sem::sext(t, bits));
  }

  void function(const Function& f, bool kernel) {
    fn_ = &f;
    out_ << "  func.func " << (kernel ? "" : "private ") << "@" << f.name << "(";
    bool first = true;
    if (kernel)
      for (size_t i = 0; i < p_.buffers.size(); ++i) {
        out_ << (first ? "" : ", ") << "%b" << i << ": !pto.ptr<" << tyName(p_.buffers[i].elem)
             << ">";
        first = false;
      }
    for (int a : f.params) {
      out_ << (first ? "" : ", ") << v(a) << ": " << ty(a);
      first = false;
    }
    out_ << ")";
    if (f.result) out_ << " -> " << tyName(*f.result);
    if (kernel) out_ << " attributes {pto.entry}";
    out_ << " {\n";
    indent_ = 2;
    if (kernel && p_.numTiles > 0) {
      const std::string ind = pad();
      out_ << ind << "%w = arith.constant " << p_.tileWidth << " : index\n";
      out_ << ind << "%one = arith.constant 1 : index\n";
      for (size_t i = 0; i < p_.buffers.size(); ++i) {
        if (!p_.buffers[i].tiles) continue;
        out_ << ind << "%size" << i << " = arith.constant " << p_.buffers[i].init.size()
             << " : index\n";
        out_ << ind << "%tv" << i << " = pto.make_tensor_view %b" << i << ", shape = [%size" << i
             << "] strides = [%one] : !pto.tensor_view<?xf32>\n";
      }
      out_ << ind << "pto.section.vector {\n";
      indent_ = 3;
      for (int t = 0; t < p_.numTiles; ++t)
        out_ << pad() << "%t" << t << " = pto.alloc_tile : " << tileTy() << "\n";
    }
    block(f.body);
    if (kernel && p_.numTiles > 0) {
      indent_ = 2;
      out_ << pad() << "}\n";
    }
    if (f.result)
      out_ << pad() << "return " << v(f.ret) << " : " << ty(f.ret) << "\n";
    else
      out_ << pad() << "return\n";
    out_ << "  }\n";
  }

  void block(const Block& b) {
    for (const Stmt& s : b)
      stmt(s);
  }

  void yield(const char* kw, const std::vector<int>& ys) {
    if (ys.empty()) return;
    out_ << pad() << kw << " " << list(ys) << " : " << types(ys) << "\n";
  }

  std::string view(int buf, int off) {
    const std::string name = "%pv" + std::to_string(views_++);
    out_ << pad() << name << " = pto.partition_view %tv" << buf << ", offsets = [" << v(off)
         << "], sizes = [%w] : !pto.tensor_view<?xf32> -> " << partTy() << "\n";
    return name;
  }

  void stmt(const Stmt& s) {
    using K = Stmt::Kind;
    const std::string ind = pad();
    const std::string t = tyName(s.ty);
    switch (s.kind) {
    case K::Const:
      out_ << ind << results(s) << "arith.constant " << literal(s.ty, s.imm) << " : " << t << "\n";
      break;
    case K::Binary:
      out_ << ind << results(s) << "arith." << s.op << " " << list(s.args) << " : " << t << "\n";
      break;
    case K::Unary:
      out_ << ind << results(s) << "arith." << s.op << " " << v(s.args[0]) << " : " << t << "\n";
      break;
    case K::Cmp:
      out_ << ind << results(s) << "arith." << (isFloat(s.ty) ? "cmpf " : "cmpi ") << s.op << ", "
           << list(s.args) << " : " << t << "\n";
      break;
    case K::Select:
      out_ << ind << results(s) << "arith.select " << list(s.args) << " : " << t << "\n";
      break;
    case K::Cast:
      out_ << ind << results(s) << "arith." << s.op << " " << v(s.args[0]) << " : " << ty(s.args[0])
           << " to " << t << "\n";
      break;
    case K::Load:
      out_ << ind << results(s) << "pto.load_scalar %b" << s.buf << "[" << v(s.args[0])
           << "] : !pto.ptr<" << t << "> -> " << t << "\n";
      break;
    case K::Store:
      out_ << ind << "pto.store_scalar " << v(s.args[0]) << ", %b" << s.buf << "[" << v(s.args[1])
           << "] : !pto.ptr<" << t << ">, " << t << "\n";
      break;
    case K::For: {
      const Region& r = s.regions[0];
      out_ << ind << results(s) << "scf.for " << v(r.params[0]) << " = " << v(s.args[0]) << " to "
           << v(s.args[1]) << " step " << v(s.args[2]);
      if (!s.res.empty()) {
        out_ << " iter_args(";
        for (size_t i = 1; i < r.params.size(); ++i)
          out_ << (i > 1 ? ", " : "") << v(r.params[i]) << " = " << v(s.args[i + 2]);
        out_ << ") -> (" << types(s.res) << ")";
      }
      if (s.ty != Ty::Index) out_ << " : " << t;
      out_ << " {\n";
      regionBody(r, "scf.yield");
      out_ << ind << "}\n";
      break;
    }
    case K::If:
      out_ << ind << results(s) << "scf.if " << v(s.args[0]);
      if (!s.res.empty()) out_ << " -> (" << types(s.res) << ")";
      out_ << " {\n";
      regionBody(s.regions[0], "scf.yield");
      if (s.hasElse) {
        out_ << ind << "} else {\n";
        regionBody(s.regions[1], "scf.yield");
      }
      out_ << ind << "}\n";
      break;
    case K::While: {
      const Region& b = s.regions[0];
      const Region& a = s.regions[1];
      out_ << ind << results(s) << "scf.while (";
      for (size_t i = 0; i < b.params.size(); ++i)
        out_ << (i ? ", " : "") << v(b.params[i]) << " = " << v(s.args[i]);
      out_ << ") : (" << types(s.args) << ") -> (" << types(s.res) << ") {\n";
      ++indent_;
      block(b.body);
      const std::vector<int> fwd(b.yields.begin() + 1, b.yields.end());
      out_ << pad() << "scf.condition(" << v(b.yields[0]) << ") " << list(fwd) << " : "
           << types(fwd) << "\n";
      --indent_;
      out_ << ind << "} do {\n";
      out_ << ind << "^bb0(";
      for (size_t i = 0; i < a.params.size(); ++i)
        out_ << (i ? ", " : "") << v(a.params[i]) << ": " << ty(a.params[i]);
      out_ << "):\n";
      regionBody(a, "scf.yield");
      out_ << ind << "}\n";
      break;
    }
    case K::Call: {
      const Function& f = p_.funcs[size_t(s.callee)];
      out_ << ind << results(s) << "func.call @" << f.name << "(" << list(s.args) << ") : ("
           << types(s.args) << ") -> " << t << "\n";
      break;
    }
    case K::TileLoad: {
      const std::string pv = view(s.buf, s.args[0]);
      out_ << ind << "pto.tload ins(" << pv << " : " << partTy() << ") outs(%t" << s.tile << " : "
           << tileTy() << ")\n";
      break;
    }
    case K::TileBinary:
      out_ << ind << "pto." << s.op << " ins(%t" << s.tileA << ", %t" << s.tileB << " : "
           << tileTy() << ", " << tileTy() << ") outs(%t" << s.tile << " : " << tileTy() << ")\n";
      break;
    case K::TileScalar:
      out_ << ind << "pto." << s.op << " ins(%t" << s.tileA << ", " << v(s.args[0]) << " : "
           << tileTy() << ", f32) outs(%t" << s.tile << " : " << tileTy() << ")\n";
      break;
    case K::TileStore: {
      const std::string pv = view(s.buf, s.args[0]);
      out_ << ind << "pto.tstore ins(%t" << s.tileA << " : " << tileTy() << ") outs(" << pv << " : "
           << partTy() << ")\n";
      break;
    }
    }
  }

  void regionBody(const Region& r, const char* term) {
    ++indent_;
    block(r.body);
    yield(term, r.yields);
    --indent_;
  }
};

} // namespace

std::string print(const Program& p) {
  return Printer(p).run();
}

} // namespace pto::diff
