// Escaping text that comes from an input (an object, an image, a source file, a command line)
// before it goes where it could be interpreted: a terminal, generated C++, a file name. Every
// tool and the export go through these, so there is one rule for each destination.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace pto::support {

/// `s` as a terminal may safely show it: C0 controls (tabs kept), DEL, the C1 controls
/// (U+0080..U+009F, U+009B among them: a one-character CSI) and bytes that are not UTF-8 become
/// escapes ("\x1b", "\u009b"); with `keepNewlines` a '\n' stays a line break.
std::string visibleText(std::string_view s, bool keepNewlines = false);
/// One character of `s` at `i` as visibleText shows it, and its length in bytes.
std::pair<std::string, size_t> visibleChar(std::string_view s, size_t i);

/// A C++ string literal, quotes included, whose value is exactly the bytes of `s`: printable
/// ASCII stays (but '"', '\\' and '?', escaped), every other byte is a three-digit octal escape,
/// so nothing in `s` can end the literal, splice a line or form a trigraph.
std::string cppStringLiteral(std::string_view s);

/// `s` as the text of a `//` comment: printable ASCII stays, every other byte (a newline or a
/// CR ending the comment, any control, non-ASCII bytes) and the backslash (a line splice) is
/// written "\xNN", and "??" as "?\x3f" (no trigraph), so the comment ends where the generator
/// ends it.
std::string cppCommentText(std::string_view s);

/// The bytes of an MLIR string literal (quotes included: "a\"b\n"): escapes \" \\ \n \t and
/// two hex digits (\0A); nothing when it is not one.
std::optional<std::string> mlirStringValue(std::string_view quoted);

/// Whether `name` may be used as one file name in a directory: 1 to 200 of [A-Za-z0-9_.+-],
/// not starting with '.' or '-' (no "..", no hidden file, no option look-alike).
bool isSafeFileName(std::string_view name);

/// `dir`/`name``ext` when `name` is a safe file name and the path, with every symbolic link
/// followed, stays inside `dir`; else an error message naming `what` (e.g. "parameter %x").
/// `dir` must exist.
std::optional<std::string> safePathIn(const std::string& dir, std::string_view name,
                                      std::string_view ext, const std::string& what,
                                      std::string& err);

} // namespace pto::support
