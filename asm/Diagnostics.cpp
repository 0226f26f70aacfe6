#include "asm/Diagnostics.h"

#include <algorithm>
#include <ostream>

namespace pto::as {

SourceFile::SourceFile(std::string name, std::string text)
    : name_(std::move(name)), text_(std::move(text)) {
  lineStarts_.push_back(0);
  for (size_t i = 0; i < text_.size(); ++i)
    if (text_[i] == '\n') lineStarts_.push_back(i + 1);
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
  if (sev == Severity::Note && !pending_.empty()) pending_.back().text += text;
  else pending_.push_back({loc, std::move(text)});
}

void DiagEngine::flush() {
  std::stable_sort(pending_.begin(), pending_.end(), [](const Pending& a, const Pending& b) {
    return std::pair(a.loc.line, a.loc.col) < std::pair(b.loc.line, b.loc.col);
  });
  for (const Pending& p : pending_) out_ << p.text;
  pending_.clear();
}

std::string DiagEngine::format(Severity sev, SrcLoc loc, const std::string& msg) const {
  std::string out;
  const char* label = sev == Severity::Error ? "error" : sev == Severity::Warning ? "warning" : "note";
  out += file_.name();
  if (loc.valid()) out += ':' + std::to_string(loc.line) + ':' + std::to_string(loc.col);
  out += std::string(": ") + label + ": " + msg + '\n';
  if (!loc.valid()) return out;
  std::string_view line = file_.lineText(loc.line);
  out += std::string(line) + '\n';
  // The caret line copies tabs so that the caret lines up under tab-indented source.
  std::string caret;
  for (uint32_t i = 1; i < loc.col && i - 1 < line.size(); ++i) caret += line[i - 1] == '\t' ? '\t' : ' ';
  caret += '^';
  size_t room = line.size() >= loc.col ? line.size() - loc.col : 0;
  size_t tildes = std::min<size_t>(loc.len > 0 ? loc.len - 1 : 0, room);
  caret.append(tildes, '~');
  return out + caret + '\n';
}

} // namespace pto::as
