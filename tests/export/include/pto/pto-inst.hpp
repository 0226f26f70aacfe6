// Declarations only: the names and signatures of the pto-isa API that `pto-ld --emit=cpp` uses,
// with no semantics, so that the tests can check the exported C++ with `-fsyntax-only` without
// a pto-isa checkout (docs/cpp-export.md). Written from pto-isa's documented signatures; a real
// build uses the user's own pto-isa headers instead of this file.
#pragma once

#include <cstdint>
#include <string>

#define __global__
#define AICORE
#define __gm__

struct half { uint16_t storage; };
struct bfloat16_t { uint16_t storage; };
struct float8_e4m3_t { uint8_t storage; };
struct float8_e5m2_t { uint8_t storage; };
struct float8_e8m0_t { uint8_t storage; };
struct hifloat8_t { uint8_t storage; };
struct float4_e2m1x2_t { uint8_t storage; };
struct float4_e1m2x2_t { uint8_t storage; };
struct int4b_t { uint8_t storage; };

using pipe_t = int;
using event_t = int;
extern const pipe_t PIPE_S, PIPE_V, PIPE_M, PIPE_MTE1, PIPE_MTE2, PIPE_MTE3, PIPE_ALL, PIPE_FIX;
extern const event_t EVENT_ID0, EVENT_ID1, EVENT_ID2, EVENT_ID3, EVENT_ID4, EVENT_ID5, EVENT_ID6, EVENT_ID7;
void set_flag(pipe_t src, pipe_t dst, event_t id);
void wait_flag(pipe_t src, pipe_t dst, event_t id);
void pipe_barrier(pipe_t pipe);
void set_mask_norm();
void set_vector_mask(int64_t hi, int64_t lo);
uint32_t get_block_idx();
uint32_t get_block_num();
uint32_t get_subblockid();
uint32_t get_subblockdim();
using aclrtStream = void*;
#ifdef __CPU_SIM
#include <acl/acl.h> // pto-isa's CPU simulator stubs the ACL runtime
#endif

