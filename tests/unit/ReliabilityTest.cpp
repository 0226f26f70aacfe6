// Reliability (issue 16): the one file reader and writer, checked number text, image limits at
// load, .npy dtype and size checks, diagnostics that escape control characters, the front end's
// nesting limit.
#include "TestSupport.h"

#include "asm/mc/BlockAsm.h"
#include "obj/Image.h"
#include "runtime/Npy.h"
#include "support/FileIO.h"
#include "support/Numbers.h"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

namespace fs = std::filesystem;
using namespace pto;

namespace {

/// A fresh empty directory under the test's temporary directory.
fs::path scratchDir(const std::string& name) {
  fs::path d = fs::temp_directory_path() / ("pto-rel-" + std::to_string(::getpid()) + "-" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

std::vector<std::string> listDir(const fs::path& d) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(d))
    out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

} // namespace

// ---------------------------------------------------------------- writing
TEST(FileIO, RegularFileIsReplacedAtomicallyAndKeepsItsMode) {
  fs::path d = scratchDir("regular");
  fs::path out = d / "out.bin";
  { std::ofstream(out) << "old"; }
  ::chmod(out.c_str(), 0640);
  ASSERT_EQ(obj::writeOutputFile(out.string(), "new contents"), std::nullopt);
  EXPECT_EQ(slurp(out), "new contents");
  struct stat st;
  ASSERT_EQ(::stat(out.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
  EXPECT_EQ(listDir(d), std::vector<std::string>{"out.bin"}); // no temporary left
  fs::remove_all(d);
}

TEST(FileIO, DeviceIsWrittenInPlace) {
  ASSERT_EQ(obj::writeOutputFile("/dev/null", "data"), std::nullopt);
  struct stat st;
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}

TEST(FileIO, FifoIsWrittenInPlace) {
  fs::path d = scratchDir("fifo");
  fs::path fifo = d / "pipe";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::string got;
  std::thread reader([&] { got = slurp(fifo); });
  auto err = obj::writeOutputFile(fifo.string(), "through the pipe");
  reader.join();
  EXPECT_EQ(err, std::nullopt);
  EXPECT_EQ(got, "through the pipe");
  struct stat st;
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  EXPECT_EQ(listDir(d), std::vector<std::string>{"pipe"});
  fs::remove_all(d);
}

TEST(FileIO, SymlinkIsFollowedToItsTarget) {
  fs::path d = scratchDir("symlink");
  { std::ofstream(d / "target") << "old"; }
  fs::create_symlink("target", d / "link");
  ASSERT_EQ(obj::writeOutputFile((d / "link").string(), "new"), std::nullopt);
  EXPECT_TRUE(fs::is_symlink(d / "link"));
  EXPECT_EQ(slurp(d / "target"), "new");
  EXPECT_EQ(listDir(d), (std::vector<std::string>{"link", "target"}));
  fs::remove_all(d);
}

TEST(FileIO, OutputThatIsAnInputIsRefused) {
  fs::path d = scratchDir("same");
  { std::ofstream(d / "k.pto") << "source"; }
  fs::create_symlink("k.pto", d / "alias.pto");
  fs::create_hard_link(d / "k.pto", d / "hard.pto");
  for (const char* out : {"k.pto", "alias.pto", "hard.pto"}) {
    auto err = obj::writeOutputFile((d / out).string(), "ir", {(d / "k.pto").string()});
    ASSERT_TRUE(err) << out;
    EXPECT_NE(err->find("is also the input"), std::string::npos) << *err;
  }
  EXPECT_EQ(slurp(d / "k.pto"), "source");
  EXPECT_TRUE(obj::sameFile((d / "alias.pto").string(), (d / "hard.pto").string()));
  EXPECT_FALSE(obj::sameFile("-", "-"));
  fs::remove_all(d);
}

TEST(FileIO, WriteErrorsGiveTheReason) {
  auto full = obj::writeOutputFile("/dev/full", std::string(1 << 16, 'x'));
  ASSERT_TRUE(full);
  EXPECT_NE(full->find(std::strerror(ENOSPC)), std::string::npos) << *full;
  fs::path d = scratchDir("errors");
  auto dir = obj::writeOutputFile(d.string(), "x");
  ASSERT_TRUE(dir);
  EXPECT_NE(dir->find(std::strerror(EISDIR)), std::string::npos) << *dir;
  auto missing = obj::writeOutputFile((d / "no/such/dir/out").string(), "x");
  ASSERT_TRUE(missing);
  EXPECT_NE(missing->find(std::strerror(ENOENT)), std::string::npos) << *missing;
  EXPECT_TRUE(listDir(d).empty());
  fs::remove_all(d);
}

TEST(FileIO, TemporaryIsRemovedOnError) {
  fs::path d = scratchDir("discard");
  {
    obj::OutputFile out;
    ASSERT_EQ(out.open((d / "out").string()), std::nullopt);
    ASSERT_EQ(out.write("partial"), std::nullopt);
    EXPECT_FALSE(out.temporaryPath().empty());
    EXPECT_TRUE(fs::exists(out.temporaryPath()));
  } // never committed
  EXPECT_TRUE(listDir(d).empty());
  fs::remove_all(d);
}

TEST(FileIO, SignalRemovesTheTemporary) {
  for (int sig : {SIGTERM, SIGINT}) {
    fs::path d = scratchDir("signal" + std::to_string(sig));
    pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      // The child is killed in the middle of writing its output.
      obj::OutputFile out;
      if (out.open((d / "out.img").string()) || out.write("half an image")) ::_exit(3);
      if (!fs::exists(out.temporaryPath())) ::_exit(4);
      ::raise(sig);
      ::_exit(5); // not reached: the handler dies of the signal
    }
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status)) << "exit status " << WEXITSTATUS(status);
    EXPECT_EQ(WTERMSIG(status), sig);
    EXPECT_TRUE(listDir(d).empty()) << listDir(d).front();
    fs::remove_all(d);
  }
}

