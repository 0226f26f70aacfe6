// The scalar interpreter: runs one block (one simulated core) of a decoded function.
#include "runtime/ScalarInterp.h"

#include "runtime/Comm.h"

#include <cstdio>
#include <cstring>
#include <optional>

namespace pto::rt {

const GmRegion* Core::regionOf(uint64_t addr) const {
  const std::vector<GmRegion>* regions = gm;
  if (auto r = rankTagOf(addr)) {
    regions = world ? world->regionsOf(*r) : nullptr;
    if (!regions) return nullptr;
    addr &= ~kRankTagMask;
  }
  uint64_t region = addr >> kRegionShift;
  if (region == 0 || region > regions->size()) return nullptr;
  return &(*regions)[region - 1];
}

namespace {

/// Offsets an address carries faithfully: translate reads the upper half of a region's offsets
/// as negative offsets from the next region's base.
constexpr obj::WideInt kHalfRegion = obj::WideInt{1} << (kRegionShift - 1);

/// The argument (index into gm) and exact byte position of `base` + `offset`, when `base` is
/// an argument's pointer (an offset in the upper half of a region belongs to the next one).
std::optional<std::pair<size_t, obj::WideInt>> gmPosition(const std::vector<GmRegion>& gm,
                                                          uint64_t base, obj::WideInt offset) {
  uint64_t region = base >> kRegionShift;
  obj::WideInt off = static_cast<obj::WideInt>(base & kRegionMask);
  if (region == kStackRegion || region == kPoisonRegion) return std::nullopt;
  if (off >= kHalfRegion && region < gm.size()) {
    ++region;
    off -= obj::WideInt{1} << kRegionShift;
  }
  if (region == 0 || region > gm.size()) return std::nullopt;
  return std::pair{static_cast<size_t>(region - 1), off + offset};
}

/// "element 4611686018427387906 of argument %a (4 elements)", or in bytes when the position is
/// not a whole number of elements.
std::string elementText(const GmRegion& g, obj::WideInt pos, uint64_t elemBytes) {
  if (elemBytes > 0 && pos % static_cast<obj::WideInt>(elemBytes) == 0)
    return "element " + obj::wideText(pos / static_cast<obj::WideInt>(elemBytes)) +
           " of argument %" + g.name + " (" + std::to_string(g.size / elemBytes) + " elements)";
  return "byte " + obj::wideText(pos) + " of argument %" + g.name + " (" + std::to_string(g.size) +
         " bytes)";
}

} // namespace

namespace {
/// The part of a byte offset that moves between ranks' windows: the multiple of kRankStride
/// nearest to it (a peer's copy of a pointer is the pointer plus (rank + 1) * kRankStride).
obj::WideInt rankPart(obj::WideInt offset) {
  constexpr obj::WideInt kStride = static_cast<obj::WideInt>(kRankStride);
  return ((offset + kStride / 2) >> kRankShift) * kStride;
}
} // namespace

/// A rank tag in `base` or an offset whose rank part moves it to another window (a tag of
/// 0..126 after the move): the exact address, with the rank part checked apart. nullopt when
/// neither, or when the move leaves every rank's tag (then the offset is an ordinary one, and
/// far outside the argument).
std::optional<uint64_t> Core::peerAddress(uint64_t base, obj::WideInt offset, uint64_t elemBytes) {
  if ((base >> kRegionShift) == kPoisonRegion) return std::nullopt;
  const obj::WideInt part = rankPart(offset);
  if (!rankTagOf(base) && part == 0) return std::nullopt;
  const obj::WideInt tag =
      static_cast<obj::WideInt>((base & kRankTagMask) >> kRankShift) + (part >> kRankShift);
  if (tag < 0 || tag > kMaxRanks) return std::nullopt;
  const uint64_t local = offsetAddress(base & ~kRankTagMask, offset - part, elemBytes);
  if ((local >> kRegionShift) == kPoisonRegion) return local;
  return local | (static_cast<uint64_t>(tag) << kRankShift);
}

uint8_t* Core::access(uint64_t base, obj::WideInt offset, uint64_t bytes, const char* what,
                      bool write) {
  if (auto peer = peerAddress(base, offset, bytes)) return translate(*peer, bytes, what, write);
  if (gm) {
    auto p = gmPosition(*gm, base, offset);
    if (p && (p->second < -kHalfRegion || p->second >= kHalfRegion)) {
      if (error.empty())
        error = std::string(what) + (write ? " writes " : " reads ") +
                elementText((*gm)[p->first], p->second, bytes) + ", outside it";
      return nullptr;
    }
  }
  return translate(base + static_cast<uint64_t>(offset), bytes, what, write);
}

uint64_t Core::offsetAddress(uint64_t base, obj::WideInt offset, uint64_t elemBytes) {
  if (auto peer = peerAddress(base, offset, elemBytes)) return *peer;
  const uint64_t wrapped = base + static_cast<uint64_t>(offset);
  if (!gm) return wrapped;
  auto p = gmPosition(*gm, base, offset);
  if (!p || (p->second >= -kHalfRegion && p->second < kHalfRegion)) return wrapped;
  if (poisons.size() < 1024) poisons.emplace_back();
  poisons.back() = elementText((*gm)[p->first], p->second, elemBytes) + ", outside it";
  return (kPoisonRegion << kRegionShift) | (poisons.size() - 1);
}

uint8_t* Core::translate(uint64_t addr, uint64_t bytes, const char* what, bool write,
                         const GmRows* rows) {
  const bool peer = rankTagOf(addr).has_value();
  const uint64_t region = addr >> kRegionShift, off = addr & kRegionMask;
  if (!peer && region == kStackRegion) {
    if (off + bytes <= stack.size() && off + bytes >= off) return stack.data() + off;
    if (error.empty())
      error = std::string(what) + (write ? " writes" : " reads") + " outside the stack frame";
    return nullptr;
  }
  auto place = locate(addr, bytes, what, write);
  if (!place) return nullptr;
  const std::vector<GmRegion>& regions = peer ? *world->regionsOf(place->rank) : *gm;
  const GmRegion& g = regions[place->region];
  // Memory of another process, or an atomic add other processes make to the same memory: the
  // world stages it (runtime/Comm.h).
  if (world &&
      ((!g.data && g.size > 0) || (rows && rows->atomicAdd && world->atomicsThroughWorld())))
    return world->remote(*this, place->rank, place->region, place->offset, bytes, write, rows);
  return g.data + place->offset;
}

namespace {
/// The checks of a GM address (tag removed) against `gm`: the argument and offset, or nullopt
/// with `error` set (when empty) naming the access.
std::optional<GmPlace> locateIn(const std::vector<GmRegion>& gm,
                                const std::vector<std::string>& poisons, uint64_t addr,
                                uint64_t bytes, const char* what, bool write, std::string& error) {
  const uint64_t region = addr >> kRegionShift, off = addr & kRegionMask;
  const char* verb = write ? " writes" : " reads";
  if (region == kPoisonRegion && off < poisons.size()) {
    if (error.empty()) error = std::string(what) + verb + " " + poisons[off];
    return std::nullopt;
  }
  if (region == kStackRegion) {
    if (error.empty()) error = std::string(what) + verb + " the stack, where GM is needed";
    return std::nullopt;
  }
  // An offset in the upper half of a region's address space is a negative offset from the next
  // region's base (argument i + 1): name that argument, not the one before it.
  constexpr uint64_t kHalf = uint64_t{1} << (kRegionShift - 1);
  if (off >= kHalf && region < gm.size()) {
    if (error.empty()) {
      const GmRegion& next = gm[region];
      const uint64_t before = (uint64_t{1} << kRegionShift) - off;
      error = std::string(what) + verb + " before the start of argument %" + next.name +
              " (byte offset -" + std::to_string(before) + ")";
    }
    return std::nullopt;
  }
  if (region == 0 || region > gm.size()) {
    if (error.empty()) {
      char b[64];
      snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(addr));
      error = std::string(what) + verb + " address " + b + ", which is not in any argument";
    }
    return std::nullopt;
  }
  const GmRegion& g = gm[region - 1];
  if (off > g.size || bytes > g.size - off) {
    if (error.empty())
      error = std::string(what) + verb + " past the end of argument %" + g.name + " (bytes " +
              std::to_string(off) + ".." + std::to_string(off + bytes) + " of " +
              std::to_string(g.size) + ")";
    return std::nullopt;
  }
  return GmPlace{0, static_cast<size_t>(region - 1), off};
}
} // namespace

