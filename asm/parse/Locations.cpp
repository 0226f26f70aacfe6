// MLIR debug locations (docs/language.md, "Debug locations"), read by hand: each `loc(...)` is one
// LOC token (grammar/PTO.g4), so a module with a million of them costs a million tokens, not ten
// million, and a malformed one is reported at its exact column.
#include "asm/parse/Locations.h"

#include <charconv>
#include <optional>
#include <unordered_map>

namespace pto::as {
namespace {

using ir::FrontendPos;

/// What a location resolves to: the position a person reads first, then its callers.
struct Resolved {
  FrontendPos pos;
  std::vector<FrontendPos> callers;
};

// Aliases that refer to aliases not yet resolved recurse; MLIR prints the referenced ones first,
// so real chains are shallow. A longer chain is refused instead of overflowing the stack.
constexpr unsigned kMaxAliasDepth = 200;

class Resolver {
public:
  Resolver(ir::Module& m, DiagEngine& diags) : m_(m), diags_(diags) {}

  void run() {
    for (uint32_t i = 0; i < m_.locAliases.size(); ++i) {
      const ir::LocAlias& a = m_.locAliases[i];
      if (!aliases_.try_emplace(a.name, i).second) {
        diags_.error(m_.frontLocs[a.loc].at, "redefinition of location alias '#" + a.name + "'");
        diags_.note(m_.frontLocs[m_.locAliases[aliases_[a.name]].loc].at,
                    "previous definition is here");
      }
    }
    state_.assign(m_.locAliases.size(), State::Unvisited);
    aliasValue_.resize(m_.locAliases.size());
    for (uint32_t i = 0; i < m_.locAliases.size(); ++i)
      resolveAlias(i, 0);
    for (uint32_t id = 1; id < m_.frontLocs.size(); ++id) {
      if (isAliasDefinition(id)) continue;
      if (auto r = readLocation(id, 0)) store(id, *r);
    }
  }

private:
  enum class State : uint8_t { Unvisited, Resolving, Done, Failed };

  bool isAliasDefinition(uint32_t id) {
    if (aliasDefs_.empty()) {
      aliasDefs_.assign(m_.frontLocs.size(), false);
      for (const ir::LocAlias& a : m_.locAliases)
        aliasDefs_[a.loc] = true;
    }
    return aliasDefs_[id];
  }

  void store(uint32_t id, const Resolved& r) {
    ir::FrontendLoc& l = m_.frontLocs[id];
    l.pos = r.pos;
    l.callersBegin = static_cast<uint32_t>(m_.locCallers.size());
    l.callersCount = static_cast<uint32_t>(r.callers.size());
    m_.locCallers.insert(m_.locCallers.end(), r.callers.begin(), r.callers.end());
  }

  std::optional<Resolved> resolveAlias(uint32_t index, unsigned depth) {
    switch (state_[index]) {
    case State::Done:
      return aliasValue_[index];
    case State::Failed:
      return std::nullopt;
    case State::Resolving:
      return std::nullopt; // the cycle is reported where it closes
    case State::Unvisited:
      break;
    }
    state_[index] = State::Resolving;
    std::optional<Resolved> r = readLocation(m_.locAliases[index].loc, depth);
    state_[index] = r ? State::Done : State::Failed;
    if (r) {
      aliasValue_[index] = *r;
      store(m_.locAliases[index].loc, *r);
    }
    return r;
  }

  /// One location's text, `loc(` ... `)`.
  std::optional<Resolved> readLocation(uint32_t id, unsigned depth) {
    text_ = m_.frontLocText(id);
    at_ = m_.frontLocs[id].at;
    pos_ = 4; // after "loc(" (the lexer matched it)
    failed_ = false;
    Resolved r = instance(depth);
    if (failed_) return std::nullopt;
    skipSpace();
    if (pos_ + 1 != text_.size()) {
      fail("expected ')' after the location");
      return std::nullopt;
    }
    return r;
  }

