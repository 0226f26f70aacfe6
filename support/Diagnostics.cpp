#include "support/Diagnostics.h"

#include "support/Escape.h"

#include <algorithm>
#include <cstring>
#include <limits>
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
  bool loneCr = false;
  for (const char* p = begin;
       !loneCr && (p = static_cast<const char*>(std::memchr(p, '\r', end - p))); ++p)
    loneCr = p + 1 == end || p[1] != '\n';
  if (!loneCr) return;
  displayStarts_.push_back(0);
  for (size_t i = 0; i < text_.size(); ++i)
    if (text_[i] == '\n' || (text_[i] == '\r' && (i + 1 == text_.size() || text_[i + 1] != '\n')))
      displayStarts_.push_back(i + 1);
}

SrcLoc SourceFile::displayLoc(SrcLoc loc) const {
  if (displayStarts_.empty() || !loc.valid() || loc.line > lineStarts_.size()) return loc;
  // The byte offset of the column (columns count code points), then its line and column again.
  size_t at = lineStarts_[loc.line - 1];
  for (uint32_t c = 1; c < loc.col && at < text_.size() && text_[at] != '\n'; ++c)
    do
      ++at;
    while (at < text_.size() && (static_cast<unsigned char>(text_[at]) & 0xc0) == 0x80);
  auto it = std::upper_bound(displayStarts_.begin(), displayStarts_.end(), at);
  const size_t start = *(it - 1);
  uint32_t col = 1;
  for (size_t i = start; i < at; ++i)
    if ((static_cast<unsigned char>(text_[i]) & 0xc0) != 0x80) ++col;
  return {static_cast<uint32_t>(it - displayStarts_.begin()), col, loc.len};
}

std::string_view SourceFile::displayLineText(uint32_t line) const {
  if (displayStarts_.empty()) return lineText(line);
  if (line == 0 || line > displayStarts_.size()) return {};
  const size_t begin = displayStarts_[line - 1];
  size_t end = line < displayStarts_.size() ? displayStarts_[line] : text_.size();
  std::string_view s(text_.data() + begin, end - begin);
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
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
  if (!deferred_) {
    out_ << format(sev, loc, msg);
    return;
  }
  if (sev == Severity::Note && !pending_.empty())
    pending_.back().notes.emplace_back(loc, msg);
  else
    pending_.push_back({loc, sev, msg, {}});
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
  for (const Pending& p : pending_) {
    out_ << format(p.sev, p.loc, p.msg);
    for (const auto& [loc, msg] : p.notes)
      out_ << format(Severity::Note, loc, msg);
  }
  pending_.clear();
}

namespace {
/// A message with every run of more than kLongWord characters without a space (a huge token
/// quoted whole) cut to its first kLongWord characters and "...", so a report stays a line wide.
std::string shortenLongWords(std::string text) {
  constexpr size_t kLongWord = 100;
  std::string out;
  size_t run = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == ' ' || c == '\n') {
      run = 0;
    } else if ((static_cast<unsigned char>(c) & 0xc0) != 0x80 && ++run > kLongWord) {
      // Skip to the end of the run; its last character (a closing quote) stays.
      size_t end = text.find_first_of(" \n", i);
      if (end == std::string::npos) end = text.size();
      out += "...";
      if (end - i > 1 && (text[end - 1] == '\'' || text[end - 1] == '"')) out += text[end - 1];
      i = end - 1;
      run = 0;
      continue;
    }
    out += c;
  }
  return out;
}

} // namespace

std::string DiagEngine::format(Severity sev, SrcLoc loc, const std::string& msg) const {
  std::string out;
  const char* label = sev == Severity::Error     ? "error"
                      : sev == Severity::Warning ? "warning"
                                                 : "note";
  if (locator_ && loc.valid()) {
    std::vector<std::string> places = locator_->placesAt(loc);
    if (!places.empty()) {
      // The frontend's place first, then its callers, then the .pto line with its caret.
      out += support::visibleText(places[0], false) + ": " + label + ": " +
             shortenLongWords(support::visibleText(msg, true)) + '\n';
      for (size_t i = 1; i < places.size(); ++i)
        out += "note: called from " + support::visibleText(places[i], false) + '\n';
      return out + formatPlain(Severity::Note, loc, "in the .pto here");
    }
  }
  return formatPlain(sev, loc, msg);
}

std::string DiagEngine::formatPlain(Severity sev, SrcLoc loc, const std::string& msg) const {
  std::string out;
  const char* label = sev == Severity::Error     ? "error"
                      : sev == Severity::Warning ? "warning"
                                                 : "note";
  loc = file_.displayLoc(loc);
  out += support::visibleText(file_.name(), false);
  if (loc.valid()) out += ':' + std::to_string(loc.line) + ':' + std::to_string(loc.col);
  out +=
      std::string(": ") + label + ": " + shortenLongWords(support::visibleText(msg, true)) + '\n';
  if (!loc.valid()) return out;
  std::string_view line = file_.displayLineText(loc.line);
  // The line as a terminal shows it, characters counted as the columns are (one per code point):
  // a long line (minified or garbage input, a huge token) is shown as a window of about a
  // terminal's width around the column.
  constexpr size_t kLongLine = 4096;
  constexpr uint32_t kWindow = 80;
  const bool window = line.size() > kLongLine;
  const uint32_t first = window && loc.col > kWindow ? loc.col - kWindow : 1;
  const uint32_t last = window ? loc.col + std::min<uint32_t>(loc.len, kWindow) + kWindow / 2
                               : std::numeric_limits<uint32_t>::max();
  std::string shown, caret;
  if (first > 1) {
    shown = "...";
    caret = "   ";
  }
  uint32_t col = 1;
  size_t i = 0;
  for (; i < line.size() && col <= last; ++col) {
    auto [v, n] = support::visibleChar(line, i);
    if (col >= first) {
      shown += v;
      // The caret line copies tabs so that the caret lines up under tab-indented source; an
      // escaped character takes as many columns as its escape, any other character one.
      const size_t width = static_cast<unsigned char>(v[0]) >= 0x80 ? 1 : v.size();
      if (col < loc.col)
        caret += line[i] == '\t' ? std::string(1, '\t') : std::string(width, ' ');
      else if (col == loc.col)
        caret += '^' + std::string(width - 1, '~');
      else if (col < loc.col + loc.len)
        caret += std::string(width, '~');
    }
    i += n;
  }
  if (i < line.size()) shown += "...";
  if (col <= loc.col) caret += '^'; // the column is at or past the end of the line
  out += shown + '\n';
  return out + caret + '\n';
}

} // namespace pto::as
