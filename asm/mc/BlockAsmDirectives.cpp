// Block assembly directives (BlockAsmImpl.h): .arch, .extensions, .function, .param, .tile,
// .event, .reloc, .loc and .gmaccess, each checked as far as one line allows
// (docs/object-format.md, section "Block assembly listing").
#include "asm/mc/BlockAsmImpl.h"
#include "asm/mc/Disasm.h"
#include "isa/Encoding.h"
#include "obj/Extent.h"
#include "obj/GmAccess.h"
#include "support/Numbers.h"

#include <algorithm>
#include <cctype>

namespace pto::as::blockasm {

namespace enc = isa::enc;

void Assembler::directive(std::string_view code, size_t begin) {
  std::vector<Token> t;
  std::string err;
  uint32_t errCol = 0;
  if (!tokenize(code, begin, t, err, errCol)) {
    error(at(errCol, 1), err);
    return;
  }
  const std::string& d = t[0].value;
  if (d == ".arch") return archDirective(t);
  if (d == ".extensions") {
    if (t.size() > 2 || (t.size() == 2 && t[1].value != enc::kExtensionName))
      return error(at(t.size() > 1 ? t[1] : t[0]),
                   "expected '.extensions " + std::string(enc::kExtensionName) + "'");
    obj_.usesExtensions = true;
    return;
  }
  if (d == ".function") return functionDirective(t);
  if (d == ".param") return paramDirective(t);
  if (d == ".tile") return tileDirective(t);
  if (d == ".event") return eventDirective(t);
  if (d == ".reloc") return relocDirective(t);
  if (d == ".loc") return locDirective(t);
  if (d == ".gmaccess") return gmAccessDirective(t);
  if (d == ".word" || d == ".short" || d == ".half" || d == ".byte") {
    std::vector<uint8_t> bytes;
    if (!data(code, begin, bytes)) return;
    if (!needFunction(at(t[0]), "data")) return;
    cur_->hasWords = true;
    obj_.text.insert(obj_.text.end(), bytes.begin(), bytes.end());
    return;
  }
  error(at(t[0]), "unknown directive '" + d + "'");
}

bool Assembler::expectCount(const std::vector<Token>& t, size_t min, const std::string& usage) {
  if (t.size() >= min) return true;
  const Token& last = t.back();
  error(at(last.col + last.len, 1), "expected " + usage);
  return false;
}

std::optional<std::string> Assembler::name(const Token& tok, char sigil) {
  if (tok.value.empty() || tok.value[0] != sigil || (!tok.quoted && tok.value.size() < 2) ||
      !tok.suffix.empty()) {
    error(at(tok), std::string("expected a name starting with '") + sigil + "'");
    return std::nullopt;
  }
  return tok.value.substr(1);
}

void Assembler::archDirective(const std::vector<Token>& t) {
  if (!expectCount(t, 2, "an arch (a2a3 or a5)")) return;
  auto a = isa::parseArch(t[1].value);
  if (!a) return error(at(t[1]), "unknown arch '" + t[1].value + "' (expected a2a3 or a5)");
  if (t.size() > 2) return error(at(t[2]), "unexpected '" + t[2].value + "'");
  obj_.arch = *a;
}

void Assembler::functionDirective(const std::vector<Token>& t) {
  finishFunction();
  if (!expectCount(t, 2, "a function name (@name)")) return;
  auto n = name(t[1], '@');
  if (!n) return;
  PendingFunction pf;
  pf.fn.name = *n;
  pf.start = obj_.text.size();
  if (!names_.insert(*n).second) error(at(t[1]), "duplicate function " + quoteName('@', *n));
  for (size_t i = 2; i < t.size(); ++i) {
    const std::string& v = t[i].value;
    auto keyed = [&](std::string_view key) -> std::optional<std::string_view> {
      if (v.size() > key.size() && v.compare(0, key.size(), key) == 0 && v[key.size()] == '=')
        return std::string_view(v).substr(key.size() + 1);
      return std::nullopt;
    };
    if (v == "entry")
      pf.fn.flags |= obj::kEntry;
    else if (v == "private")
      pf.fn.flags |= obj::kPrivate;
    else if (v == "declaration")
      pf.fn.flags |= obj::kDeclaration;
    else if (v == "kernel=vector")
      pf.fn.flags |= obj::kKernelVector;
    else if (v == "kernel=cube")
      pf.fn.flags |= obj::kKernelCube;
    else if (v == "subblock0")
      pf.fn.flags |= obj::kSubblockZeroOnly;
    else if (v == "returns")
      pf.fn.flags |= obj::kReturnsValues;
    else if (auto f = keyed("frame")) {
      auto x = parseU64(*f);
      if (!x || *x > obj::kMaxFrameSize)
        error(at(t[i]), "bad frame size '" + std::string(*f) + "' (at most " +
                            std::to_string(obj::kMaxFrameSize) + " bytes)");
      else
        pf.fn.frameSize = static_cast<uint32_t>(*x);
    } else if (auto f = keyed("flags")) {
      auto x = parseU64(*f);
      if (!x || *x > UINT32_MAX)
        error(at(t[i]), "bad flags '" + std::string(*f) + "'");
      else
        pf.fn.flags |= static_cast<uint32_t>(*x);
    } else if (auto f = keyed("offset")) {
      auto x = parseU64(*f);
      if (!x)
        error(at(t[i]), "bad offset '" + std::string(*f) + "'");
      else {
        pf.explicitOffset = *x;
        pf.offsetLoc = at(t[i]);
      }
    } else {
      error(at(t[i]), "unknown function attribute '" + v +
                          "' (expected entry, private, declaration, kernel=vector|cube, frame=N, "
                          "flags=N, offset=N)");
    }
  }
  cur_ = std::move(pf);
}

bool Assembler::shapedType(const Token& tok, std::vector<int64_t>& shape, isa::DType& dtype) {
  std::string_view s = tok.value;
  while (!s.empty() &&
         (std::isdigit(static_cast<unsigned char>(s[0])) || s[0] == '?' || s[0] == '-')) {
    size_t x = s.find('x');
    if (x == std::string_view::npos) break;
    std::string_view dim = s.substr(0, x);
    if (dim == "?")
      shape.push_back(-1);
    else if (auto v = parseI64(dim))
      shape.push_back(*v);
    else {
      error(at(tok), "bad dimension '" + std::string(dim) + "' in '" + tok.value + "'");
      return false;
    }
    s.remove_prefix(x + 1);
  }
  auto dt = isa::parseDType(s);
  if (!dt) {
    error(at(tok), "unknown element type '" + std::string(s) + "' in '" + tok.value + "'");
    return false;
  }
  dtype = *dt;
  return true;
}

void Assembler::paramDirective(const std::vector<Token>& t) {
  if (!needFunction(at(t[0]), ".param")) return;
  if (t.size() < 4)
    return error(at(t[0]),
                 "expected '.param %name ptr|scalar|tensor_view|index <type> [extent=E] [index]'");
  auto n = name(t[1], '%');
  if (!n) return;
  obj::Param p;
  p.name = *n;
  const std::string& k = t[2].value;
  if (k == "ptr")
    p.kind = obj::ParamKind::Pointer;
  else if (k == "scalar")
    p.kind = obj::ParamKind::Scalar;
  else if (k == "tensor_view")
    p.kind = obj::ParamKind::TensorView;
  else if (k == "index")
    p.kind = obj::ParamKind::Index;
  else
    return error(at(t[2]),
                 "unknown parameter kind '" + k + "' (expected ptr, scalar, tensor_view or index)");
  if (!shapedType(t[3], p.shape, p.dtype)) return;
  if (p.shape.size() > 5) return error(at(t[3]), "a parameter has at most 5 dimensions");
  int64_t elements = 1;
  for (int64_t d : p.shape) {
    // A dimension is '?' or a non-negative integer (the loader refuses anything else).
    if (d == obj::kDynamicDim) continue;
    if (d < 0)
      return error(at(t[3]), "a parameter dimension must be '?' or a non-negative integer, not " +
                                 std::to_string(d));
    auto m = obj::checkedMul(elements, d);
    if (!m || *m > obj::kMaxParamElements || d > obj::kMaxParamElements)
      return error(at(t[3]),
                   "the parameter shape '" + t[3].value + "' has more than 2^40 elements");
    elements = *m;
  }
  for (size_t k = 4; k < t.size(); ++k) { // pointer extents (docs/object-format.md section 2.9)
    const std::string& v = t[k].value;
    if (p.kind == obj::ParamKind::Pointer && !t[k].quoted && v.starts_with("extent=") &&
        p.extent.empty()) {
      p.extent = v.substr(7);
      if (auto e = obj::checkExtent(p.extent)) return error(at(t[k]), *e);
    } else if (p.kind == obj::ParamKind::Pointer && !t[k].quoted && v == "index" &&
               !p.indexValues) {
      p.indexValues = true;
    } else {
      return error(at(t[k]), "unexpected '" + v + "'");
    }
  }
  cur_->fn.params.push_back(std::move(p));
}

std::optional<uint32_t> Assembler::u32(const Token& tok, std::string_view v, const char* what) {
  auto x = parseU64(v);
  if (!x || *x > UINT32_MAX) {
    error(at(tok), std::string("bad ") + what + " '" + std::string(v) + "'");
    return std::nullopt;
  }
  return static_cast<uint32_t>(*x);
}

void Assembler::tileDirective(const std::vector<Token>& t) {
  if (!needFunction(at(t[0]), ".tile")) return;
  if (!expectCount(t, 5, "'.tile T#n %name <loc> <rows>x<cols>x<dtype> [key=value...]'")) return;
  auto index = parseTileLabel(t[1].value);
  if (!index)
    return error(at(t[1]), "expected a tile label (T#1..T#16, U#.., M#.., N#.., or #index)");
  if (cur_->tiles.count(*index))
    return error(at(t[1]), "tile " + tileLabel(*index) + " is already defined");
  auto n = name(t[2], '%');
  if (!n) return;
  obj::TileDesc d;
  d.name = *n;
  auto loc = isa::parseLoc(t[3].value);
  if (!loc) return error(at(t[3]), "unknown tile location '" + t[3].value + "'");
  d.loc = *loc;
  std::vector<int64_t> shape;
  if (!shapedType(t[4], shape, d.dtype)) return;
  if (shape.size() != 2 || shape[0] < 0 || shape[1] < 0 || shape[0] > UINT32_MAX ||
      shape[1] > UINT32_MAX)
    return error(at(t[4]), "expected <rows>x<cols>x<dtype> with static rows and cols");
  d.rows = static_cast<uint32_t>(shape[0]);
  d.cols = static_cast<uint32_t>(shape[1]);
  d.validRows = static_cast<int32_t>(std::min<uint64_t>(d.rows, INT32_MAX));
  d.validCols = static_cast<int32_t>(std::min<uint64_t>(d.cols, INT32_MAX));
  for (size_t i = 5; i < t.size(); ++i) {
    const Token& tok = t[i];
    size_t eq = tok.value.find('=');
    if (eq == std::string::npos)
      return error(at(tok), "expected key=value, got '" + tok.value + "'");
    std::string key = tok.value.substr(0, eq);
    std::string_view v = std::string_view(tok.value).substr(eq + 1);
    if (key == "valid") {
      size_t x = v.find('x');
      auto dim = [&](std::string_view s) -> std::optional<int32_t> {
        if (s == "?") return obj::kDynamicDim;
        auto u = parseU64(s);
        if (!u || *u > INT32_MAX) return std::nullopt;
        return static_cast<int32_t>(*u);
      };
      auto r = x == std::string_view::npos ? std::nullopt : dim(v.substr(0, x));
      auto c = x == std::string_view::npos ? std::nullopt : dim(v.substr(x + 1));
      if (!r || !c) return error(at(tok), "expected valid=<rows>x<cols> (numbers or ?)");
      if (*r > static_cast<int64_t>(d.rows) || *c > static_cast<int64_t>(d.cols))
        return error(at(tok), "valid shape " + std::string(v) + " exceeds the tile shape " +
                                  std::to_string(d.rows) + "x" + std::to_string(d.cols));
      d.validRows = *r;
      d.validCols = *c;
    } else if (key == "blayout") {
      auto x = isa::parseBLayout(v);
      if (!x) return error(at(tok), "unknown blayout '" + std::string(v) + "'");
      d.blayout = *x;
    } else if (key == "slayout") {
      auto x = isa::parseSLayout(v);
      if (!x) return error(at(tok), "unknown slayout '" + std::string(v) + "'");
      d.slayout = *x;
    } else if (key == "pad") {
      auto x = isa::parsePadValue(v);
      if (!x) return error(at(tok), "unknown pad value '" + std::string(v) + "'");
      d.pad = *x;
    } else if (key == "compact") {
      auto x = isa::parseCompactMode(v);
      if (!x) return error(at(tok), "unknown compact mode '" + std::string(v) + "'");
      d.compact = *x;
    } else if (key == "fractal") {
      auto x = parseU64(v);
      if (!x || *x > UINT16_MAX) return error(at(tok), "bad fractal size '" + std::string(v) + "'");
      d.fractal = static_cast<uint16_t>(*x);
    } else if (key == "addr" && v == "runtime") { // bound by a TASSIGN block at run time
      d.placement = obj::kRuntimePlaced;
    } else if (key == "addr") {
      auto x = parseU64(v);
      if (!x || *x > static_cast<uint64_t>(INT64_MAX))
        return error(at(tok), "bad address '" + std::string(v) + "'");
      d.placement = static_cast<int64_t>(*x);
    } else if (key == "view") {
      size_t plus = v.find('+');
      auto parent = parseTileLabel(v.substr(0, plus));
      if (!parent || *parent > INT32_MAX - 1)
        return error(at(tok), "expected view=<tile>[+<byte offset>]");
      d.aliasOf = static_cast<int32_t>(*parent);
      if (plus != std::string_view::npos) {
        auto off = u32(tok, v.substr(plus + 1), "view offset");
        if (!off) return;
        d.aliasOffset = *off;
      }
    } else if (key == "view_offset") {
      auto off = u32(tok, v, "view offset");
      if (!off) return;
      d.aliasOffset = *off;
    } else {
      return error(at(tok),
                   "unknown tile attribute '" + key +
                       "' (expected valid, blayout, slayout, fractal, pad, compact, addr, view)");
    }
  }
  cur_->tiles[*index] = d;
  cur_->tileLocs[*index] = at(t[1]);
}

void Assembler::eventDirective(const std::vector<Token>& t) {
  if (!needFunction(at(t[0]), ".event")) return;
  if (!expectCount(t, 4, "'.event @name <src pipe> <dst pipe>'")) return;
  auto n = name(t[1], '@');
  if (!n) return;
  obj::Event ev;
  ev.function = static_cast<uint32_t>(obj_.functions.size());
  ev.name = *n;
  auto sp = isa::parsePipe(t[2].value), dp = isa::parsePipe(t[3].value);
  if (!sp) return error(at(t[2]), "unknown pipe '" + t[2].value + "'");
  if (!dp) return error(at(t[3]), "unknown pipe '" + t[3].value + "'");
  if (t.size() > 4) return error(at(t[4]), "unexpected '" + t[4].value + "'");
  ev.srcPipe = *sp;
  ev.dstPipe = *dp;
  obj_.events.push_back(std::move(ev));
}

void Assembler::relocDirective(const std::vector<Token>& t) {
  const char* usage = "'.reloc [<offset>] tile T#n | event @name|#index | call @symbol'";
  if (!expectCount(t, 3, usage)) return;
  size_t k = 1;
  obj::Reloc r;
  r.offset = obj_.text.size(); // no offset: the next word
  if (auto off = parseU64(t[1].value)) {
    r.offset = *off;
    k = 2;
  }
  if (!expectCount(t, k + 2, usage)) return;
  const std::string& kind = t[k].value;
  PendingReloc pr;
  pr.loc = at(t[0]);
  pr.targetLoc = at(t[k + 1]);
  if (t.size() > k + 2) return error(at(t[k + 2]), "unexpected '" + t[k + 2].value + "'");
  if (kind == "tile") {
    if (!needFunction(at(t[0]), ".reloc tile")) return;
    auto index = parseTileLabel(t[k + 1].value);
    if (!index) return error(at(t[k + 1]), "expected a tile label (T#1..N#16 or #index)");
    r.type = obj::RelocType::Tile;
    r.function = static_cast<uint32_t>(obj_.functions.size());
    r.index = *index;
  } else if (kind == "event") {
    if (!needFunction(at(t[0]), ".reloc event")) return;
    r.type = obj::RelocType::Event;
    r.function = static_cast<uint32_t>(obj_.functions.size());
    const Token& target = t[k + 1];
    if (!target.quoted && target.value.size() > 1 && target.value[0] == '#') {
      auto x = parseU64(std::string_view(target.value).substr(1));
      if (!x || *x > UINT32_MAX) return error(at(target), "bad event index '" + target.value + "'");
      r.index = static_cast<uint32_t>(*x);
    } else {
      auto n = name(target, '@');
      if (!n) return;
      pr.byName = true;
      pr.eventName = *n;
    }
  } else if (kind == "call") {
    auto n = name(t[k + 1], '@');
    if (!n) return;
    if (n->empty()) return error(at(t[k + 1]), "a call needs a symbol name");
    r.type = obj::RelocType::Call;
    r.symbol = *n;
  } else {
    return error(at(t[k]), "unknown relocation kind '" + kind + "' (expected tile, event or call)");
  }
  pr.index = obj_.relocs.size();
  obj_.relocs.push_back(std::move(r));
  relocs_.push_back(std::move(pr));
}

void Assembler::locDirective(const std::vector<Token>& t) {
  if (!expectCount(t, 2, "'.loc <file>:<line>:<col> [\"frontend location\"]'")) return;
  // An optional quoted third operand: the frontend's location (docs/object-format.md 2.4).
  const bool frontend = t.size() == 3 && t[2].quoted && t[2].suffix.empty();
  if (t.size() > 3 || (t.size() == 3 && !frontend))
    return error(at(t[t.size() > 3 ? 3 : 2]), "unexpected '" + t[t.size() > 3 ? 3 : 2].value + "'");
  const Token& tok = t[1];
  obj::LineEntry l;
  l.textOffset = obj_.text.size();
  std::string_view rest;
  if (tok.quoted) {
    l.file = tok.value;
    rest = tok.suffix;
    if (rest.empty() || rest[0] != ':') return error(at(tok), "expected \"file\":<line>:<col>");
    rest.remove_prefix(1);
  } else {
    std::string_view v = tok.value;
    size_t c2 = v.rfind(':');
    size_t c1 =
        c2 == std::string_view::npos || c2 == 0 ? std::string_view::npos : v.rfind(':', c2 - 1);
    if (c1 == std::string_view::npos) return error(at(tok), "expected <file>:<line>:<col>");
    l.file = std::string(v.substr(0, c1));
    rest = v.substr(c1 + 1);
  }
  size_t c = rest.find(':');
  auto lineNo = c == std::string_view::npos ? std::nullopt : parseU64(rest.substr(0, c));
  auto colNo = c == std::string_view::npos ? std::nullopt : parseU64(rest.substr(c + 1));
  if (!lineNo || !colNo || *lineNo > UINT32_MAX || *colNo > UINT32_MAX)
    return error(at(tok), "expected <file>:<line>:<col> with numeric line and column");
  l.line = static_cast<uint32_t>(*lineNo);
  l.col = static_cast<uint32_t>(*colNo);
  if (frontend) l.frontend = t[2].value;
  obj_.lines.push_back(std::move(l));
}

/// `.gmaccess read|write [param=N] [offset=N bytes=N [symbol=N] [loop=N stride=N]]`: the GM
/// access of the tile block that starts at the next word (docs/object-format.md 2.10); with
/// bytes= its address is known, without it any byte of the parameter (any parameter without
/// param=).
void Assembler::gmAccessDirective(const std::vector<Token>& t) {
  const char* usage = "'.gmaccess read|write [param=N] [offset=N bytes=N [symbol=N] [loop=N "
                      "stride=N]]'";
  if (!expectCount(t, 2, usage)) return;
  if (!needFunction(at(t[0]), ".gmaccess")) return;
  obj::GmAccess a;
  a.textOffset = obj_.text.size();
  a.function = static_cast<uint32_t>(obj_.functions.size());
  if (t[1].value != "read" && t[1].value != "write")
    return error(at(t[1]), "expected read or write, found '" + t[1].value + "'");
  a.write = t[1].value == "write";
  std::set<std::string> seen;
  for (size_t i = 2; i < t.size(); ++i) {
    const std::string& v = t[i].value;
    const size_t eq = v.find('=');
    const std::string key = v.substr(0, eq);
    const std::string_view val =
        eq == std::string::npos ? std::string_view{} : std::string_view(v).substr(eq + 1);
    if (eq == std::string::npos || !seen.insert(key).second)
      return error(at(t[i]),
                   (eq == std::string::npos ? "expected key=value, found '" : "repeated key in '") +
                       v + "' (" + usage + ")");
    const auto s64 = parseI64(val);
    const auto u64 = parseU64(val);
    if (key == "param" && s64 && *s64 >= -1 && *s64 <= INT32_MAX)
      a.param = static_cast<int32_t>(*s64);
    else if (key == "offset" && s64)
      a.offset = *s64;
    else if (key == "bytes" && u64 && *u64 > 0)
      a.bytes = *u64, a.known = true;
    else if (key == "symbol" && u64)
      a.symbol = *u64;
    else if (key == "loop" && u64 && *u64 <= UINT32_MAX)
      a.loop = static_cast<uint32_t>(*u64);
    else if (key == "stride" && s64)
      a.stride = *s64;
    else
      return error(at(t[i]), "bad '" + v + "' (" + usage + ")");
  }
  if (!a.known &&
      (seen.count("offset") || seen.count("symbol") || seen.count("loop") || seen.count("stride")))
    return error(at(t[0]), "a .gmaccess of unknown bytes (no bytes=) takes only param=");
  // The fields' other rules are the reader's (obj::checkGmAccess, at the end): one rule set for
  // the object, its writer and this listing, so a listing without warnings reassembles.
  obj_.gmAccesses.push_back(a);
  gmAccessLocs_.push_back(at(t[0]));
}

void Assembler::checkGmAccesses() {
  uint64_t prev = 0;
  for (size_t i = 0; i < obj_.gmAccesses.size(); ++i) {
    if (obj::Error e = obj::checkGmAccess(obj_, i, prev)) {
      ln_ = gmAccessLocs_[i].line;
      error(gmAccessLocs_[i], "bad .gmaccess: " + *e);
    }
    prev = obj_.gmAccesses[i].textOffset;
  }
}

} // namespace pto::as::blockasm