// ---------------------------------------------------------------- reading
TEST(FileIO, ReadRefusesDirectoriesAndEndlessInput) {
  fs::path d = scratchDir("read");
  std::string text;
  auto dir = obj::readInputFile(d.string(), text);
  ASSERT_TRUE(dir);
  EXPECT_NE(dir->find(std::strerror(EISDIR)), std::string::npos) << *dir;
  { std::ofstream(d / "f") << "0123456789A"; }
  auto big = obj::readInputFile((d / "f").string(), text, 10);
  ASSERT_TRUE(big);
  EXPECT_NE(big->find("larger than the input size limit (10 bytes)"), std::string::npos) << *big;
  EXPECT_EQ(obj::readInputFile((d / "f").string(), text, 11), std::nullopt);
  EXPECT_EQ(text, "0123456789A");
  // A device that never ends: stopped at the limit.
  std::vector<uint8_t> bytes;
  auto zero = obj::readInputFile("/dev/zero", bytes, 1 << 20);
  ASSERT_TRUE(zero);
  EXPECT_NE(zero->find("'/dev/zero' is larger than the input size limit (1 MiB)"),
            std::string::npos)
      << *zero;
  EXPECT_TRUE(bytes.empty());
  auto missing = obj::readInputFile((d / "none").string(), text);
  ASSERT_TRUE(missing);
  EXPECT_EQ(*missing, "cannot read '" + (d / "none").string() + "': " + std::strerror(ENOENT));
  fs::remove_all(d);
}

