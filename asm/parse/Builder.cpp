// The front end's entry point: source text -> parse tree (two-stage parsing with bounded error
// recovery) -> Kernel IR, built by detail::Builder (BuilderImpl.h).
#include "PTOParser.h"
#include "asm/parse/BuilderImpl.h"
#include "asm/parse/Lexer.h"
#include "asm/parse/Parser.h"
#include "asm/parse/Prediction.h"
#include "asm/parse/TokenStream.h"
#include "support/Text.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <exception>
#include <utility>

namespace pto::as {
namespace {

// ---------------------------------------------------------------- syntax errors
/// Thrown by the syntax error listener once the error limit is reached: parsing stops there
/// instead of building an error-recovery tree over the rest of a garbage input.
struct TooManyErrors {};

class SyntaxErrorListener : public antlr4::BaseErrorListener {
public:
  explicit SyntaxErrorListener(DiagEngine& d) : diags_(d) {}
  void syntaxError(antlr4::Recognizer* recognizer, antlr4::Token* tok, size_t line, size_t col,
                   const std::string& msg, std::exception_ptr) override {
    // What the builder reported while this parse went on is moot now: the parse stops here and
    // the file is parsed again with error recovery (see parseModule). Syntax errors are reported
    // at once, in both parses, as before (the second does not repeat a position).
    diags_.dropHeld();
    SrcLoc loc{static_cast<uint32_t>(line), static_cast<uint32_t>(col + 1), 1};
    bool atEof = tok && tok->getType() == antlr4::Token::EOF;
    if (tok && !atEof) loc.len = static_cast<uint32_t>(std::max<size_t>(1, tok->getText().size()));
    auto* parser = dynamic_cast<antlr4::Parser*>(recognizer);
    std::string text;
    if (atEof && parser) {
      // Point just past the last real token: that is where the text stopped short.
      if (antlr4::Token* last = lastToken(parser)) {
        loc = locOf(last);
        loc.col += loc.len;
        loc.len = 1;
        text = "unexpected end of file after '" + last->getText() + "'";
      } else {
        text = "unexpected end of file";
      }
      if (msg.find("'}'") != std::string::npos) text += "; expected '}'";
    } else {
      text = friendly(msg, tok);
    }
    // ANTLR's recovery can report the same position twice; one report is enough.
    if (loc.line == lastLine_ && loc.col == lastCol_) return;
    lastLine_ = loc.line;
    lastCol_ = loc.col;
    diags_.error(loc, text);
    if (diags_.errorLimitReached()) throw TooManyErrors{};
    // Point at the unclosed bracket when that is the likely cause: the file ended inside a
    // region, or an angle-bracket type was not closed.
    if (parser && (atEof || msg.find("'>'") != std::string::npos))
      noteOpenBracket(parser, loc, atEof);
  }

private:
  static antlr4::Token* lastToken(antlr4::Parser* parser) {
    auto* stream = dynamic_cast<antlr4::BufferedTokenStream*>(parser->getTokenStream());
    if (!stream) return nullptr;
    for (size_t i = stream->size(); i-- > 0;) {
      antlr4::Token* t = stream->get(i);
      if (t->getType() != antlr4::Token::EOF && t->getChannel() == antlr4::Token::DEFAULT_CHANNEL)
        return t;
    }
    return nullptr;
  }

  /// For an error inside `{...}` or `<...>` that opened on an earlier line, a note at the opener.
  void noteOpenBracket(antlr4::Parser* parser, SrcLoc at, bool atEof) {
    for (antlr4::ParserRuleContext* ctx = parser->getContext(); ctx;
         ctx = dynamic_cast<antlr4::ParserRuleContext*>(ctx->parent)) {
      antlr4::Token* open = nullptr;
      if (dynamic_cast<P::RegionContext*>(ctx) || dynamic_cast<P::AngleContext*>(ctx))
        open = ctx->getStart();
      else if (auto* m = dynamic_cast<P::ModuleOpContext*>(ctx)) {
        for (auto* c : m->children)
          if (auto* t = dynamic_cast<antlr4::tree::TerminalNode*>(c); t && t->getText() == "{")
            open = t->getSymbol();
      }
      if (!open || (open->getText() != "{" && open->getText() != "<")) continue;
      if (!atEof && open->getText() != "<") return;
      if (open->getLine() == at.line) return;
      diags_.note(locOf(open), "to match this '" + open->getText() + "'");
      return;
    }
  }

