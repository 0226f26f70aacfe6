// The Python module's drivers (docs/python.md): text to an object as pto-as makes it, objects to
// an image as pto-ld links them, images loaded as pto-run loads them, and a source parsed and
// verified as `pto-run kernel.pto` does. Each calls the same library entry points as its tool, in
// the same order, and a failure is a ToolError holding the diagnostics exactly as the tool prints
// them. Nothing here knows Python.
#pragma once

#include "asm/ir/IR.h"
#include "isa/Isa.h"
#include "link/Linker.h"
#include "obj/Object.h"
#include "runtime/Runtime.h"
#include "support/Diagnostics.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace pto::python {

/// A failure: `text` is what the tool prints (pto.Error's str()).
struct ToolError {
  std::string text;
};

/// A message of a library as the tool named `tool` prints it: escaped for a terminal, and
/// "tool: " before one that starts with "error: " (as pto-run's fail()).
std::string toolMessage(std::string_view tool, const std::string& msg);

/// The text of a source file (pto-as's reading: support/FileIO.h); ToolError "pto-as: error: ...".
std::string readSource(const std::string& path, std::string_view tool);

/// An assembled object: what pto-as would write, and the warnings it printed.
struct AssembledObject {
  obj::ObjectFile object;
  std::vector<uint8_t> bytes;
  std::string name; // the object's file name as pto-as names its output: k.pto -> k.o
  std::string warnings;
};

/// pto-as: parse any accepted form, verify for `arch` (default: the module's pto.target_arch),
/// lower, record extents, write the object.
AssembledObject assemble(const std::string& text, const std::string& filename,
                         std::optional<isa::Arch> arch);

/// A loaded image and its bytes.
struct LoadedImage {
  std::shared_ptr<const rt::Module> module;
  std::vector<uint8_t> bytes;
  std::string warnings; // the linker's (e.g. a race reported with allow_races)
};

/// pto-ld: the objects linked (in order) into an image, loaded as pto-run loads it.
LoadedImage linkObjects(const std::vector<const AssembledObject*>& objects,
                        const link::LinkOptions& opts);

/// An image from bytes (`name` is used in messages) or from a file.
LoadedImage loadImageBytes(std::vector<uint8_t> bytes, const std::string& name);
LoadedImage loadImageFile(const std::string& path);

/// A source parsed and verified as `pto-run kernel.pto` does (no assembling or linking).
struct ParsedSource {
  std::unique_ptr<as::SourceFile> file;
  std::unique_ptr<ir::Module> module;
  isa::Arch arch = isa::Arch::A2A3;
};
std::shared_ptr<ParsedSource> parseSource(const std::string& text, const std::string& filename,
                                          std::optional<isa::Arch> arch);

} // namespace pto::python