// ---------------------------------------------------------------- numbers
TEST(Numbers, CheckedParsing) {
  EXPECT_EQ(obj::parseUnsigned("18446744073709551615"), UINT64_MAX);
  EXPECT_EQ(obj::parseUnsigned("18446744073709551616"), std::nullopt);
  EXPECT_EQ(obj::parseUnsigned("99999999999999999999"), std::nullopt);
  EXPECT_EQ(obj::parseUnsigned("-1"), std::nullopt);
  EXPECT_EQ(obj::parseUnsigned(""), std::nullopt);
  EXPECT_EQ(obj::parseUnsigned("12x"), std::nullopt);
  EXPECT_EQ(obj::parseUnsigned("ff", 16), 255u);
  EXPECT_EQ(obj::parseSigned("-9223372036854775808"), INT64_MIN);
  EXPECT_EQ(obj::parseSigned("9223372036854775808"), std::nullopt);
  EXPECT_EQ(obj::parseSigned("+5"), 5);
  EXPECT_EQ(obj::parseDouble("abc"), std::nullopt);
  EXPECT_EQ(obj::parseDouble("1e999"), std::nullopt);
  EXPECT_EQ(obj::parseDouble("0.5x"), std::nullopt);
  EXPECT_EQ(obj::parseDouble("1e-3"), 1e-3);
  EXPECT_EQ(obj::checkedMul(int64_t(1) << 40, int64_t(1) << 30), std::nullopt);
  EXPECT_EQ(obj::checkedMul(100000, 100000), 10000000000);
}

// ---------------------------------------------------------------- image limits
namespace {

/// A tensor_view parameter %x of f32.
obj::Param tensorView(std::vector<int64_t> shape) {
  obj::Param p;
  p.name = "x";
  p.kind = obj::ParamKind::TensorView;
  p.dtype = isa::DType::F32;
  p.shape = std::move(shape);
  return p;
}

/// A one-function image with a tensor_view parameter, serialized.
std::vector<uint8_t> smallImage(std::vector<int64_t> shape, uint32_t frame = 0) {
  obj::Image img;
  obj::Function f;
  f.name = "k";
  f.flags = obj::kEntry;
  f.frameSize = frame;
  f.params.push_back(tensorView(std::move(shape)));
  img.functions.push_back(f);
  img.entries.push_back({0, "k"});
  auto bytes = obj::writeImage(img);
  EXPECT_EQ(bytes.index(), 0u) << (bytes.index() ? std::get<1>(bytes) : "");
  return bytes.index() == 0 ? std::get<0>(bytes) : std::vector<uint8_t>{};
}

/// The offset of the first record of the table with this magic ("PTTP", "PTTK", "PTTL").
size_t tableRecords(const std::vector<uint8_t>& b, const char* magic) {
  for (size_t i = 0; i + 16 <= b.size(); ++i)
    if (std::memcmp(b.data() + i, magic, 4) == 0) return i + 16;
  ADD_FAILURE() << "no table " << magic;
  return 0;
}

template <typename T> void poke(std::vector<uint8_t>& b, size_t at, T v) {
  std::memcpy(b.data() + at, &v, sizeof v);
}

std::string loadError(const std::vector<uint8_t>& b) {
  auto r = obj::readImage(b.data(), b.size());
  return r.index() == 1 ? std::get<1>(r) : "";
}

} // namespace

TEST(ImageLimits, ParameterShapes) {
  std::vector<uint8_t> good = smallImage({64, 64});
  ASSERT_EQ(loadError(good), "");
  // Param record: name u32, kind, dtype, rank, pad, then five i64 dimensions.
  const size_t dims = tableRecords(good, "PTTP") + 8;
  auto negative = good;
  poke<int64_t>(negative, dims, -5);
  EXPECT_NE(loadError(negative).find("parameter 'x' has a negative dimension -5"),
            std::string::npos)
      << loadError(negative);
  auto huge = good;
  poke<int64_t>(huge, dims, int64_t(1) << 40);
  EXPECT_NE(loadError(huge).find("more than 2^40 elements"), std::string::npos) << loadError(huge);
  auto overflow = good;
  poke<int64_t>(overflow, dims, INT64_MAX);
  poke<int64_t>(overflow, dims + 8, INT64_MAX);
  EXPECT_NE(loadError(overflow).find("more than 2^40 elements"), std::string::npos)
      << loadError(overflow);
  // The writer refuses what the reader would refuse.
  obj::Image img;
  obj::Function f;
  f.name = "k";
  f.params.push_back(tensorView({-5, 64}));
  img.functions.push_back(f);
  auto bytes = obj::writeImage(img);
  ASSERT_EQ(bytes.index(), 1u);
  EXPECT_NE(std::get<1>(bytes).find("negative dimension"), std::string::npos);
}

