#include "obj/FileIO.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>

namespace pto::obj {

std::optional<std::string> writeFileAtomically(const std::string& path, std::string_view data) {
  if (path == "-") {
    std::cout.write(data.data(), static_cast<std::streamsize>(data.size()));
    if (!std::cout.flush()) return std::string("cannot write to standard output");
    return std::nullopt;
  }
  std::string tmp = path + ".tmp" + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out || !out.write(data.data(), static_cast<std::streamsize>(data.size())) || !out.flush()) {
      std::remove(tmp.c_str());
      return "cannot write '" + path + "'";
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::remove(tmp.c_str());
    return "cannot write '" + path + "': " + ec.message();
  }
  return std::nullopt;
}

} // namespace pto::obj
