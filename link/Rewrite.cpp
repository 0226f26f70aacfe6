#include "link/Rewrite.h"

#include "link/Patch.h"
#include "obj/Blocks.h"

#include <algorithm>
#include <cstdio>

namespace pto::link {

OffsetMap::OffsetMap(std::vector<std::pair<uint64_t, uint64_t>> sizes) {
  uint64_t sum = 0;
  for (size_t i = 0; i < sizes.size();) {
    uint64_t off = sizes[i].first, here = 0;
    for (; i < sizes.size() && sizes[i].first == off; ++i)
      here += sizes[i].second;
    at_.push_back(off);
    prefix_.push_back(sum);
    sum += here;
  }
  at_.push_back(UINT64_MAX);
  prefix_.push_back(sum);
}

uint64_t OffsetMap::before(uint64_t off) const {
  size_t i = static_cast<size_t>(std::lower_bound(at_.begin(), at_.end(), off) - at_.begin());
  return off + prefix_[i];
}

uint64_t OffsetMap::after(uint64_t off) const {
  size_t i = static_cast<size_t>(std::upper_bound(at_.begin(), at_.end(), off) - at_.begin());
  return off + prefix_[i];
}

namespace {

std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

} // namespace

std::variant<obj::ObjectFile, std::string> insertWords(const obj::ObjectFile& in,
                                                       std::vector<Insertion> ins) {
  std::stable_sort(ins.begin(), ins.end(), [](const Insertion& a, const Insertion& b) {
    return a.offset != b.offset ? a.offset < b.offset : (!a.entry && b.entry);
  });
  for (const Insertion& i : ins)
    if (i.offset > in.text.size())
      return "insertion at " + hex(i.offset) + " is past the end of .text";
  std::vector<std::pair<uint64_t, uint64_t>> sizes;
  sizes.reserve(ins.size());
  for (const Insertion& i : ins)
    sizes.push_back({i.offset, i.bytes.size()});
  const OffsetMap map(sizes);
  // Where a branch to an old offset lands: after the fall-through-only insertions there.
  auto target = [&](uint64_t off) {
    uint64_t t = map.before(off);
    auto it = std::lower_bound(ins.begin(), ins.end(), off,
                               [](const Insertion& a, uint64_t o) { return a.offset < o; });
    for (; it != ins.end() && it->offset == off && !it->entry; ++it)
      t += it->bytes.size();
    return t;
  };
  obj::ObjectFile out = in;
  out.text.clear();
  out.text.reserve(in.text.size() +
                   (sizes.empty() ? 0 : map.after(in.text.size()) - in.text.size()));
  size_t next = 0;
  for (uint64_t pos = 0; pos <= in.text.size(); ++pos) {
    for (; next < ins.size() && ins[next].offset == pos; ++next) {
      const Insertion& i = ins[next];
      uint64_t at = out.text.size();
      out.text.insert(out.text.end(), i.bytes.begin(), i.bytes.end());
      for (obj::Reloc r : i.relocs) {
        r.offset += at;
        out.relocs.push_back(std::move(r));
      }
      for (obj::LineEntry l : i.lines) {
        l.textOffset += at;
        out.lines.push_back(std::move(l));
      }
    }
    if (pos < in.text.size()) out.text.push_back(in.text[pos]);
  }
  for (size_t k = 0; k < in.relocs.size(); ++k)
    out.relocs[k].offset = map.after(in.relocs[k].offset);
  for (size_t k = 0; k < in.lines.size(); ++k)
    out.lines[k].textOffset = map.after(in.lines[k].textOffset);
  std::stable_sort(out.lines.begin(), out.lines.end(),
                   [](auto& a, auto& b) { return a.textOffset < b.textOffset; });
  // Functions and their branches.
  for (size_t f = 0; f < in.functions.size(); ++f) {
    const obj::Function& fn = in.functions[f];
    if (fn.flags & obj::kDeclaration) continue;
    const uint64_t start = fn.textOffset, end = fn.textOffset + fn.textSize;
    out.functions[f].textOffset = map.before(start);
    out.functions[f].textSize = map.before(end) - map.before(start);
    const obj::code::DecodedBlocks d = obj::code::decodeBlocks(in.text, start, end);
    for (const obj::code::BlockWords& b : d.code.blocks) {
      if (b.transfer != obj::code::Transfer::Direct && b.transfer != obj::code::Transfer::Cond)
        continue;
      const uint64_t oldTarget = *b.target;
      if (oldTarget < start || oldTarget >= end) continue;
      uint64_t newPos = map.after(b.offset), newTarget = target(oldTarget);
      PatchResult p =
          patchWord(out.text, newPos, PatchField::Label,
                    (static_cast<int64_t>(newTarget) - static_cast<int64_t>(newPos)) / 2);
      if (!p.ok())
        return "@" + fn.name + ": the branch at " + hex(b.offset) +
               " cannot reach its target after inserting words" +
               (p.status == PatchStatus::DoesNotEncode ? ": " + p.detail : std::string());
    }
    if (d.error)
      return "@" + fn.name + ": cannot decode the word at " + hex(d.error->offset) + ": " +
             d.error->message;
  }
  return out;
}

} // namespace pto::link