TEST(ImageLimits, FrameSizeAndTileView) {
  std::vector<uint8_t> good = smallImage({4}, 64);
  ASSERT_EQ(loadError(good), "");
  // Function record: name, flags, text offset (u64), text size (u64), 4 x u32 ranges, frame.
  auto frame = good;
  poke<uint32_t>(frame, tableRecords(good, "PTTK") + 40, 0xFFFFFFF0u);
  EXPECT_NE(loadError(frame).find("has a frame of 4294967280 bytes (at most 1048576)"),
            std::string::npos)
      << loadError(frame);
  obj::Image img;
  obj::Function f;
  f.name = "k";
  f.frameSize = 0xFFFFFFF0u;
  img.functions.push_back(f);
  EXPECT_EQ(obj::writeImage(img).index(), 1u);
}

TEST(ImageLimits, TileViewIndexDoesNotOverflow) {
  // A tile whose view field is 0x80000000 (alias index INT32_MIN - 1 before the fix: UB).
  obj::Image img;
  obj::Function f;
  f.name = "k";
  obj::TileDesc t;
  t.name = "t";
  t.rows = 16;
  t.cols = 16;
  t.validRows = 16;
  t.validCols = 16;
  t.placement = 0;
  f.tiles.push_back(t);
  img.functions.push_back(f);
  auto bytes = obj::writeImage(img);
  ASSERT_EQ(bytes.index(), 0u);
  auto b = std::get<0>(bytes);
  ASSERT_EQ(loadError(b), "");
  // Tile record: fn, name, 6 x u8, fractal u16, rows, cols, valid rows, valid cols, placement
  // (i64), alias (u32) at 40.
  poke<uint32_t>(b, tableRecords(b, "PTTL") + 40, 0x80000000u);
  EXPECT_NE(loadError(b).find("view"), std::string::npos) << loadError(b);
}

// ---------------------------------------------------------------- .npy and host buffers
TEST(NpyChecks, ShapesAndSizes) {
  std::string why;
  EXPECT_FALSE(rt::parseShape("99999999999999999999x1", &why));
  EXPECT_NE(why.find("too large"), std::string::npos) << why;
  EXPECT_FALSE(rt::parseShape("1e20", &why));
  EXPECT_EQ(rt::parseShape("4x8"), (std::vector<int64_t>{4, 8}));
  auto big = rt::makeTensor(isa::DType::F32, {100000, 100000}, "--random x");
  ASSERT_FALSE(big);
  EXPECT_NE(big.error().message.find("GiB buffer limit"), std::string::npos) << big.error().message;
  auto neg = rt::makeTensor(isa::DType::F32, {-1, 4}, "x");
  ASSERT_FALSE(neg);
  auto over = rt::makeTensor(isa::DType::F32, {INT64_MAX, 4}, "x");
  ASSERT_FALSE(over);
  EXPECT_TRUE(rt::makeTensor(isa::DType::F16, {4, 4}, "x"));
}

TEST(NpyChecks, BoolTensorsTakeAByteAnElement) {
  // i1 is numpy's bool (|b1): one byte per element. It was sized as 1 bit per element and
  // written as nibbles, past the end of the buffer.
  rt::Tensor b = rt::Tensor::zeros(isa::DType::I1, {8});
  ASSERT_EQ(b.data.size(), 8u);
  for (int64_t i = 0; i < 8; ++i)
    b.setBits(i, i % 2);
  for (int64_t i = 0; i < 8; ++i)
    EXPECT_EQ(b.bitsAt(i), static_cast<uint64_t>(i % 2));
  auto back = rt::fromNpy(rt::toNpy(b), "b.npy");
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back.value().data, b.data);
  EXPECT_EQ(back.value().dtype, isa::DType::I1);
}

