// Reading tool inputs and writing tool outputs: the one place every tool goes through.
//
// Inputs: a regular file, a pipe, a device or "-" (standard input), read up to a size limit
// (kDefaultMaxInputBytes) so that /dev/zero or a huge file ends with a clear error instead of
// exhausting memory. A directory is refused with the reason.
//
// Outputs: a regular file (or a new one) is written through a temporary file in the same
// directory and renamed into place, so a failed or interrupted run never leaves a partial,
// stale or temporary file behind (the temporary is removed on every error path and by a
// SIGINT/SIGTERM/SIGHUP handler). Anything that is not a regular file (a device such as
// /dev/null, a FIFO, "-" for standard output) is written in place. A symbolic link is followed:
// its target is replaced, the link stays. An output that names one of the tool's inputs is
// refused. Every write is checked; errors give the system's reason (strerror).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pto::obj {

/// The largest input any tool reads (256 MiB): objects, images, sources and .npy files are far
/// smaller; the limit turns an endless input into an error.
inline constexpr uint64_t kDefaultMaxInputBytes = uint64_t{256} << 20;

/// Reads all of `path` ("-" is standard input) into `out`. Returns an error message such as
/// "cannot read 'x': Is a directory" or "'x' is larger than 256 MiB (the input size limit)".
std::optional<std::string> readInputFile(const std::string& path, std::string& out,
                                         uint64_t maxBytes = kDefaultMaxInputBytes);
std::optional<std::string> readInputFile(const std::string& path, std::vector<uint8_t>& out,
                                         uint64_t maxBytes = kDefaultMaxInputBytes);

/// Reads `path` when it is a regular file (after symbolic links) of at most `maxBytes`: for a
/// path recorded in an object (pto-objdump -S), which must not name a directory, a device, a
/// FIFO (opened without blocking) or a huge file. Returns an error message, as readInputFile.
std::optional<std::string> readRegularFile(const std::string& path, std::string& out,
                                           uint64_t maxBytes);

/// Writes `data` to `path` ("-" is standard output) as described at the top of this file.
/// `inputs` are the files the tool read: an output that is one of them (same path, or the same
/// file through another name) is refused and left untouched. Returns an error message, and
/// then a regular output file is untouched.
std::optional<std::string> writeOutputFile(const std::string& path, std::string_view data,
                                           const std::vector<std::string>& inputs = {});

/// The former name of writeOutputFile.
inline std::optional<std::string> writeFileAtomically(const std::string& path,
                                                      std::string_view data,
                                                      const std::vector<std::string>& inputs = {}) {
  return writeOutputFile(path, data, inputs);
}

/// Flushes std::cout and stdout and tells whether everything written to standard output got
/// there: "cannot write to standard output: No space left on device" (a full disk, a closed
/// pipe) or nothing. Every tool that prints its result calls it before exiting 0.
std::optional<std::string> flushStandardOutput();

/// Whether two paths name the same regular file, existing or to be created (the same path, or
/// the same device and inode, or, for files still to be created, the same path once symbolic
/// links, "." and ".." are resolved: a dangling link names the file it would create). "-",
/// devices and FIFOs (written in place) are never the same.
bool sameFile(const std::string& a, const std::string& b);

/// An output written in pieces: open() creates the temporary (or opens a non-regular target),
/// write() appends, commit() renames it into place. Destroying an uncommitted file removes the
/// temporary. writeOutputFile is open + write + commit.
class OutputFile {
public:
  OutputFile() = default;
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  ~OutputFile();

  std::optional<std::string> open(const std::string& path,
                                  const std::vector<std::string>& inputs = {});
  std::optional<std::string> write(std::string_view data);
  std::optional<std::string> commit();
  /// The temporary file's path while a regular output is open (empty otherwise).
  const std::string& temporaryPath() const { return tmp_; }

private:
  void discard();
  std::string path_;   // as given (for messages)
  std::string target_; // the file replaced: path_ with symbolic links followed
  std::string tmp_;    // the temporary, for a regular target
  int fd_ = -1;
  bool stdout_ = false;
  int slot_ = -1; // in the signal handler's table of temporaries
};

} // namespace pto::obj