/// An address with a rank tag is in that rank's window (docs/multi-device.md): checked against
/// that rank's arguments, and an error naming the rank when it is outside them or the run has
/// no such rank.
std::optional<GmPlace> Core::locate(uint64_t addr, uint64_t bytes, const char* what, bool write) {
  const auto peer = rankTagOf(addr);
  if (!peer) {
    auto place = locateIn(*gm, poisons, addr, bytes, what, write, error);
    if (place) place->rank = rank;
    return place;
  }
  const std::vector<GmRegion>* regions = world ? world->regionsOf(*peer) : nullptr;
  if (!regions) {
    if (error.empty()) {
      char b[64];
      snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(addr));
      error = std::string(what) + (write ? " writes" : " reads") + " address " + b +
              " in the window of rank " + std::to_string(*peer) + ", but the run has " +
              std::to_string(world ? world->ranks() : 1) + " rank(s)";
    }
    return std::nullopt;
  }
  auto place = locateIn(*regions, poisons, addr & ~kRankTagMask, bytes, what, write, error);
  if (!place) {
    if (error.find(" of rank ") == std::string::npos)
      error += " (in the window of rank " + std::to_string(*peer) + ", outside it)";
    return std::nullopt;
  }
  place->rank = *peer;
  return place;
}

bool Core::finishRemote() {
  return remote.empty() || world->finishRemote(*this);
}

bool runBlock(const DecodedFunction& fn, Core& c, uint32_t& failedAt) {
  CpuExec exec;
  return interpret(fn, c, failedAt, exec);
}

} // namespace pto::rt
