// Reports of the npu backend.
#include "runtime/npu/Report.h"

#include "obj/Image.h"
#include "runtime/npu/Cost.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <map>

namespace pto::rt::npu {
namespace {

constexpr isa::Pipe kShownPipes[] = {isa::Pipe::S,    isa::Pipe::V,    isa::Pipe::M,
                                     isa::Pipe::MTE1, isa::Pipe::MTE2, isa::Pipe::MTE3,
                                     isa::Pipe::FIX};

std::string format(const char* fmt, auto... args) {
  char buf[512];
  snprintf(buf, sizeof buf, fmt, args...);
  return buf;
}

} // namespace

std::string summary(const Module& mod, const RunStats& stats) {
  uint64_t cycles = 0;
  std::array<uint64_t, 8> busy{}, ops{};
  for (const NpuBlock& b : stats.npu) {
    cycles = std::max(cycles, b.cycles);
    for (unsigned p = 0; p < 8; ++p) {
      busy[p] += b.busy[p];
      ops[p] += b.ops[p];
    }
  }
  const size_t blocks = std::max<size_t>(1, stats.npu.size());
  std::string out =
      format("npu model (%s): %llu cycles", std::string(isa::spelling(mod.arch())).c_str(),
             static_cast<unsigned long long>(cycles));
  if (blocks > 1) out += format(" (the slowest of %zu blocks, one AI core each)", blocks);
  out += "\n  pipe        busy cycles   util     ops\n";
  for (isa::Pipe p : kShownPipes) {
    const unsigned i = static_cast<unsigned>(p);
    const double util =
        cycles ? 100.0 * static_cast<double>(busy[i]) / (static_cast<double>(cycles) * blocks) : 0;
    out += format("  %-10s %12llu %5.1f%% %7llu\n", std::string(isa::spelling(p)).c_str(),
                  static_cast<unsigned long long>(busy[i]), util,
                  static_cast<unsigned long long>(ops[i]));
  }
  // A whole launch as the device measures it: the kernel's cycles and the start-up before them.
  const CostTable& costs = costTable(mod.arch());
  const double launched = static_cast<double>(cycles) + costs.startupCycles;
  out += format("  with the launch's start-up: %.0f cycles, %.2f us at %.2f GHz\n", launched,
                launched / (costs.clockGHz * 1000.0), costs.clockGHz);
  return out;
}

std::string profile(const Module& mod, const RunStats& stats, size_t top) {
  struct Row {
    const char* name = "";
    uint8_t pipe = 0;
    uint64_t cycles = 0, count = 0;
  };
  // By text offset (one source op); wait_flags count the cycles their pipe stalled.
  std::map<uint32_t, Row> ops, waits;
  uint64_t opTotal = 0, waitTotal = 0;
  bool truncated = false;
  for (const NpuBlock& b : stats.npu) {
    truncated |= b.recordsTruncated;
    for (const NpuOp& r : b.records) {
      const bool isWait = std::string_view(r.name) == "wait_flag";
      Row& row = (isWait ? waits : ops)[r.textOffset];
      row.name = r.name;
      row.pipe = r.pipe;
      row.cycles += r.end - r.start;
      ++row.count;
      (isWait ? waitTotal : opTotal) += r.end - r.start;
    }
  }
  auto table = [&](const std::map<uint32_t, Row>& rows, uint64_t total, const char* title) {
    std::vector<std::pair<uint32_t, Row>> sorted(rows.begin(), rows.end());
    std::stable_sort(sorted.begin(), sorted.end(),
                     [](auto& a, auto& b) { return a.second.cycles > b.second.cycles; });
    std::string out =
        std::string(title) + "\n   cycles      %    count  op              pipe       source\n";
    for (size_t i = 0; i < sorted.size() && i < top; ++i) {
      const Row& r = sorted[i].second;
      const double pct =
          total ? 100.0 * static_cast<double>(r.cycles) / static_cast<double>(total) : 0;
      out +=
          format("%9llu %5.1f%% %8llu  %-15s %-10s %s\n", static_cast<unsigned long long>(r.cycles),
                 pct, static_cast<unsigned long long>(r.count), r.name,
                 std::string(isa::spelling(static_cast<isa::Pipe>(r.pipe))).c_str(),
                 mod.location(sorted[i].first).c_str());
    }
    return out;
  };
  std::string out = table(ops, opTotal, "profile: top ops by pipe cycles (all blocks)");
  if (!waits.empty())
    out += table(waits, waitTotal, "stalls: wait_flags by cycles their pipe waited");
  if (truncated)
    out += "(the op record limit was reached: the profile covers the start of the run)\n";
  return out;
}

std::string chromeTrace(const Module& mod, const RunStats& stats) {
  using nlohmann::json;
  json events = json::array();
  std::map<uint32_t, std::string> locations; // text offset -> source line, resolved once
  auto locationOf = [&](uint32_t off) -> const std::string& {
    auto it = locations.find(off);
    if (it == locations.end()) it = locations.emplace(off, mod.location(off)).first;
    return it->second;
  };
  for (size_t b = 0; b < stats.npu.size(); ++b) {
    const int pid = static_cast<int>(b);
    events.push_back({{"name", "process_name"},
                      {"ph", "M"},
                      {"pid", pid},
                      {"args", {{"name", "block " + std::to_string(b)}}}});
    for (isa::Pipe p : kShownPipes) {
      const int tid = static_cast<int>(p);
      events.push_back({{"name", "thread_name"},
                        {"ph", "M"},
                        {"pid", pid},
                        {"tid", tid},
                        {"args", {{"name", std::string(isa::spelling(p))}}}});
      events.push_back({{"name", "thread_sort_index"},
                        {"ph", "M"},
                        {"pid", pid},
                        {"tid", tid},
                        {"args", {{"sort_index", tid}}}});
    }
    for (const NpuOp& r : stats.npu[b].records) {
      const int tid = r.pipe;
      const uint64_t dur = std::max<uint64_t>(1, r.end - r.start);
      events.push_back(
          {{"name", r.name},
           {"cat", std::string(isa::spelling(static_cast<isa::Pipe>(r.pipe)))},
           {"ph", "X"},
           {"ts", r.start},
           {"dur", dur},
           {"pid", pid},
           {"tid", tid},
           {"args", {{"source", locationOf(r.textOffset)}, {"cycles", r.end - r.start}}}});
      if (r.flowOut >= 0)
        events.push_back({{"name", "event"},
                          {"cat", "sync"},
                          {"ph", "s"},
                          {"id", r.flowOut},
                          {"ts", r.start},
                          {"pid", pid},
                          {"tid", tid}});
      if (r.flowIn >= 0)
        events.push_back({{"name", "event"},
                          {"cat", "sync"},
                          {"ph", "f"},
                          {"bp", "e"},
                          {"id", r.flowIn},
                          {"ts", r.start + dur - 1},
                          {"pid", pid},
                          {"tid", tid}});
    }
  }
  json doc = {{"traceEvents", std::move(events)},
              {"displayTimeUnit", "ns"},
              {"otherData",
               {{"tool", "pto-run --backend npu"},
                {"arch", std::string(isa::spelling(mod.arch()))},
                {"time_unit", "1 us = 1 cycle"}}}};
  return doc.dump() + "\n";
}

} // namespace pto::rt::npu