  static std::string friendly(const std::string& msg, antlr4::Token* tok) {
    std::string text = tok ? tok->getText() : "";
    if (msg.rfind("token recognition error", 0) == 0)
      return "invalid character in input: " + msg.substr(msg.find("at:") + 4);
    if (!text.empty() && (msg.find("extraneous input") != std::string::npos ||
                          msg.find("mismatched input") != std::string::npos ||
                          msg.find("no viable alternative") != std::string::npos))
      return "unexpected '" + text + "'" + expecting(msg);
    return msg;
  }
  static std::string expecting(const std::string& msg) {
    auto p = msg.find("expecting ");
    if (p == std::string::npos) return "";
    std::string e = msg.substr(p + 10);
    if (e.size() > 80) return "";
    return "; expected " + e;
  }
  DiagEngine& diags_;
  uint32_t lastLine_ = 0, lastCol_ = 0;
};

/// The offset of the first byte that is not part of valid UTF-8, if any. ANTLR's input stream
/// throws on invalid UTF-8, so the text is checked first and the byte reported with its place.
std::optional<size_t> firstInvalidUtf8(const std::string& s) {
  size_t i = support::asciiPrefix(s), n = s.size();
  while (i < n) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) { // most of every module: one comparison per byte
      ++i;
      continue;
    }
    size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (len == 0 || i + len > n) return i;
    for (size_t k = 1; k < len; ++k)
      if ((static_cast<unsigned char>(s[i + k]) >> 6) != 2) return i;
    uint32_t cp = len == 1 ? c : len == 2 ? (c & 0x1f) : len == 3 ? (c & 0x0f) : (c & 0x07);
    for (size_t k = 1; k < len; ++k)
      cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3f);
    bool overlong =
        (len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000);
    if (overlong || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return i;
    i += len;
  }
  return std::nullopt;
}

/// Brackets nest at most this deep (like clang's -fbracket-depth): the parser, the builder, the
/// verifier and the code generator recurse on nesting, and the bound keeps every one of them far
/// from the end of the stack, also under AddressSanitizer.
constexpr unsigned kMaxNesting = 256;

/// The bracket ('{', '(', '[' or '<') that opens level kMaxNesting + 1, if any. Strings and
/// comments are skipped as the lexer skips them; '->' is no bracket.
std::optional<SrcLoc> tooDeeplyNested(std::string_view text) {
  unsigned depth = 0;
  uint32_t line = 1, col = 1;
  // The bytes that matter below; any other ASCII byte only advances the column. Checking one
  // table entry first takes this scan from ~40 to a few instructions per byte.
  static const std::array<bool, 256> special = [] {
    std::array<bool, 256> t{};
    for (unsigned char c : std::string_view("\n\"/;#-{([<})]>"))
      t[c] = true;
    for (size_t c = 0x80; c < 256; ++c)
      t[c] = true; // column counting of UTF-8
    return t;
  }();
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (!special[static_cast<unsigned char>(c)]) {
      ++col;
      continue;
    }
    const char next = i + 1 < text.size() ? text[i + 1] : '\0';
    auto toEol = [&] {
      while (i + 1 < text.size() && text[i + 1] != '\n')
        ++i;
    };
    if (c == '\n') {
      ++line;
      col = 1;
      continue;
    }
    if ((static_cast<unsigned char>(c) >> 6) != 2) ++col; // columns count characters
    if (c == '"') {
      while (i + 1 < text.size() && text[i + 1] != '"' && text[i + 1] != '\n')
        i += text[i + 1] == '\\' ? 2 : 1;
      if (i + 1 < text.size() && text[i + 1] == '"') ++i;
    } else if ((c == '/' && next == '/') || c == ';' ||
               (c == '#' && (next == ' ' || next == '\t'))) {
      toEol();
    } else if (c == '-' && next == '>') {
      ++i;
    } else if (c == '{' || c == '(' || c == '[' || c == '<') {
      if (++depth > kMaxNesting) return SrcLoc{line, col - 1, 1};
    } else if ((c == '}' || c == ')' || c == ']' || c == '>') && depth > 0) {
      --depth;
    }
  }
  return std::nullopt;
}

