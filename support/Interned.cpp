#include "support/Interned.h"

#include <mutex>
#include <unordered_set>

namespace pto::support {

namespace {
struct Pool {
  std::mutex lock;
  std::unordered_set<std::string> texts; // node-based: an element's address never changes
};

Pool& pool() {
  static Pool* p = new Pool; // never destroyed: handles may outlive static destructors
  return *p;
}
} // namespace

const std::string* InternedString::intern(std::string_view text) {
  if (text.empty()) return nullptr;
  // Records come in runs of the same name (every line of one file): remember the last one per
  // thread and skip the lock and the hash for it.
  thread_local const std::string* last = nullptr;
  if (last && *last == text) return last;
  Pool& p = pool();
  std::lock_guard<std::mutex> hold(p.lock);
  last = &*p.texts.emplace(text).first;
  return last;
}

const std::string& InternedString::emptyText() {
  static const std::string empty;
  return empty;
}

} // namespace pto::support
