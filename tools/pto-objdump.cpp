// pto-objdump: list PTO objects. -d prints canonical block assembly that pto-as reassembles
// into the same object; -h/-t/-r/--tiles/--gm-access/--raw describe the file
// (docs/object-format.md).
#include "asm/mc/Disasm.h"
#include "export/CppExport.h"
#include "obj/GmAccess.h"
#include "obj/Image.h"
#include "obj/Object.h"
#include "support/Escape.h"
#include "support/FileIO.h"

#include <CLI/CLI.hpp>

#include <iostream>

namespace {

/// The largest source file -S reads (the assembler's own input limit).
constexpr uint64_t kMaxSourceBytes = pto::obj::kDefaultMaxInputBytes;

bool readFile(const std::string& path, std::vector<uint8_t>& bytes) {
  if (auto e = pto::obj::readInputFile(path, bytes)) {
    std::cerr << "pto-objdump: error: " << *e << "\n";
    return false;
  }
  return true;
}

bool isImage(const std::vector<uint8_t>& bytes) {
  return bytes.size() > 17 && bytes[16] == 2 && bytes[17] == 0;
}

/// The exit status, 1 when standard output lost some of the listing (a full disk, a closed pipe).
int finish(int status) {
  if (auto e = pto::obj::flushStandardOutput()) {
    std::cerr << "pto-objdump: error: " << *e << "\n";
    return 1;
  }
  return status;
}

/// --cpp / --cpp-host: the C++ export of each linked image (objects have no planned tiles).
int exportCpp(const std::vector<std::string>& files, bool host) {
  int status = 0;
  for (const std::string& path : files) {
    std::vector<uint8_t> bytes;
    if (!readFile(path, bytes)) {
      status = 1;
      continue;
    }
    if (!isImage(bytes)) {
      std::cerr << "pto-objdump: error: '" << path
                << "': --cpp needs a linked image (run pto-ld), not an object\n";
      status = 1;
      continue;
    }
    auto img = pto::obj::readImage(bytes.data(), bytes.size());
    if (auto* err = std::get_if<std::string>(&img)) {
      std::cerr << "pto-objdump: error: '" << path << "': " << pto::support::visibleText(*err)
                << "\n";
      status = 1;
      continue;
    }
    const auto& im = std::get<pto::obj::Image>(img);
    auto text = host ? pto::cppexport::exportCppHost(im) : pto::cppexport::exportCpp(im);
    if (auto* e = std::get_if<pto::cppexport::ExportError>(&text)) {
      std::cerr << "pto-objdump: error: '" << path
                << "': cannot export C++: " << pto::support::visibleText(e->message) << "\n";
      status = 1;
      continue;
    }
    std::cout << std::get<std::string>(text);
  }
  return finish(status);
}

} // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "pto-objdump: display the contents of PTO object files. -d disassembles .text to canonical "
      "block assembly (pto-as reassembles it to the same bytes)."};
  app.set_version_flag("--version", std::string("pto-objdump (pto-toolchain) ") + PTO_VERSION);
  app.set_help_flag("--help", "Print this help message and exit"); // -h is the section table
  std::vector<std::string> files;
  pto::as::DisasmOptions opts;
  app.add_option("files", files, "Object files")->required();
  app.add_flag("-d,--disassemble", opts.disassemble,
               "Block assembly of .text with addresses and words");
  app.add_flag("-S,--source", opts.source,
               "Like -d, with the source lines (.pto.lines) interleaved");
  app.add_flag("-h,--section-headers", opts.headers, "The section table");
  app.add_flag("-t,--syms", opts.symbols, "The symbol table");
  app.add_flag("-r,--reloc", opts.relocs, "The relocations");
  app.add_flag("--tiles", opts.tiles, "The tile descriptor table of every function");
  bool gmAccess = false;
  app.add_flag("--gm-access", gmAccess,
               "The GM access records of the tile ops (.pto.gmaccess), after the other listings");
  app.add_flag("--raw", opts.raw, "The words of .text in hex, one instruction per line");
  app.add_flag("--blocks", opts.blocks,
               "Like -d, with a comment before each block: its kind, end and branch target");
  bool cpp = false, cppHost = false;
  app.add_flag("--cpp", cpp, "A linked image as pto-isa C++ (docs/cpp-export.md); alone");
  app.add_flag("--cpp-host", cppHost, "The host launcher of a linked image's C++ export; alone");
  CLI11_PARSE(app, argc, argv);
  // -S reads the source paths an object records: only regular files, bounded, and their lines
  // escaped (a control character in a source line never reaches the terminal raw).
  opts.readSource = [](const std::string& file) -> std::optional<std::string> {
    std::string text;
    if (pto::obj::readRegularFile(file, text, kMaxSourceBytes)) return std::nullopt;
    std::string lines;
    for (size_t start = 0; start < text.size();) {
      size_t end = text.find('\n', start);
      if (end == std::string::npos) end = text.size();
      std::string_view line(text.data() + start, end - start);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      lines += pto::support::visibleText(line) + "\n";
      start = end + 1;
    }
    return lines;
  };
  if (cpp || cppHost) return exportCpp(files, cppHost);
  if (opts.blocks && !opts.source) opts.disassemble = true;
  if (!(opts.disassemble || opts.source || opts.headers || opts.symbols || opts.relocs ||
        opts.tiles || opts.raw || gmAccess)) {
    std::cerr << "pto-objdump: error: give at least one of -d, -S, -h, -t, -r, --tiles, --raw, "
                 "--gm-access\n"
              << app.help();
    return 1;
  }
  int status = 0;
  for (size_t i = 0; i < files.size(); ++i) {
    const std::string& path = files[i];
    std::vector<uint8_t> bytes;
    if (!readFile(path, bytes)) {
      status = 1;
      continue;
    }
    // Linked images (ET_EXEC) are shown like objects: their placements, event ids and patched
    // words are the resolved ones; they carry no relocations.
    bool image = bytes.size() > 17 && bytes[16] == 2 && bytes[17] == 0;
    std::variant<pto::obj::ObjectFile, std::string> r = std::string();
    if (image) {
      auto img = pto::obj::readImage(bytes.data(), bytes.size());
      if (auto* err = std::get_if<std::string>(&img)) {
        r = *err;
      } else {
        const pto::obj::Image& im = std::get<pto::obj::Image>(img);
        pto::obj::ObjectFile o;
        o.arch = im.arch;
        o.usesExtensions = im.usesExtensions;
        o.text = im.text;
        o.functions = im.functions;
        o.lines = im.lines;
        for (const auto& e : im.events)
          o.events.push_back({e.function, e.name, e.srcPipe, e.dstPipe});
        r = std::move(o);
      }
    } else {
      r = pto::obj::readObject(bytes.data(), bytes.size());
    }
    if (auto* err = std::get_if<std::string>(&r)) {
      std::cerr << "pto-objdump: error: '" << path << "': " << pto::support::visibleText(*err)
                << "\n";
      status = 1;
      continue;
    }
    opts.fileName = path;
    if (i) std::cout << "\n";
    const pto::obj::ObjectFile& object = std::get<pto::obj::ObjectFile>(r);
    std::cout << pto::as::disassemble(object, opts, bytes);
    if (gmAccess) std::cout << "\n" << pto::obj::gmAccessListing(object); // images carry none
  }
  return finish(status);
}