namespace pto {

enum class TileType { Vec, Mat, Left, Right, Acc, Bias, Scaling, ScaleLeft, ScaleRight, Ctrl };
enum class BLayout { RowMajor, ColMajor };
enum class SLayout { NoneBox, RowMajor, ColMajor };
enum class PadValue : uint64_t { Null, Zero, Max, Min };
enum class CompactMode { Null, Normal, RowPlusOne, RowAlignedPadding };
enum class RoundMode : uint8_t { CAST_NONE, CAST_RINT, CAST_ROUND, CAST_FLOOR, CAST_CEIL, CAST_TRUNC, CAST_ODD };
enum class SaturationMode : uint8_t { ON, OFF };
enum class CmpMode : uint8_t { EQ, NE, LT, LE, GT, GE };
enum class SqrtAlgorithm { DEFAULT, HIGH_PRECISION };
enum class Layout { ND, DN, NZ };
struct RecordEvent {};

template <TileType Loc, typename Element, int Rows, int Cols, BLayout B = BLayout::RowMajor, int RowValid = Rows,
          int ColValid = Cols, SLayout S = SLayout::NoneBox, int Fractal = 512, PadValue Pad = PadValue::Null,
          CompactMode Compact = CompactMode::Null>
struct Tile {
  using DType = Element;
  Tile();
  explicit Tile(unsigned validRowsOrCols);
  Tile(unsigned validRows, unsigned validCols);
  void SetValidRow(unsigned rows);
  void SetValidCol(unsigned cols);
  void SetValidShape(unsigned rows, unsigned cols);
  template <typename T> void SetValue(int32_t offset, T value);
};

template <int64_t N1, int64_t N2, int64_t N3, int64_t N4, int64_t N5> struct Shape {
  Shape();
  explicit Shape(int64_t n);
  Shape(int64_t n1, int64_t n2);
};
template <int64_t S1, int64_t S2, int64_t S3, int64_t S4, int64_t S5> struct Stride {
  Stride();
  explicit Stride(int64_t n);
  Stride(int64_t n1, int64_t n2);
};
template <typename Element, typename Shape_, typename Stride_, Layout L = Layout::ND> struct GlobalTensor {
  using Shape = Shape_;
  using Stride = Stride_;
  using DType = Element;
  explicit GlobalTensor(DType* data, const Shape& shape = Shape(), const Stride& stride = Stride());
};

template <typename T> void TASSIGN(T& tile, uint64_t address);

// Intrinsics by operand shape (destination first), as pto-isa declares them.
#define PTO_DECL2(NAME) template <typename D, typename S> RecordEvent NAME(D& dst, S& src);
#define PTO_DECL3(NAME) template <typename D, typename S0, typename S1> RecordEvent NAME(D& dst, S0& src0, S1& src1);
#define PTO_DECL4(NAME)                                                                                   \
  template <typename D, typename S0, typename S1, typename S2> RecordEvent NAME(D& dst, S0& s0, S1& s1, S2& s2);
#define PTO_DECL5(NAME)                                                                                   \
  template <typename D, typename S0, typename S1, typename S2, typename S3>                               \
  RecordEvent NAME(D& dst, S0& s0, S1& s1, S2& s2, S3& s3);
#define PTO_DECLS(NAME) template <typename D, typename S> RecordEvent NAME(D& dst, S& src, typename S::DType scalar);
#define PTO_DECLST(NAME)                                                                                  \
  template <typename D, typename S, typename T> RecordEvent NAME(D& dst, S& src, typename S::DType scalar, T& tmp);

PTO_DECL2(TLOAD) PTO_DECL2(TSTORE) PTO_DECL2(TPREFETCH)
PTO_DECL3(MGATHER) PTO_DECL3(MSCATTER)
PTO_DECL2(TMOV) PTO_DECL3(TMOV_FP) PTO_DECL2(TTRANS) PTO_DECL3(TTRANS)
PTO_DECL2(TFILLPAD) PTO_DECL2(TFILLPAD_INPLACE) PTO_DECL2(TFILLPAD_EXPAND) PTO_DECL2(TPACK) PTO_DECL3(TCONCAT)
template <typename D, typename S> RecordEvent TEXTRACT(D& dst, S& src, uint16_t row, uint16_t col);
template <typename D, typename S> RecordEvent TINSERT(D& dst, S& src, uint16_t row, uint16_t col);
PTO_DECL3(TMATMUL) PTO_DECL4(TMATMUL_ACC) PTO_DECL4(TMATMUL_BIAS) PTO_DECL5(TMATMUL_MX)
PTO_DECL3(TGEMV) PTO_DECL4(TGEMV_ACC) PTO_DECL4(TGEMV_BIAS)
PTO_DECL3(TADD) PTO_DECL3(TSUB) PTO_DECL3(TMUL) PTO_DECL3(TDIV) PTO_DECL3(TMAX) PTO_DECL3(TMIN) PTO_DECL3(TFMOD)
PTO_DECL3(TAND) PTO_DECL3(TOR) PTO_DECL3(TSHL) PTO_DECL3(TSHR)
PTO_DECL3(TPARTADD) PTO_DECL3(TPARTMAX) PTO_DECL3(TPARTMIN) PTO_DECL3(TPARTMUL)
PTO_DECL4(TREM) PTO_DECL4(TXOR) PTO_DECL4(TPRELU)
template <typename D, typename S0, typename S1> RecordEvent TCMP(D& dst, S0& src0, S1& src1, CmpMode mode);
template <typename D, typename S> RecordEvent TCMPS(D& dst, S& src, typename S::DType scalar, CmpMode mode);
PTO_DECL5(TSEL)
PTO_DECLS(TADDS) PTO_DECLS(TSUBS) PTO_DECLS(TMULS) PTO_DECLS(TDIVS) PTO_DECLS(TMAXS) PTO_DECLS(TMINS)
PTO_DECLS(TFMODS) PTO_DECLS(TANDS) PTO_DECLS(TORS) PTO_DECLS(TSHLS) PTO_DECLS(TSHRS) PTO_DECLS(TLRELU) PTO_DECLS(TAXPY)
PTO_DECLST(TREMS) PTO_DECLST(TXORS)
template <typename D, typename M, typename S, typename T>
RecordEvent TSELS(D& dst, M& mask, S& src, T& tmp, typename S::DType scalar);
template <typename D> RecordEvent TEXPANDS(D& dst, typename D::DType scalar);
PTO_DECL4(TADDC) PTO_DECL4(TSUBC)
template <typename D, typename S0, typename S1> RecordEvent TADDSC(D& dst, S0& src0, typename S0::DType scalar, S1& src1);
template <typename D, typename S0, typename S1> RecordEvent TSUBSC(D& dst, S0& src0, typename S0::DType scalar, S1& src1);
PTO_DECL2(TABS) PTO_DECL2(TNEG) PTO_DECL2(TEXP) PTO_DECL2(TLOG) PTO_DECL2(TRSQRT) PTO_DECL3(TRSQRT)
PTO_DECL2(TRECIP) PTO_DECL2(TRELU) PTO_DECL2(TNOT)
template <SqrtAlgorithm A = SqrtAlgorithm::DEFAULT, typename D, typename S> RecordEvent TSQRT(D& dst, S& src);
template <typename D, typename S> RecordEvent TCVT(D& dst, S& src, RoundMode mode, SaturationMode sat);
template <typename D, typename S, typename T> RecordEvent TCVT(D& dst, S& src, T& tmp, RoundMode mode, SaturationMode sat);
PTO_DECL3(TROWSUM) PTO_DECL3(TROWMAX) PTO_DECL3(TROWMIN) PTO_DECL3(TROWPROD) PTO_DECL3(TROWARGMAX) PTO_DECL3(TROWARGMIN)
PTO_DECL3(TCOLSUM) PTO_DECL2(TCOLMAX) PTO_DECL2(TCOLMIN) PTO_DECL2(TCOLPROD) PTO_DECL3(TCOLARGMAX) PTO_DECL3(TCOLARGMIN)
PTO_DECL3(THISTOGRAM)
PTO_DECL2(TROWEXPAND) PTO_DECL2(TCOLEXPAND)
PTO_DECL4(TROWEXPANDADD) PTO_DECL4(TROWEXPANDSUB) PTO_DECL4(TROWEXPANDMUL) PTO_DECL4(TROWEXPANDDIV)
PTO_DECL4(TROWEXPANDMAX) PTO_DECL4(TROWEXPANDMIN) PTO_DECL4(TROWEXPANDEXPDIF)
PTO_DECL3(TROWEXPANDADD) PTO_DECL3(TROWEXPANDSUB) PTO_DECL3(TROWEXPANDMUL) PTO_DECL3(TROWEXPANDDIV)
PTO_DECL3(TROWEXPANDMAX) PTO_DECL3(TROWEXPANDMIN) PTO_DECL3(TROWEXPANDEXPDIF)
PTO_DECL3(TCOLEXPANDADD) PTO_DECL3(TCOLEXPANDSUB) PTO_DECL3(TCOLEXPANDMUL) PTO_DECL3(TCOLEXPANDDIV)
PTO_DECL3(TCOLEXPANDMAX) PTO_DECL3(TCOLEXPANDMIN) PTO_DECL3(TCOLEXPANDEXPDIF)
PTO_DECL2(TGATHER) PTO_DECL3(TGATHER) PTO_DECL4(TGATHER) PTO_DECL3(TGATHERB) PTO_DECL3(TSCATTER)
PTO_DECL3(TSORT32) PTO_DECL4(TSORT32)
template <typename D> RecordEvent TCI(D& dst, typename D::DType start);
template <typename D> RecordEvent TTRI(D& dst, int32_t diagonal);
PTO_DECL3(TQUANT) PTO_DECL4(TQUANT) PTO_DECL4(TDEQUANT)

namespace cpu_sim {
struct KernelLaunchOptions {
  std::string kernel_name;
  uint32_t explicit_block_count = 0;
};
// Defined empty: a declared-only template cannot be used with the launcher's local lambda.
template <typename KernelFn> void LaunchKernelMultiCore(const KernelLaunchOptions&, aclrtStream, KernelFn&&) {}
} // namespace cpu_sim

} // namespace pto