/// Error recovery with a budget. ANTLR's recovery skips tokens until it can resynchronise and
/// keeps each skipped token as an error node; on garbage (2 MB of '%') that read every token of
/// the file into memory twice over while reporting a single error. Here skipped tokens build no
/// error nodes (a tree with syntax errors is dropped anyway), and once recovery has skipped or
/// retried kRecoveryBudget times the parse stops with an error at that point: memory stays
/// proportional to the input actually parsed.
class BoundedRecovery : public antlr4::DefaultErrorStrategy {
public:
  explicit BoundedRecovery(DiagEngine& d) : diags_(d) {}

  void recover(antlr4::Parser* recognizer, std::exception_ptr e) override {
    spend(recognizer, 1);
    antlr4::DefaultErrorStrategy::recover(recognizer, e);
  }
  antlr4::Token* recoverInline(antlr4::Parser* recognizer) override {
    spend(recognizer, 1);
    return antlr4::DefaultErrorStrategy::recoverInline(recognizer);
  }

protected:
  void consumeUntil(antlr4::Parser* recognizer, const antlr4::misc::IntervalSet& set) override {
    antlr4::TokenStream* in = recognizer->getTokenStream();
    for (size_t t = in->LA(1); t != antlr4::Token::EOF && !set.contains(t); t = in->LA(1)) {
      spend(recognizer, 1);
      in->consume();
    }
  }

private:
  static constexpr size_t kRecoveryBudget = 100000;
  void spend(antlr4::Parser* recognizer, size_t n) {
    spent_ += n;
    if (spent_ <= kRecoveryBudget) return;
    if (!diags_.errorLimitReached())
      diags_.error(locOf(recognizer->getTokenStream()->LT(1)),
                   "too much input that is not valid syntax; stopping here");
    throw TooManyErrors{};
  }
  DiagEngine& diags_;
  size_t spent_ = 0;
};

/// ANTLR keeps the prediction DFAs of every parse in static tables shared by all parsers: a
/// process that parses many different inputs (a fuzzer, a server) grows them without end.
/// Past this many states they are dropped and rebuilt on demand by the next parse. (The
/// generated lexer's DFA no longer grows: HandLexer lexes.)
constexpr size_t kMaxCachedDfaStates = 20000;

void boundParserCaches(ptogen::PTOParser& parser) {
  auto* p = parser.getInterpreter<antlr4::atn::ParserATNSimulator>();
  size_t states = 0;
  for (const antlr4::dfa::DFA& dfa : p->decisionToDFA)
    states += dfa.states.size();
  if (states <= kMaxCachedDfaStates) return;
  p->clearDFA();
}
/// Builds each function (and kernel) as soon as the parser has read it and then frees its parse
/// tree, so that the tree of one function is in memory at a time instead of the whole file's
/// (the tree was over half of pto-as's peak memory). Module attributes are read as soon as they
/// are parsed: the builder sees everything in the order it would walk the finished tree.
/// ANTLR owns the tree's nodes in the parser's tracker; the tracker is swapped for an empty one
/// when a function starts, so the nodes made inside it can be deleted together when it ends.
class FunctionStreamer final : public antlr4::tree::ParseTreeListener {
public:
  /// `fragment`: the file holds bare statements only (onlyStatements), streamed one at a time.
  /// `bodies`: function bodies hold one block each (oneBlockBodies), streamed a statement at a
  /// time.
  FunctionStreamer(ptogen::PTOParser& parser, LexedTokenStream& tokens, detail::Builder& builder,
                   bool fragment, bool bodies)
      : parser_(parser), tokens_(tokens), builder_(builder), fragment_(fragment), bodies_(bodies) {}
  FunctionStreamer(const FunctionStreamer&) = delete;
  FunctionStreamer& operator=(const FunctionStreamer&) = delete;
  ~FunctionStreamer() override {
    for (antlr4::tree::ParseTreeTracker& t : kept_)
      t.reset();
    done_.reset();
    header_.reset();
  }

