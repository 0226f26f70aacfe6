// Event-id allocation (docs/linking.md): symbolic events get hardware ids by interval colouring
// per (source pipe, destination pipe) pair over their pending windows (set -> wait, along the
// real control flow); explicit constant ids are checked for a second set while still pending.
#pragma once

#include "link/Planner.h"

#include <optional>
#include <string>
#include <vector>

namespace pto::link {

/// Hardware event ids the linker may hand out for a pipe pair: 8 per pair, the last one
/// reserved for (PIPE_V, PIPE_S), (PIPE_S, PIPE_V) and (PIPE_MTE2, PIPE_V) (reference 4.1).
unsigned usableEventIds(isa::Arch arch, isa::Pipe src, isa::Pipe dst);
unsigned hardwareEventIds(isa::Arch arch);

/// What went wrong with an event (EventError::kind): the linker acts on the kind, never on the
/// text.
enum class EventErrorKind : uint8_t {
  PairMismatch,    // a symbolic event used by a sync of another pipe pair
  IdOutOfRange,    // an explicit id past the hardware's ids
  SetWhilePending, // a second set before the wait of the first
  Deadlock,        // a wait that no set satisfies on some path
  Exhausted,       // no usable id left for a symbolic event
};

struct EventError {
  std::string message;
  int32_t block = -1;           // locates the error
  std::vector<int32_t> related; // further blocks worth a note (e.g. the pending set)
  std::vector<uint32_t> events; // symbolic events concerned
  /// Deadlock: the message names two places: "{wait}" (the wait, `block`) and "{other}"
  /// (`related[0]`: the wait that consumed the set, or a set that the path bypasses); the linker
  /// substitutes their source locations.
  EventErrorKind kind = EventErrorKind::Deadlock;
};

struct EventPlan {
  std::vector<int32_t> id;       // per symbolic event: the hardware id (-1: unused or failed)
  std::vector<Interval> pending; // per symbolic event: hull of its pending windows
  std::vector<EventError> errors;
};

/// `blockEvent[b]` is the symbolic event (0..pipes.size()-1) of the SET/WAIT block b, or -1;
/// `pipes[e]` is the pipe pair of symbolic event e and `names[e]` its name.
EventPlan allocateEvents(const FunctionCfg& cfg, const std::vector<int32_t>& blockEvent,
                         const std::vector<std::pair<isa::Pipe, isa::Pipe>>& pipes,
                         const std::vector<std::string>& names, isa::Arch arch);

} // namespace pto::link
