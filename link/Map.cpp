// The -Map file (docs/linking.md, "The map file"): like GNU ld's map, the entry table, the
// functions, the buffer map, every tile's placement and live range, and the event ids.
#include "link/Linker.h"

#include <cstdio>

namespace pto::link {

namespace {
std::string archName(isa::Arch a) {
  return std::string(isa::profile(a).name);
}
} // namespace

std::string formatMap(const LinkResult& r) {
  std::string out;
  char buf[512];
  if (!r.image) return out;
  const obj::Image& img = *r.image;
  out += "Target: " + archName(img.arch) + (img.usesExtensions ? " (extensions)" : "") + "\n\n";
  out += "Entry table\n";
  for (const obj::ImageEntry& e : img.entries) {
    std::snprintf(buf, sizeof buf, "  0x%08llx  @%s\n",
                  static_cast<unsigned long long>(img.functions[e.function].textOffset),
                  e.name.c_str());
    out += buf;
  }
  out += "\nFunctions\n";
  for (size_t f = 0; f < img.functions.size(); ++f) {
    const obj::Function& fn = img.functions[f];
    std::snprintf(buf, sizeof buf, "  0x%08llx  0x%06llx  @%s%s  %s\n",
                  static_cast<unsigned long long>(fn.textOffset),
                  static_cast<unsigned long long>(fn.textSize), fn.name.c_str(),
                  (fn.flags & obj::kEntry) ? " (entry)" : "", r.functionOrigin[f].c_str());
    out += buf;
  }
  out += "\nBuffer map\n";
  std::snprintf(buf, sizeof buf, "  %-12s %-8s %10s %10s %6s\n", "function", "buffer", "used",
                "capacity", "align");
  out += buf;
  for (const obj::BufferUse& b : img.layout) {
    std::snprintf(buf, sizeof buf, "  %-12s %-8s 0x%08llx 0x%08x %6u\n",
                  ("@" + img.functions[b.function].name).c_str(),
                  std::string(isa::spelling(b.loc)).c_str(),
                  static_cast<unsigned long long>(b.used), b.capacity, b.alignment);
    out += buf;
  }
  out += "\nTile placement\n";
  std::snprintf(buf, sizeof buf, "  %-12s %-16s %-8s %-10s %-10s %-23s %-8s %s\n", "function",
                "tile", "buffer", "offset", "size", "live", "kind", "source");
  out += buf;
  for (const MapTile& t : r.tiles) {
    std::string live = t.used ? "0x" : "-";
    if (t.used) {
      char lb[64];
      std::snprintf(lb, sizeof lb, "0x%08llx..0x%08llx",
                    static_cast<unsigned long long>(t.liveFrom),
                    static_cast<unsigned long long>(t.liveTo));
      live = lb;
    }
    std::string kind = t.viewOf >= 0 ? "view" : t.manual ? "manual" : t.used ? "planned" : "unused";
    std::snprintf(
        buf, sizeof buf, "  %-12s %-16s %-8s 0x%08llx 0x%08llx %-23s %-8s %s\n",
        ("@" + img.functions[t.function].name).c_str(), ("%" + t.name).c_str(),
        std::string(isa::spelling(t.loc)).c_str(), static_cast<unsigned long long>(t.offset),
        static_cast<unsigned long long>(t.bytes), live.c_str(), kind.c_str(), t.source.c_str());
    out += buf;
  }
  out += "\nEvents\n";
  for (const MapEvent& e : r.events) {
    std::string pend = "never pending";
    if (e.pendingTo) {
      char lb[64];
      std::snprintf(lb, sizeof lb, "0x%08llx..0x%08llx",
                    static_cast<unsigned long long>(e.pendingFrom),
                    static_cast<unsigned long long>(e.pendingTo));
      pend = lb;
    }
    std::snprintf(buf, sizeof buf, "  %-12s @%-15s %-9s -> %-9s id %-2d %s\n",
                  ("@" + img.functions[e.function].name).c_str(), e.name.c_str(),
                  std::string(isa::spelling(e.src)).c_str(),
                  std::string(isa::spelling(e.dst)).c_str(), e.id, pend.c_str());
    out += buf;
  }
  out += "\nSync\n";
  for (size_t f = 0; f < r.functionSync.size() && f < img.functions.size(); ++f)
    out += "  @" + img.functions[f].name + "  " + r.functionSync[f].describe(r.syncMode) + "\n";
  if (!r.multiBufferLog.empty()) {
    out += "\nMulti-buffer\n";
    for (const std::string& l : r.multiBufferLog)
      out += "  " + l + "\n";
  }
  if (!r.syncLog.empty()) {
    out += "\nAuto-sync\n";
    for (const std::string& l : r.syncLog)
      out += "  " + l + "\n";
  }
  return out;
}

} // namespace pto::link