TEST(NpyChecks, DTypeMismatchIsAnError) {
  rt::Tensor ints = rt::Tensor::zeros(isa::DType::I32, {4});
  auto st = rt::adoptDType(ints, isa::DType::F32, "x");
  ASSERT_TRUE(st);
  EXPECT_NE(
      st->message.find("parameter %x has element type f32 but the data is i32; convert it first"),
      std::string::npos)
      << st->message;
  EXPECT_EQ(ints.dtype, isa::DType::I32);
  // bf16 travels as <u2 raw bits: that is its carrier, not a conversion.
  rt::Tensor raw = rt::Tensor::zeros(isa::DType::U16, {4});
  EXPECT_EQ(rt::adoptDType(raw, isa::DType::BF16, "b"), std::nullopt);
  EXPECT_EQ(raw.dtype, isa::DType::BF16);
  rt::Tensor f16 = rt::Tensor::zeros(isa::DType::F16, {4});
  EXPECT_TRUE(rt::adoptDType(f16, isa::DType::BF16, "h"));
}

TEST(NpyChecks, BindRefusesAnotherElementType) {
  rt::Module mod = test::buildModule(test::sourcePath("samples/vadd/vadd.pto"));
  auto launch = mod.launch("vadd");
  ASSERT_TRUE(launch);
  rt::Tensor ints = rt::Tensor::zeros(isa::DType::I32, {64, 64});
  auto st = launch.value().bind("x", &ints);
  ASSERT_TRUE(st);
  EXPECT_NE(st->message.find("has element type f32 but the buffer holds i32"), std::string::npos)
      << st->message;
  rt::Tensor floats = rt::Tensor::zeros(isa::DType::F32, {64, 64});
  EXPECT_EQ(launch.value().bind("x", &floats), std::nullopt);
  EXPECT_TRUE(launch.value().bind("#99999999999999999999", &floats)); // no throw
}

TEST(NpyChecks, ModuleOpenRefusesADirectory) {
  auto mod = rt::Module::open(fs::temp_directory_path().string());
  ASSERT_FALSE(mod);
  EXPECT_NE(mod.error().message.find(std::strerror(EISDIR)), std::string::npos)
      << mod.error().message;
  auto npy = rt::readNpy(fs::temp_directory_path().string());
  ASSERT_FALSE(npy);
  EXPECT_NE(npy.error().message.find(std::strerror(EISDIR)), std::string::npos)
      << npy.error().message;
}

// ---------------------------------------------------------------- front end
namespace {
std::string frontEndErrors(const std::string& text, bool* parsed = nullptr) {
  as::SourceFile src("t.pto", text);
  std::ostringstream err;
  {
    as::DiagEngine diags(src, err);
    auto m = as::parseModule(src, diags);
    if (parsed) *parsed = m != nullptr;
  }
  return err.str();
}
} // namespace

TEST(FrontEndLimits, DiagnosticsEscapeControlCharacters) {
  std::string err = frontEndErrors("func.func @k() {\n  \x1b[31mbogus\n}\n");
  EXPECT_EQ(err.find('\x1b'), std::string::npos) << err;
  EXPECT_NE(err.find("\\x1b[31mbogus"), std::string::npos) << err;
}

TEST(FrontEndLimits, HugeAndNegativeDimensionsAreLocatedErrors) {
  std::string huge = frontEndErrors(
      "func.func @k(%x: !pto.tensor_view<99999999999999999999x64xf32>) {\n  return\n}\n");
  EXPECT_NE(huge.find("t.pto:1:35: error: dimension '99999999999999999999' is too large"),
            std::string::npos)
      << huge;
  std::string neg =
      frontEndErrors("func.func @k(%x: !pto.tensor_view<-5x64xf32>) {\n  return\n}\n");
  EXPECT_NE(neg.find("t.pto:1:35: error: negative dimension '-5'"), std::string::npos) << neg;
}