  void enterEveryRule(antlr4::ParserRuleContext* ctx) override {
    // A file of statements: the file's node is kept, every item's nodes go to a tracker of
    // their own, emptied as each item is built.
    if (isFunction(ctx) || (fragment_ && ctx->getRuleIndex() == P::RuleFile))
      kept_.push_back(std::exchange(parser_.getTreeTracker(), std::move(spare_)));
    if (bodies_ && ctx->getRuleIndex() == P::RuleRegion && isFunction(parentOf(ctx)))
      beginBody(static_cast<P::RegionContext*>(ctx));
  }
  void exitEveryRule(antlr4::ParserRuleContext* ctx) override {
    // A syntax error unwinds the rules (exitRule runs from a destructor): nothing is built, the
    // whole file is parsed again with error recovery.
    if (std::uncaught_exceptions() > 0) return;
    const size_t rule = ctx->getRuleIndex();
    if (rule == P::RuleAttrDict && ctx->parent &&
        static_cast<antlr4::RuleContext*>(ctx->parent)->getRuleIndex() == P::RuleModuleOp)
      builder_.moduleAttrsStreamed(static_cast<P::ModuleOpContext*>(ctx->parent));
    if (rule == P::RuleTypeAlias)
      builder_.typeAliasStreamed(static_cast<P::TypeAliasContext*>(ctx));
    if (fragment_ && rule == P::RuleItem) return streamStatement(static_cast<P::ItemContext*>(ctx));
    if (body_ && rule == P::RuleStmt && parentOf(ctx) == body_)
      return streamBodyStatement(static_cast<P::StmtContext*>(ctx));
    if (!isFunction(ctx)) return;
    if (body_ && parentOf(body_) == ctx) {
      builder_.bodyStreamEnd(ctx);
      body_ = nullptr;
      done_.reset();
    } else {
      builder_.buildStreamed(ctx);
    }
    // The tracker's list is kept for the next function: freeing a list this long made malloc
    // consolidate its free lists, full of the nodes just deleted, once per function.
    std::swap(parser_.getTreeTracker(), spare_);
    spare_.reset();
    ctx->children.clear(); // the function's node stays (its item refers to it), empty
    header_.reset();       // a streamed body's signature and body node, listed there until now
    // So do its first and last tokens (the nodes around it refer to them); no node refers to
    // the tokens between any more, and their storage goes to the tokens still to come: the
    // tokens of the whole file were over half of pto-as's peak memory.
    const size_t first = ctx->start->getTokenIndex(), last = ctx->stop->getTokenIndex();
    if (last > first + 1) tokens_.releaseTokens(first + 1, last - 1);
  }
  void visitTerminal(antlr4::tree::TerminalNode*) override {}
  void visitErrorNode(antlr4::tree::ErrorNode*) override {}

private:
  /// A top-level statement of a file of statements: built into the fragment, then its item
  /// taken out of the file's node and its nodes and tokens freed (a million statements took
  /// 3 KB each of parse tree and tokens at pto-as's peak, #34 item 5). The last token read is
  /// kept until the next item is built: the parser may still look back at it.
  void streamStatement(P::ItemContext* item) {
    auto* file = static_cast<antlr4::ParserRuleContext*>(item->parent);
    P::StmtContext* stmt = item->stmt();
    if (!stmt || !file || file->children.empty() || file->children.back() != item) {
      // Not a statement after all (onlyStatements is a conservative test of the text): its
      // nodes stay for finish(), the next item's go to a fresh tracker.
      kept_.push_back(std::exchange(parser_.getTreeTracker(), std::move(spare_)));
      return;
    }
    builder_.fragmentStmtStreamed(stmt);
    file->children.pop_back();
    forgetBuilt(item->stop);
  }