  // ------------------------------------------------------------ reading
  void fail(const std::string& msg) {
    if (failed_) return;
    failed_ = true;
    SrcLoc loc = at_;
    loc.col += static_cast<uint32_t>(pos_);
    loc.len = 1;
    diags_.error(loc, "malformed location: " + msg);
  }
  void skipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t'))
      ++pos_;
  }
  char peek() {
    skipSpace();
    return pos_ < text_.size() ? text_[pos_] : '\0';
  }
  bool accept(char c) {
    if (peek() != c) return false;
    ++pos_;
    return true;
  }
  void expect(char c, const char* what) {
    if (!accept(c)) fail(std::string("expected '") + c + "' " + what);
  }
  static bool isWordChar(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '$' || c == '.' || c == '-';
  }
  std::string_view word() {
    skipSpace();
    size_t b = pos_;
    while (pos_ < text_.size() && isWordChar(text_[pos_]))
      ++pos_;
    return text_.substr(b, pos_ - b);
  }
  /// A quoted string (the lexer checked it is closed), its escapes read as MLIR writes them:
  /// \" \\ \n \t and two hex digits.
  std::string quoted() {
    std::string out;
    ++pos_; // '"'
    while (pos_ < text_.size() && text_[pos_] != '"') {
      char c = text_[pos_++];
      if (c != '\\' || pos_ >= text_.size()) {
        out += c;
        continue;
      }
      char e = text_[pos_++];
      auto hex = [](char h) {
        return h >= '0' && h <= '9'   ? h - '0'
               : h >= 'a' && h <= 'f' ? h - 'a' + 10
               : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                      : -1;
      };
      if (e == 'n')
        out += '\n';
      else if (e == 't')
        out += '\t';
      else if (hex(e) >= 0 && pos_ < text_.size() && hex(text_[pos_]) >= 0)
        out += static_cast<char>(hex(e) * 16 + hex(text_[pos_++]));
      else
        out += e;
    }
    ++pos_; // '"'
    return out;
  }
  uint32_t number(const char* what) {
    skipSpace();
    size_t b = pos_;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9')
      ++pos_;
    uint32_t v = 0;
    auto [p, ec] = std::from_chars(text_.data() + b, text_.data() + pos_, v);
    if (b == pos_) {
      fail(std::string("expected ") + what);
    } else if (ec != std::errc() || p != text_.data() + pos_) {
      pos_ = b;
      fail(std::string(what) + " is out of range");
    }
    return v;
  }
  uint32_t fileIndex(std::string name) {
    auto [it, added] = files_.try_emplace(name, static_cast<uint32_t>(m_.locFiles.size() + 1));
    if (added) m_.locFiles.push_back(std::move(name));
    return it->second;
  }

  /// A location instance: unknown, "file":L:C [to ...], "name" [( instance )],
  /// callsite(instance at instance), fused[<tag>] [instance, ...], #alias.
  Resolved instance(unsigned depth) {
    Resolved r;
    if (failed_) return r;
    const char c = peek();
    if (c == '"') return fileOrName(depth);
    if (c == '#') return aliasRef(depth);
    const size_t start = pos_;
    std::string_view w = word();
    if (w == "unknown") return r;
    if (w == "callsite") return callsite(depth);
    if (w == "fused") return fused(depth);
    pos_ = start;
    fail("expected a location: \"file\":line:col, unknown, a \"name\", callsite(...), fused[...] "
         "or a #alias");
    return r;
  }

  Resolved fileOrName(unsigned depth) {
    Resolved r;
    std::string text = quoted();
    if (accept(':')) {
      r.pos.line = number("a line number");
      if (accept(':')) r.pos.col = number("a column number");
      const size_t save = pos_;
      if (word() == "to") { // a range: `to L2:C2`, `to :C2` or `to L2`
        if (accept(':')) {
          number("a column number");
        } else {
          number("a line number");
          if (accept(':')) number("a column number");
        }
      } else {
        pos_ = save;
      }
      if (!failed_) r.pos.file = fileIndex(std::move(text));
      return r;
    }
    if (accept('(')) { // a name location with its child
      r = instance(depth);
      expect(')', "after the child of a name location");
    }
    return r; // a bare name: no position
  }