TEST(FrontEndLimits, DeepNestingIsAnErrorNotACrash) {
  std::string text = "func.func @k(%n: index) {\n";
  const int depth = 20000;
  for (int i = 0; i < depth; ++i)
    text += "scf.for %i" + std::to_string(i) + " = 0 to %n step 1 {\n";
  for (int i = 0; i < depth; ++i)
    text += "}\n";
  text += "return\n}\n";
  bool parsed = true;
  std::string err = frontEndErrors(text, &parsed);
  EXPECT_FALSE(parsed);
  EXPECT_NE(err.find("brackets nest more than 256 levels deep"), std::string::npos)
      << err.substr(0, 500);
  EXPECT_NE(err.find("t.pto:257:"), std::string::npos) << err.substr(0, 500);
  // Angle brackets count too.
  std::string angles =
      frontEndErrors("func.func @k(%x: !pto.ptr<" + std::string(300, '<') + ">) {\n}\n", &parsed);
  EXPECT_FALSE(parsed);
  EXPECT_NE(angles.find("brackets nest more than 256 levels deep"), std::string::npos)
      << angles.substr(0, 500);
}

TEST(FrontEndLimits, GarbageStopsEarly) {
  // Every '%' alone is an error: parsing stops at the recovery budget instead of reading the rest.
  std::string text;
  for (int i = 0; i < 200000; ++i)
    text += "%\n";
  bool parsed = true;
  std::string err = frontEndErrors(text, &parsed);
  EXPECT_FALSE(parsed);
  EXPECT_NE(err.find("stopping"), std::string::npos) << err.substr(0, 500);
  // The same with tokens the parser can resynchronise on: the error limit stops it.
  text.clear();
  for (int i = 0; i < 20000; ++i)
    text += "func.func @f" + std::to_string(i) + "() -> \n";
  err = frontEndErrors(text, &parsed);
  EXPECT_FALSE(parsed);
  EXPECT_NE(err.find("stopping"), std::string::npos) << err.substr(0, 500);
}

namespace {
/// The peak resident memory of this process (VmHWM), in bytes.
uint64_t peakRss() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmHWM:", 0) == 0) return std::stoull(line.substr(6)) * 1024;
  return 0;
}

/// Peak memory a parse of `text` adds, measured in a child process (so other tests' peaks do not
/// hide it), in bytes; UINT64_MAX if the child failed.
uint64_t parsePeak(const std::string& text) {
  int fds[2];
  if (::pipe(fds) != 0) return UINT64_MAX;
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    const uint64_t before = peakRss();
    {
      as::SourceFile src("t.pto", text);
      std::ostringstream err;
      as::DiagEngine diags(src, err);
      (void)as::parseModule(src, diags);
    }
    const uint64_t grown = peakRss() - before;
    if (::write(fds[1], &grown, sizeof grown) != sizeof grown) ::_exit(1);
    ::_exit(0);
  }
  ::close(fds[1]);
  uint64_t grown = UINT64_MAX;
  if (::read(fds[0], &grown, sizeof grown) != sizeof grown) grown = UINT64_MAX;
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return grown;
}
} // namespace

TEST(FrontEndLimits, MemoryPerInputByte) {
  // ANTLR's UTF-8 decoder alone kept 20 bytes per input byte, and error recovery kept every
  // token of a garbage file (250 bytes per byte of '%'). Now: one code point per character and
  // a recovery budget. The bound leaves room for sanitizer builds.
  const size_t n = 8 << 20;
  const std::string garbage(n, '%'), blank(n, ' ');
  const uint64_t g = parsePeak(garbage), b = parsePeak(blank);
  EXPECT_LT(g, 12 * n) << g / n << " bytes per input byte";
  EXPECT_LT(b, 12 * n) << b / n << " bytes per input byte";
}