  /// The parser enters a function's body, its signature read: the function is begun, and the
  /// nodes made so far (the function's, its signature's, the body's own) are kept apart until
  /// the function ends.
  void beginBody(P::RegionContext* region) {
    builder_.bodyStreamBegin(parentOf(region));
    body_ = region;
    header_ = std::exchange(parser_.getTreeTracker(), std::move(header_));
    keptFrom_ = region->start->getTokenIndex() + 1; // the body's `{` stays
  }
  /// A statement of a function's body as it ends (a kernel of 200k tile ops held 580 MB of parse
  /// tree and tokens until its end, #34): built into the function, then its nodes and tokens
  /// freed as streamStatement's. The body's node no longer lists anything (nothing reads it
  /// again: the function's node drops the body when the function ends).
  void streamBodyStatement(P::StmtContext* stmt) {
    builder_.bodyStmtStreamed(stmt);
    body_->children.clear();
    forgetBuilt(stmt->stop);
  }
  /// The nodes made since the last call and the tokens before `last` will not be read again.
  /// The parser still reads the current rule's node as it leaves it: those nodes wait in done_
  /// until the next call, the previous call's go now. The last token read is kept: the parser
  /// may look back at it.
  void forgetBuilt(antlr4::Token* lastToken) {
    done_.reset();
    std::swap(parser_.getTreeTracker(), done_);
    const size_t last = lastToken ? lastToken->getTokenIndex() : 0;
    if (last > keptFrom_) tokens_.releaseTokens(keptFrom_, last - 1);
    keptFrom_ = std::max(keptFrom_, last);
  }
  static antlr4::ParserRuleContext* parentOf(antlr4::ParserRuleContext* ctx) {
    return static_cast<antlr4::ParserRuleContext*>(ctx->parent);
  }
  static bool isFunction(antlr4::ParserRuleContext* ctx) {
    return ctx && (ctx->getRuleIndex() == P::RuleFuncOp || ctx->getRuleIndex() == P::RuleKernelOp);
  }
  ptogen::PTOParser& parser_;
  LexedTokenStream& tokens_;
  detail::Builder& builder_;
  std::vector<antlr4::tree::ParseTreeTracker> kept_; // the nodes outside functions
  antlr4::tree::ParseTreeTracker spare_;             // empty, with room
  antlr4::tree::ParseTreeTracker done_;              // the nodes of the last item built
  antlr4::tree::ParseTreeTracker header_; // a streamed body's function: signature, body node
  bool fragment_ = false;
  bool bodies_ = false;
  P::RegionContext* body_ = nullptr; // the function body being streamed
  size_t keptFrom_ = 1; // tokens before it are released (token 0 starts the file's node)
};

/// Whether every function body in a file is one block (no `^bb` label, so no cf branch to
/// one): its statements can be built as they are read, in order. Conservative: a `^` in a
/// comment or a string only makes the bodies parsed whole.
bool oneBlockBodies(std::string_view text) {
  return text.find('^') == std::string_view::npos;
}

/// Whether a file can hold nothing but bare statements (and the fragment be built as they are
/// read): no module, function or kernel, no type or location alias (an alias may be defined
/// after its use, the statements are then built after every alias). Conservative: a word in a
/// comment or a string only makes the file parsed whole.
bool onlyStatements(std::string_view text) {
  for (std::string_view word : {"module", "func.func", "kernel"})
    if (text.find(word) != std::string_view::npos) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '=') continue;
    size_t j = i + 1; // `= loc(`: a location alias
    while (j < text.size() && (text[j] == ' ' || text[j] == '\t'))
      ++j;
    if (text.substr(j, 4) == "loc(") return false;
    size_t k = i; // `!name =`: a type alias
    while (k > 0 && (text[k - 1] == ' ' || text[k - 1] == '\t'))
      --k;
    while (k > 0 && (std::isalnum(static_cast<unsigned char>(text[k - 1])) || text[k - 1] == '_' ||
                     text[k - 1] == '.' || text[k - 1] == '$' || text[k - 1] == '-'))
      --k;
    if (k > 0 && text[k - 1] == '!') return false;
  }
  return true;
}

