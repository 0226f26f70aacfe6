// Source buffers and clang-style diagnostics: "file:line:col: error: msg", the source line and a
// caret under the offending token, notes pointing at related places.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

namespace pto::as {

/// A location in a source buffer (1-based line and column; len = length of the token).
struct SrcLoc {
  uint32_t line = 0;
  uint32_t col = 0;
  uint32_t len = 1;
  bool valid() const { return line != 0; }
};

class SourceFile {
public:
  SourceFile(std::string name, std::string text);
  const std::string& name() const { return name_; }
  const std::string& text() const { return text_; }
  std::string_view lineText(uint32_t line) const;
  size_t numLines() const { return lineStarts_.size(); }
  /// The lexer counts lines by '\n' (as ANTLR does); a report counts them as compilers do, a
  /// lone '\r' ending a line too (CRLF is one end). The same place in those terms, and the text
  /// of such a line; the identity unless the text has a lone '\r'.
  SrcLoc displayLoc(SrcLoc loc) const;
  std::string_view displayLineText(uint32_t line) const;

private:
  std::string name_;
  std::string text_;
  std::vector<size_t> lineStarts_;
  std::vector<size_t> displayStarts_; // only when the text has a lone '\r'
};

enum class Severity { Error, Warning, Note };

/// Where the frontend's source is for a place in the .pto (MLIR debug locations): the position a
/// person reads first ("rope.py:23:8"), then the callers, innermost first; empty when unknown.
class FrontendLocator {
public:
  virtual ~FrontendLocator() = default;
  virtual std::vector<std::string> placesAt(SrcLoc loc) const = 0;
};

class DiagEngine {
public:
  DiagEngine(const SourceFile& file, std::ostream& out) : file_(file), out_(out) {}
  void error(SrcLoc loc, const std::string& msg) { report(Severity::Error, loc, msg); }
  void warning(SrcLoc loc, const std::string& msg) { report(Severity::Warning, loc, msg); }
  void note(SrcLoc loc, const std::string& msg) { report(Severity::Note, loc, msg); }
  void report(Severity sev, SrcLoc loc, const std::string& msg);
  unsigned errors() const { return errors_; }
  unsigned warnings() const { return warnings_; }
  /// With --fatal-warnings every warning also counts as an error.
  void setWarningsAreErrors(bool on) { warningsAreErrors_ = on; }
  bool failed() const { return errors_ > 0 || (warningsAreErrors_ && warnings_ > 0); }
  /// Stops reporting after this many errors (the rest are counted, one summary line printed).
  void setErrorLimit(unsigned n) { errorLimit_ = n; }
  /// Whether the error limit has been passed (later errors are only counted).
  bool errorLimitReached() const { return suppressed_; }
  const SourceFile& file() const { return file_; }
  /// With a locator, a report on a .pto place that has a debug location starts with that
  /// location ("rope.py:23:8: error: ..."), a note names the .pto line with its caret, and each
  /// caller adds "note: called from ...". Deferred reports use the locator set when flushed.
  void setLocator(const FrontendLocator* locator) { locator_ = locator; }
  /// Deferred mode: diagnostics are kept and printed by flush() in source order (a note stays
  /// with the error or warning before it), so build-time and verify-time errors interleave.
  void setDeferred(bool on) { deferred_ = on; }
  void flush();
  /// Holding: reports are kept back, neither counted nor printed, until releaseHeld() reports
  /// them in order or dropHeld() forgets them. The front end builds functions while it is still
  /// parsing, and a syntax error later in the file must leave only the syntax errors reported.
  void hold() { holding_ = true; }
  void releaseHeld();
  void dropHeld() {
    holding_ = false;
    held_.clear();
  }
  ~DiagEngine() { flush(); }

private:
  const SourceFile& file_;
  std::ostream& out_;
  unsigned errors_ = 0;
  unsigned warnings_ = 0;
  unsigned errorLimit_ = 50;
  bool warningsAreErrors_ = false;
  bool suppressed_ = false;
  bool deferred_ = false;
  const FrontendLocator* locator_ = nullptr;
  struct Pending {
    SrcLoc loc;
    Severity sev;
    std::string msg;
    std::vector<std::pair<SrcLoc, std::string>> notes; // formatted when flushed
  };
  std::vector<Pending> pending_;
  struct Held {
    Severity sev;
    SrcLoc loc;
    std::string msg;
  };
  bool holding_ = false;
  std::vector<Held> held_;
  std::string format(Severity sev, SrcLoc loc, const std::string& msg) const;
  std::string formatPlain(Severity sev, SrcLoc loc, const std::string& msg) const;
};

} // namespace pto::as
