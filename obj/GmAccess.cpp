// The .pto.gmaccess table (obj/GmAccess.h, docs/object-format.md section 2.10).
#include "obj/GmAccess.h"

#include "obj/Binary.h"
#include "support/Text.h"

namespace pto::obj {

namespace {

constexpr uint32_t kGmAccessMagic = 0x41475450; // "PTGA"
constexpr uint32_t kGmAccessRecord = 56;
constexpr uint32_t kGmWrite = 1, kGmKnown = 2;

} // namespace

Error checkGmAccess(const ObjectFile& obj, size_t i, uint64_t prev) {
  const GmAccess& a = obj.gmAccesses[i];
  const std::string what = "gm access record " + std::to_string(i);
  if (a.function >= obj.functions.size())
    return what + " names a missing function " + std::to_string(a.function);
  const Function& f = obj.functions[a.function];
  if (a.textOffset % 2) return what + " is at an odd text offset " + support::hex0x(a.textOffset);
  if (a.textOffset >= obj.text.size())
    return what + " at " + support::hex0x(a.textOffset) + " is past the end of .text";
  if (a.textOffset < f.textOffset || a.textOffset - f.textOffset >= f.textSize)
    return what + " at " + support::hex0x(a.textOffset) + " is outside function '" + f.name +
           "' [" + support::hex0x(f.textOffset) + ", " + support::hex0x(f.textOffset + f.textSize) +
           ")";
  if (a.param < -1 || a.param >= static_cast<int64_t>(f.params.size()))
    return what + " names a missing parameter " + std::to_string(a.param) + " of '" + f.name + "'";
  if (a.param >= 0) {
    const Param& p = f.params[static_cast<size_t>(a.param)];
    if (p.kind != ParamKind::Pointer && p.kind != ParamKind::TensorView)
      return what + ": parameter '" + p.name + "' of '" + f.name +
             "' is not a pointer or tensor_view";
  }
  if (!a.known && (a.offset || a.bytes || a.symbol || a.loop || a.stride))
    return what + " is not known but has an offset, size, symbol, loop or stride";
  if (a.known && a.bytes == 0) return what + " is known but covers no bytes";
  if (a.loop == 0 && a.stride != 0) return what + " has a stride but no loop";
  if (a.loop != 0 && a.stride == 0) return what + " has a loop but no stride";
  if (i > 0 && a.textOffset < prev)
    return what + " is not sorted by text offset (" + support::hex0x(a.textOffset) + " after " +
           support::hex0x(prev) + ")";
  return std::nullopt;
}

std::string gmAccessText(const ObjectFile& obj, const GmAccess& a) {
  std::string s = "gm " + support::hex0x(a.textOffset) + " @";
  const Function* f = a.function < obj.functions.size() ? &obj.functions[a.function] : nullptr;
  s += f ? f->name : "#" + std::to_string(a.function);
  if (a.param < 0)
    s += " (any parameter)";
  else if (f && static_cast<size_t>(a.param) < f->params.size())
    s += " %" + f->params[static_cast<size_t>(a.param)].name;
  else
    s += " %#" + std::to_string(a.param);
  s += a.write ? " write" : " read";
  if (!a.known) return s;
  s += " known: offset " + std::string(a.offset < 0 ? "-" : "+") +
       std::to_string(a.offset < 0 ? 0 - static_cast<uint64_t>(a.offset)
                                   : static_cast<uint64_t>(a.offset)) +
       " bytes " + std::to_string(a.bytes);
  if (a.symbol) s += " symbol " + support::hex0x(a.symbol);
  if (a.loop) s += " loop " + std::to_string(a.loop) + " stride " + std::to_string(a.stride);
  return s;
}

std::string gmAccessListing(const ObjectFile& obj) {
  std::string s = "GM ACCESSES (" + std::to_string(obj.gmAccesses.size()) + "):\n";
  for (const GmAccess& a : obj.gmAccesses)
    s += gmAccessText(obj, a) + "\n";
  return s;
}

namespace detail {

std::variant<std::vector<uint8_t>, std::string> writeGmAccesses(const ObjectFile& obj) {
  if (obj.gmAccesses.empty()) return std::vector<uint8_t>{};
  if (obj.gmAccesses.size() > UINT32_MAX / kGmAccessRecord)
    return std::string(".pto.gmaccess: too many records");
  Out o;
  o.header(kGmAccessMagic, kGmAccessRecord, obj.gmAccesses.size());
  uint64_t prev = 0;
  for (size_t i = 0; i < obj.gmAccesses.size(); ++i) {
    const GmAccess& a = obj.gmAccesses[i];
    if (Error e = checkGmAccess(obj, i, prev)) return ".pto.gmaccess: " + *e;
    prev = a.textOffset;
    o.u64(a.textOffset);
    o.u32(a.function);
    o.i32(a.param);
    o.u32((a.write ? kGmWrite : 0) | (a.known ? kGmKnown : 0));
    o.u32(a.loop);
    o.i64(a.offset);
    o.u64(a.bytes);
    o.u64(a.symbol);
    o.i64(a.stride);
  }
  return std::move(o.bytes);
}

Error readGmAccesses(const std::vector<uint8_t>& section, ObjectFile& obj) {
  In in(section.data(), section.size(), ".pto.gmaccess");
  uint32_t count = in.header(kGmAccessMagic, kGmAccessRecord);
  if (in.ok() && in.remaining() != static_cast<uint64_t>(count) * kGmAccessRecord)
    in.fail("bytes after the last record");
  obj.gmAccesses.reserve(count);
  uint64_t prev = 0;
  for (uint32_t i = 0; i < count && in.ok(); ++i) {
    GmAccess a;
    a.textOffset = in.u64();
    a.function = in.u32();
    a.param = in.i32();
    uint32_t flags = in.u32();
    a.loop = in.u32();
    a.offset = in.i64();
    a.bytes = in.u64();
    a.symbol = in.u64();
    a.stride = in.i64();
    if (!in.ok()) break;
    if (flags & ~(kGmWrite | kGmKnown)) {
      in.fail("gm access record " + std::to_string(i) + " has unknown flags " +
              support::hex0x(flags));
      break;
    }
    a.write = flags & kGmWrite;
    a.known = flags & kGmKnown;
    obj.gmAccesses.push_back(a);
    if (Error e = checkGmAccess(obj, i, prev)) {
      in.fail(*e);
      break;
    }
    prev = a.textOffset;
  }
  if (!in.ok()) {
    obj.gmAccesses.clear();
    return in.error();
  }
  return std::nullopt;
}

} // namespace detail

} // namespace pto::obj