/// Everything a parse allocates, the parse tree included, in the order it must be destroyed.
struct ParseState {
  ParseState(std::string_view text, DiagEngine& diags)
      : input(text), lexer(input), listener(diags), tokens(lexer), parser(&tokens) {
    lexer.setErrorListener(&listener);
    parser.removeErrorListeners();
    parser.addErrorListener(&listener);
    DfaFirstSimulator::install(parser);
  }
  CompactInputStream input; // valid UTF-8 (checked before)
  // The hand-written equivalent of the generated ptogen::PTOLexer (asm/parse/Lexer.h), before the
  // token stream: the tokens live in the lexer's arena.
  HandLexer lexer;
  SyntaxErrorListener listener;
  LexedTokenStream tokens;
  ptogen::PTOParser parser;
};

} // namespace

void assumeOneParserThread() {
  DfaFirstSimulator::assumeOneParserThread(true);
}

std::unique_ptr<ir::Module> parseModule(const SourceFile& src, DiagEngine& diags,
                                        std::optional<isa::Arch> arch) {
  if (auto deep = tooDeeplyNested(src.text())) {
    diags.error(*deep, "brackets nest more than " + std::to_string(kMaxNesting) + " levels deep");
    return nullptr;
  }
  if (auto bad = firstInvalidUtf8(src.text())) {
    uint32_t line = 1, col = 1;
    for (size_t i = 0; i < *bad; ++i) {
      if (src.text()[i] == '\n')
        line++, col = 1;
      else if ((static_cast<unsigned char>(src.text()[i]) >> 6) != 2)
        ++col;
    }
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02X", static_cast<unsigned char>(src.text()[*bad]));
    diags.error({line, col, 1}, std::string("invalid UTF-8 byte ") + hex + " in the input");
    return nullptr;
  }
  auto state = std::make_unique<ParseState>(src.text(), diags);
  LexedTokenStream& tokens = state->tokens;
  ptogen::PTOParser& parser = state->parser;
  // Two-stage parsing: the fast SLL mode first, full LL only when SLL reports a syntax error.
  // The first stage builds functions as it reads them, holding back what the builder reports;
  // after a syntax error that is dropped and the whole file is parsed again, then built.
  parser.getInterpreter<antlr4::atn::ParserATNSimulator>()->setPredictionMode(
      antlr4::atn::PredictionMode::SLL);
  parser.setErrorHandler(std::make_shared<antlr4::BailErrorStrategy>());
  auto builder = std::make_unique<detail::Builder>(src, diags, arch);
  builder->begin();
  FunctionStreamer streamer(parser, tokens, *builder, onlyStatements(src.text()),
                            oneBlockBodies(src.text()));
  parser.addParseListener(&streamer);
  diags.hold();
  P::FileContext* tree = nullptr;
  bool streamed = true;
  try {
    try {
      tree = parser.file();
    } catch (antlr4::ParseCancellationException&) {
      diags.dropHeld();
      parser.removeParseListeners();
      streamed = false;
      tokens.relexFromStart(); // the streamer released the tokens of the functions it built
      parser.reset();
      parser.setErrorHandler(std::make_shared<BoundedRecovery>(diags));
      parser.getInterpreter<antlr4::atn::ParserATNSimulator>()->setPredictionMode(
          antlr4::atn::PredictionMode::LL);
      tree = parser.file();
    }
  } catch (const TooManyErrors&) {
    diags.dropHeld();
    boundParserCaches(parser);
    return nullptr;
  }
  boundParserCaches(parser);
  if (diags.errors() > 0) { // syntax errors (the held diagnostics are not counted yet)
    diags.dropHeld();
    return nullptr;
  }
  if (streamed) {
    diags.releaseHeld();
    return builder->finish(tree);
  }
  detail::Builder fresh(src, diags, arch);
  return fresh.build(tree);
}

} // namespace pto::as