  Resolved callsite(unsigned depth) {
    expect('(', "after 'callsite'");
    Resolved callee = instance(depth);
    const size_t save = pos_;
    if (!failed_ && word() != "at") {
      pos_ = save;
      fail("expected 'at' in callsite(callee at caller)");
    }
    Resolved caller = instance(depth);
    expect(')', "after the caller of a callsite");
    if (failed_) return {};
    // The callee's own callers (a nested callsite) are the innermost.
    if (caller.pos.known()) callee.callers.push_back(caller.pos);
    callee.callers.insert(callee.callers.end(), caller.callers.begin(), caller.callers.end());
    if (!callee.pos.known() && !callee.callers.empty()) {
      callee.pos = callee.callers.front();
      callee.callers.erase(callee.callers.begin());
    }
    return callee;
  }

  Resolved fused(unsigned depth) {
    if (accept('<')) { // the metadata: any attribute, its brackets balanced
      unsigned open = 1;
      while (!failed_ && open > 0) {
        if (pos_ >= text_.size()) {
          fail("expected '>' after the metadata of fused<...>");
          break;
        }
        char c = text_[pos_];
        if (c == '"') {
          quoted();
          continue;
        }
        if (c == '<') ++open;
        if (c == '>') --open;
        ++pos_;
      }
    }
    expect('[', "after 'fused'");
    Resolved first;
    bool found = false;
    if (!accept(']')) {
      do {
        Resolved r = instance(depth);
        if (!found && r.pos.known()) {
          first = std::move(r);
          found = true;
        }
      } while (!failed_ && accept(','));
      expect(']', "after the locations of fused[...]");
    }
    return failed_ ? Resolved{} : first;
  }

  Resolved aliasRef(unsigned depth) {
    const size_t start = pos_;
    ++pos_; // '#'
    std::string name(word());
    auto it = aliases_.find(name);
    if (name.empty() || it == aliases_.end()) {
      pos_ = start;
      fail(name.empty() ? "expected an alias name after '#'"
                        : "undefined location alias '#" + name + "'");
      return {};
    }
    const uint32_t index = it->second;
    if (state_[index] == State::Done) return aliasValue_[index];
    if (state_[index] == State::Failed) {
      failed_ = true; // reported where it is defined
      return {};
    }
    if (state_[index] == State::Resolving || depth >= kMaxAliasDepth) {
      pos_ = start;
      fail(state_[index] == State::Resolving ? "location alias '#" + name + "' refers to itself"
                                             : "location aliases refer to each other more than " +
                                                   std::to_string(kMaxAliasDepth) + " deep");
      return {};
    }
    // Resolve the alias in its own text, then carry on in this one.
    const std::string_view text = text_;
    const SrcLoc at = at_;
    const size_t pos = pos_;
    std::optional<Resolved> r = resolveAlias(index, depth + 1);
    text_ = text;
    at_ = at;
    pos_ = pos;
    failed_ = !r;
    return r ? *r : Resolved{};
  }

  ir::Module& m_;
  DiagEngine& diags_;
  std::unordered_map<std::string, uint32_t> aliases_; // name -> index into locAliases
  std::unordered_map<std::string, uint32_t> files_;   // name -> index into locFiles, 1-based
  std::vector<State> state_;
  std::vector<Resolved> aliasValue_;
  std::vector<bool> aliasDefs_;
  std::string_view text_;
  SrcLoc at_;
  size_t pos_ = 0;
  bool failed_ = false;
};

} // namespace

void resolveLocations(ir::Module& m, DiagEngine& diags) {
  if (m.frontLocs.size() <= 1) return;
  Resolver(m, diags).run();
}

ModuleLocator::ModuleLocator(const ir::Module& m) : module_(m), byLine_(ir::frontLocsByLine(m)) {}

std::vector<std::string> ModuleLocator::placesAt(SrcLoc loc) const {
  if (!loc.valid() || loc.line >= byLine_.size()) return {};
  return module_.placeTexts(byLine_[loc.line]);
}

} // namespace pto::as
