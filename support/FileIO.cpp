#include "support/FileIO.h"

#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <mutex>

namespace pto::obj {

namespace {

// ---------------------------------------------------------------- temporaries and signals
// The paths of the temporaries being written, for the signal handler: fixed storage, so that
// the handler only reads memory and calls unlink (async-signal-safe).
constexpr int kSlots = 16;
constexpr size_t kSlotPath = 4096;
char gTempPath[kSlots][kSlotPath];
volatile std::sig_atomic_t gTempUsed[kSlots];
std::mutex gSlotsMutex;
bool gHandlersInstalled = false;

extern "C" void removeTemporariesAndDie(int sig) {
  for (int i = 0; i < kSlots; ++i)
    if (gTempUsed[i]) ::unlink(gTempPath[i]);
  // Die of the same signal, so the parent sees why we stopped.
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(sig, &dfl, nullptr);
  ::raise(sig);
}

void installHandlers() {
  if (gHandlersInstalled) return;
  gHandlersInstalled = true;
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction old {};
    if (sigaction(sig, nullptr, &old) != 0) continue;
    // A signal the caller ignores (nohup) or handles itself stays as it is.
    if ((old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL) continue;
    struct sigaction sa {};
    sa.sa_handler = removeTemporariesAndDie;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESETHAND;
    sigaction(sig, &sa, nullptr);
  }
}

int registerTemporary(const std::string& path) {
  if (path.size() >= kSlotPath) return -1;
  std::lock_guard<std::mutex> lock(gSlotsMutex);
  installHandlers();
  for (int i = 0; i < kSlots; ++i)
    if (!gTempUsed[i]) {
      std::memcpy(gTempPath[i], path.c_str(), path.size() + 1);
      gTempUsed[i] = 1;
      return i;
    }
  return -1; // more than kSlots outputs at once: still written, just not cleaned on a signal
}

void unregisterTemporary(int slot) {
  if (slot < 0) return;
  std::lock_guard<std::mutex> lock(gSlotsMutex);
  gTempUsed[slot] = 0;
}

std::string reason() {
  return std::strerror(errno);
}

/// `path` with every symbolic link on its last component followed (the link's target is what
/// an output replaces). A dangling link gives its target, which is then created.
std::optional<std::string> followLinks(std::string path, std::string& err) {
  for (int hop = 0; hop < 40; ++hop) {
    struct stat st;
    if (::lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return path;
    std::vector<char> buf(static_cast<size_t>(st.st_size > 0 ? st.st_size : 4096) + 1);
    ssize_t n = ::readlink(path.c_str(), buf.data(), buf.size());
    if (n < 0) {
      err = reason();
      return std::nullopt;
    }
    std::string target(buf.data(), static_cast<size_t>(n));
    if (target.empty() || target[0] != '/') {
      auto slash = path.rfind('/');
      target = (slash == std::string::npos ? std::string() : path.substr(0, slash + 1)) + target;
    }
    path = std::move(target);
  }
  err = std::strerror(ELOOP);
  return std::nullopt;
}

std::string limitText(uint64_t bytes) {
  if (bytes >= (uint64_t{1} << 20) && bytes % (uint64_t{1} << 20) == 0)
    return std::to_string(bytes >> 20) + " MiB";
  return std::to_string(bytes) + " bytes";
}

template <typename Buffer>
std::optional<std::string> readAll(const std::string& path, Buffer& out, uint64_t maxBytes) {
  const bool isStdin = path == "-";
  const std::string name = isStdin ? std::string("standard input") : "'" + path + "'";
  out.clear();
  int fd = isStdin ? 0 : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "cannot read " + name + ": " + reason();
  struct Closer {
    int fd;
    bool own;
    ~Closer() {
      if (own) ::close(fd);
    }
  } closer{fd, !isStdin};
  struct stat st;
  if (::fstat(fd, &st) != 0) return "cannot read " + name + ": " + reason();
  if (S_ISDIR(st.st_mode)) return "cannot read " + name + ": " + std::strerror(EISDIR);
  const std::string tooLarge =
      name + " is larger than the input size limit (" + limitText(maxBytes) + ")";
  if (S_ISREG(st.st_mode)) {
    if (static_cast<uint64_t>(st.st_size) > maxBytes) return tooLarge;
    out.reserve(static_cast<size_t>(st.st_size));
  }
  char chunk[1 << 16];
  uint64_t total = 0;
  for (;;) {
    ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0) {
      if (errno == EINTR) continue;
      return "cannot read " + name + ": " + reason();
    }
    if (n == 0) break;
    total += static_cast<uint64_t>(n);
    if (total > maxBytes) {
      out.clear();
      out.shrink_to_fit();
      return tooLarge;
    }
    // As the buffer's own element type: a block copy, not a conversion per byte.
    const auto* bytes = reinterpret_cast<const typename Buffer::value_type*>(chunk);
    out.insert(out.end(), bytes, bytes + n);
  }
  return std::nullopt;
}

} // namespace

// ---------------------------------------------------------------- reading
std::optional<std::string> readInputFile(const std::string& path, std::string& out,
                                         uint64_t maxBytes) {
  return readAll(path, out, maxBytes);
}

std::optional<std::string> readInputFile(const std::string& path, std::vector<uint8_t>& out,
                                         uint64_t maxBytes) {
  return readAll(path, out, maxBytes);
}

std::optional<std::string> readRegularFile(const std::string& path, std::string& out,
                                           uint64_t maxBytes) {
  out.clear();
  // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return "cannot read '" + path + "': " + reason();
  struct stat st;
  const bool statOk = ::fstat(fd, &st) == 0;
  ::close(fd);
  if (!statOk) return "cannot read '" + path + "': " + reason();
  if (!S_ISREG(st.st_mode)) return "'" + path + "' is not a regular file";
  if (static_cast<uint64_t>(st.st_size) > maxBytes)
    return "'" + path + "' is larger than " + limitText(maxBytes);
  return readAll(path, out, maxBytes);
}

// ---------------------------------------------------------------- writing
std::optional<std::string> flushStandardOutput() {
  std::cout.flush();
  const bool coutFailed = !std::cout;
  const bool flushFailed = std::fflush(stdout) != 0;
  if (!coutFailed && !flushFailed && !std::ferror(stdout)) return std::nullopt;
  // The failed write happened earlier (stdio wrote a full buffer) and its errno is gone: the
  // reason is the one a write of one more byte gives (the output is lost already).
  int err = EIO;
  if (::write(1, "\n", 1) < 0) err = errno;
  return std::string("cannot write to standard output: ") + std::strerror(err);
}

bool sameFile(const std::string& a, const std::string& b) {
  if (a == "-" || b == "-" || a.empty() || b.empty()) return false;
  struct stat sa, sb;
  const bool ea = ::stat(a.c_str(), &sa) == 0, eb = ::stat(b.c_str(), &sb) == 0;
  // Devices and FIFOs are written in place: naming one twice replaces nothing.
  if ((ea && !S_ISREG(sa.st_mode)) || (eb && !S_ISREG(sb.st_mode))) return false;
  if (a == b) return true;
  if (ea && eb) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  // A file still to be created (perhaps through a dangling link): compare where each would be.
  auto where = [](const std::string& p) -> std::string {
    std::string err;
    auto target = followLinks(p, err);
    if (!target) return p;
    std::error_code ec;
    auto full = std::filesystem::weakly_canonical(std::filesystem::absolute(*target, ec), ec);
    return ec ? *target : full.string();
  };
  return where(a) == where(b);
}

OutputFile::~OutputFile() {
  discard();
}

void OutputFile::discard() {
  if (fd_ >= 0 && !stdout_) ::close(fd_);
  fd_ = -1;
  if (!tmp_.empty()) ::unlink(tmp_.c_str());
  tmp_.clear();
  unregisterTemporary(slot_);
  slot_ = -1;
}

std::optional<std::string> OutputFile::open(const std::string& path,
                                            const std::vector<std::string>& inputs) {
  discard();
  path_ = path;
  stdout_ = false;
  if (path.empty()) return std::string("empty output file name");
  if (path == "-") {
    std::cout.flush();
    std::fflush(stdout);
    stdout_ = true;
    fd_ = 1;
    return std::nullopt;
  }
  const std::string cannot = "cannot write '" + path + "': ";
  std::string err;
  auto target = followLinks(path, err);
  if (!target) return cannot + err;
  target_ = *target;
  struct stat out;
  const bool exists = ::stat(target_.c_str(), &out) == 0;
  // An output that would replace one of the inputs (devices and FIFOs replace nothing).
  for (const std::string& in : inputs) {
    if (exists && !S_ISREG(out.st_mode)) break;
    if (in.empty() || in == "-") continue;
    struct stat st;
    bool same = in == path || in == target_;
    if (!same && exists && ::stat(in.c_str(), &st) == 0)
      same = st.st_dev == out.st_dev && st.st_ino == out.st_ino;
    if (same)
      return "output '" + path + "' is also the input '" + in + "'; refusing to overwrite it";
  }
  if (exists && S_ISDIR(out.st_mode)) return cannot + std::strerror(EISDIR);
  if (exists && !S_ISREG(out.st_mode)) {
    // A device, FIFO or socket: written in place (renaming over it would replace it).
    fd_ = ::open(target_.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd_ < 0) return cannot + reason();
    return std::nullopt;
  }
  std::string tmpl = target_ + ".tmpXXXXXX";
  std::vector<char> name(tmpl.begin(), tmpl.end());
  name.push_back('\0');
  // Signals wait while the temporary is created and registered: none can leave it behind.
  sigset_t block, old;
  sigemptyset(&block);
  for (int sig : {SIGINT, SIGTERM, SIGHUP})
    sigaddset(&block, sig);
  pthread_sigmask(SIG_BLOCK, &block, &old);
  fd_ = ::mkstemp(name.data());
  const int mkstempErrno = errno;
  if (fd_ >= 0) {
    tmp_ = name.data();
    slot_ = registerTemporary(tmp_);
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  if (fd_ < 0) return cannot + std::strerror(mkstempErrno);
  // The replaced file keeps its permissions; a new one gets 0666 less the umask, like open().
  mode_t mode;
  if (exists) {
    mode = out.st_mode & 07777;
  } else {
    mode_t mask = ::umask(0);
    ::umask(mask);
    mode = 0666 & ~mask;
  }
  if (::fchmod(fd_, mode) != 0) {
    const std::string why = reason();
    discard();
    return cannot + why;
  }
  return std::nullopt;
}

std::optional<std::string> OutputFile::write(std::string_view data) {
  if (fd_ < 0) return "cannot write '" + path_ + "': not open";
  const char* p = data.data();
  size_t left = data.size();
  while (left > 0) {
    ssize_t n = ::write(fd_, p, left);
    if (n < 0) {
      if (errno == EINTR) continue;
      const std::string why = reason();
      discard();
      return (stdout_ ? std::string("cannot write to standard output: ")
                      : "cannot write '" + path_ + "': ") +
             why;
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  return std::nullopt;
}

std::optional<std::string> OutputFile::commit() {
  if (fd_ < 0) return "cannot write '" + path_ + "': not open";
  if (stdout_) {
    fd_ = -1;
    return std::nullopt;
  }
  const std::string cannot = "cannot write '" + path_ + "': ";
  int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) {
    const std::string why = reason();
    discard();
    return cannot + why;
  }
  if (tmp_.empty()) return std::nullopt; // written in place
  if (::rename(tmp_.c_str(), target_.c_str()) != 0) {
    const std::string why = reason();
    discard();
    return cannot + why;
  }
  tmp_.clear();
  unregisterTemporary(slot_);
  slot_ = -1;
  return std::nullopt;
}

std::optional<std::string> writeOutputFile(const std::string& path, std::string_view data,
                                           const std::vector<std::string>& inputs) {
  OutputFile out;
  if (auto e = out.open(path, inputs)) return e;
  if (auto e = out.write(data)) return e;
  return out.commit();
}

} // namespace pto::obj
