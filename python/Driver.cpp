#include "python/Driver.h"

#include "asm/codegen/CodeGen.h"
#include "asm/codegen/RecordExtents.h"
#include "asm/ir/Verifier.h"
#include "asm/mc/BlockAsm.h"
#include "asm/parse/Locations.h"
#include "asm/parse/Parser.h"
#include "obj/Image.h"
#include "support/Escape.h"
#include "support/FileIO.h"

#include <filesystem>
#include <sstream>

namespace pto::python {

std::string toolMessage(std::string_view tool, const std::string& msg) {
  const std::string text = support::visibleText(msg, true);
  return text.starts_with("error: ") ? std::string(tool) + ": " + text : text;
}

std::string readSource(const std::string& path, std::string_view tool) {
  std::string text;
  if (auto e = obj::readInputFile(path, text))
    throw ToolError{std::string(tool) + ": error: " + *e};
  return text;
}

namespace {

/// The printed diagnostics without the last line end (an exception's text has none).
std::string trimmed(std::string text) {
  while (!text.empty() && text.back() == '\n')
    text.pop_back();
  return text;
}

/// pto-as's closing line after its diagnostics: "N error(s) generated.".
[[noreturn]] void failAssembly(const std::ostringstream& out, const as::DiagEngine& diags) {
  std::string text = out.str();
  text += std::to_string(diags.errors()) + (diags.errors() == 1 ? " error" : " errors") +
          " generated.\n";
  throw ToolError{trimmed(text)};
}

std::vector<uint8_t> objectBytes(const obj::ObjectFile& object) {
  auto bytes = obj::writeObject(object);
  if (auto* e = std::get_if<std::string>(&bytes))
    throw ToolError{"pto-as: error: cannot write the object: " + *e};
  return std::get<std::vector<uint8_t>>(bytes);
}

/// Canonical block assembly (what pto-objdump -d prints) straight to an object, as pto-as does.
obj::ObjectFile assembleBlocks(const as::SourceFile& src, as::DiagEngine& diags,
                               std::ostringstream& out, std::optional<isa::Arch> arch) {
  auto object = as::assembleBlockText(src, diags);
  if (object && object->functions.empty())
    diags.warning({}, "no functions in '" + src.name() + "'");
  diags.flush();
  if (!object || diags.failed()) failAssembly(out, diags);
  if (arch) object->arch = *arch;
  return std::move(*object);
}

/// Any other form: parse, verify (with the module's debug locations first in reports, as
/// pto-as), lower and record the extents.
obj::ObjectFile assembleModule(const as::SourceFile& src, as::DiagEngine& diags,
                               std::ostringstream& out, std::optional<isa::Arch> archFlag) {
  auto module = as::parseModule(src, diags, archFlag);
  std::optional<as::ModuleLocator> locator;
  if (module) {
    locator.emplace(*module);
    diags.setLocator(&*locator);
  }
  struct LocatorGuard { // the last reports are flushed while the module is alive
    as::DiagEngine& diags;
    ~LocatorGuard() {
      diags.flush();
      diags.setLocator(nullptr);
    }
  } guard{diags};
  if (module) {
    const isa::Arch arch = as::resolveArch(*module, archFlag);
    as::verifyModule(*module, arch, diags);
    as::verifyTAssignMode(*module, false, false, diags);
    if (module->functions.empty() && diags.errors() == 0)
      diags.warning({}, "no functions in '" + src.name() + "'");
  }
  diags.flush();
  if (!module || diags.failed()) failAssembly(out, diags);
  auto object = as::lowerModule(*module, as::resolveArch(*module, archFlag), diags);
  diags.flush();
  if (!object) failAssembly(out, diags);
  as::recordExtents(*module, *object);
  return std::move(*object);
}

} // namespace

AssembledObject assemble(const std::string& text, const std::string& filename,
                         std::optional<isa::Arch> arch) {
  as::SourceFile src(filename, text);
  std::ostringstream out;
  AssembledObject result;
  {
    as::DiagEngine diags(src, out);
    diags.setDeferred(true);
    result.object = as::looksLikeBlockAssembly(src.text()) ? assembleBlocks(src, diags, out, arch)
                                                           : assembleModule(src, diags, out, arch);
  }
  result.warnings = trimmed(out.str());
  result.bytes = objectBytes(result.object);
  result.name = std::filesystem::path(filename).stem().string() + ".o";
  return result;
}

LoadedImage loadImageBytes(std::vector<uint8_t> bytes, const std::string& name) {
  auto mod = rt::Module::load(bytes, name);
  if (!mod) throw ToolError{toolMessage("pto-run", mod.error().message)};
  LoadedImage img;
  img.module = std::make_shared<const rt::Module>(std::move(mod.value()));
  img.bytes = std::move(bytes);
  return img;
}

LoadedImage loadImageFile(const std::string& path) {
  std::vector<uint8_t> bytes;
  if (auto e = obj::readInputFile(path, bytes)) throw ToolError{"pto-run: error: " + *e};
  return loadImageBytes(std::move(bytes), path);
}

LoadedImage linkObjects(const std::vector<const AssembledObject*>& objects,
                        const link::LinkOptions& opts) {
  std::vector<link::InputObject> inputs;
  for (const AssembledObject* o : objects)
    inputs.push_back({o->name, o->object});
  link::LinkResult res = link::link(inputs, opts);
  std::string printed;
  for (const auto& d : res.diags)
    printed += "pto-ld: " + std::string(link::severity(d)) + d.text + "\n";
  if (!res.ok()) throw ToolError{trimmed(printed)};
  auto bytes = obj::writeImage(*res.image);
  if (auto* e = std::get_if<std::string>(&bytes))
    throw ToolError{"pto-ld: error: cannot write the image: " + *e};
  const std::string name =
      objects.empty() ? "a.img"
                      : std::filesystem::path(objects.front()->name).stem().string() + ".img";
  LoadedImage img = loadImageBytes(std::move(std::get<std::vector<uint8_t>>(bytes)), name);
  img.warnings = trimmed(printed);
  return img;
}

std::shared_ptr<ParsedSource> parseSource(const std::string& text, const std::string& filename,
                                          std::optional<isa::Arch> archFlag) {
  auto parsed = std::make_shared<ParsedSource>();
  parsed->file = std::make_unique<as::SourceFile>(filename, text);
  std::ostringstream out;
  {
    as::DiagEngine diags(*parsed->file, out);
    parsed->module = as::parseModule(*parsed->file, diags, archFlag);
    if (parsed->module && !diags.failed()) {
      parsed->arch = as::resolveArch(*parsed->module, archFlag);
      as::verifyModule(*parsed->module, parsed->arch, diags);
    }
    diags.flush();
    if (!parsed->module || diags.failed()) {
      diags.flush();
      throw ToolError{trimmed(out.str())};
    }
  }
  return parsed;
}

} // namespace pto::python
