#include "support/Diagnostics.h"

#include <algorithm>
#include <cstring>
#include <ostream>

namespace pto::as {

SourceFile::SourceFile(std::string name, std::string text)
    : name_(std::move(name)), text_(std::move(text)) {
  lineStarts_.push_back(0);
  // memchr finds the line ends many bytes at a time (this was a visible cost on large files).
  const char* const begin = text_.data();
  const char* const end = begin + text_.size();
  for (const char* p = begin; (p = static_cast<const char*>(std::memchr(p, '\n', end - p)));)
    lineStarts_.push_back(static_cast<size_t>(++p - begin));
}

std::string_view SourceFile::lineText(uint32_t line) const {
  if (line == 0 || line > lineStarts_.size()) return {};
  size_t begin = lineStarts_[line - 1];
  size_t end = text_.find('\n', begin);
  if (end == std::string::npos) end = text_.size();
  std::string_view s(text_.data() + begin, end - begin);
  if (!s.empty() && s.back() == '\r') s.remove_suffix(1);
  return s;
}

void DiagEngine::report(Severity sev, SrcLoc loc, const std::string& msg) {
  if (holding_) {
    held_.push_back({sev, loc, msg});
    return;
  }
  if (sev == Severity::Error) {
    ++errors_;
    if (errors_ > errorLimit_) {
      if (!suppressed_) {
        flush();
        out_ << "fatal: too many errors emitted (limit " << errorLimit_ << "), stopping now\n";
      }
      suppressed_ = true;
      return;
    }
  } else if (sev == Severity::Warning) {
    ++warnings_;
  }
  if (suppressed_) return;
  std::string text = format(sev, loc, msg);
  if (!deferred_) {
    out_ << text;
    return;
  }
  if (sev == Severity::Note && !pending_.empty())
    pending_.back().text += text;
  else
    pending_.push_back({loc, std::move(text)});
}

void DiagEngine::releaseHeld() {
  holding_ = false;
  std::vector<Held> held = std::move(held_);
  held_.clear();
  for (const Held& h : held)
    report(h.sev, h.loc, h.msg);
}

void DiagEngine::flush() {
  std::stable_sort(pending_.begin(), pending_.end(), [](const Pending& a, const Pending& b) {
    return std::pair(a.loc.line, a.loc.col) < std::pair(b.loc.line, b.loc.col);
  });
  for (const Pending& p : pending_)
    out_ << p.text;
  pending_.clear();
}

namespace {
/// A control character as printable text ("\x1b"), so that a diagnostic never sends raw escape
/// sequences from the input to the terminal. Tabs stay (the caret line copies them).
std::string visible(char c) {
  const auto u = static_cast<unsigned char>(c);
  if ((u < 0x20 && c != '\t') || u == 0x7f) {
    static const char* hex = "0123456789abcdef";
    return std::string("\\x") + hex[u >> 4] + hex[u & 15];
  }
  return std::string(1, c);
}

std::string visibleText(std::string_view s, bool keepNewlines) {
  std::string out;
  out.reserve(s.size());
  for (char c : s)
    out += keepNewlines && c == '\n' ? std::string(1, c) : visible(c);
  return out;
}
} // namespace

std::string DiagEngine::format(Severity sev, SrcLoc loc, const std::string& msg) const {
  std::string out;
  const char* label = sev == Severity::Error     ? "error"
                      : sev == Severity::Warning ? "warning"
                                                 : "note";
  out += visibleText(file_.name(), false);
  if (loc.valid()) out += ':' + std::to_string(loc.line) + ':' + std::to_string(loc.col);
  out += std::string(": ") + label + ": " + visibleText(msg, true) + '\n';
  if (!loc.valid()) return out;
  std::string_view line = file_.lineText(loc.line);
  // A very long line (minified or garbage input) is shown as a window around the column.
  constexpr size_t kLongLine = 4096, kWindow = 512;
  std::string shown, caret;
  if (line.size() > kLongLine && loc.col > 0) {
    const size_t at = std::min<size_t>(loc.col - 1, line.size());
    const size_t begin = at > kWindow ? at - kWindow : 0;
    const size_t end = std::min(line.size(), at + kWindow);
    if (begin > 0) {
      shown = "...";
      caret = "   ";
    }
    line = line.substr(begin, end - begin);
    loc.col = static_cast<uint32_t>(at - begin + 1);
  }
  for (size_t i = 0; i < line.size(); ++i) {
    std::string v = visible(line[i]);
    shown += v;
    // The caret line copies tabs so that the caret lines up under tab-indented source; an
    // escaped character takes as many columns as its escape.
    if (i + 1 < loc.col)
      caret += line[i] == '\t' ? std::string(1, '\t') : std::string(v.size(), ' ');
  }
  out += shown + '\n';
  caret += '^';
  size_t room = line.size() >= loc.col ? line.size() - loc.col : 0;
  size_t tildes = std::min<size_t>(loc.len > 0 ? loc.len - 1 : 0, room);
  caret.append(tildes, '~');
  return out + caret + '\n';
}

} // namespace pto::as
