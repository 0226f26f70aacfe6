// Declarations only: the names and signatures of the pto-isa API that `pto-ld --emit=cpp` uses,
// with no semantics, so that the tests can check the exported C++ with `-fsyntax-only` without
// a pto-isa checkout (docs/cpp-export.md). Written from pto-isa's documented signatures; a real
// build uses the user's own pto-isa headers instead of this file.
// The declarations are macro tables; clang-format cannot lay them out stably.
// clang-format off
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
enum class STPhase : uint8_t { Unspecified = 0, Partial = 2, Final = 3 };
enum class AccToVecMode : uint8_t { SingleModeVec0, SingleModeVec1, DualModeSplitM, DualModeSplitN };
enum class ReluPreMode : uint8_t { NoRelu, NormalRelu };
enum class AtomicType : uint8_t { AtomicNone, AtomicAdd };
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

enum class DivAlgorithm { DEFAULT, HIGH_PRECISION };
enum class LogAlgorithm { DEFAULT, HIGH_PRECISION };
enum class RecipAlgorithm { DEFAULT, HIGH_PRECISION };
enum class ExpAlgorithm { DEFAULT, HIGH_PRECISION };
enum class RsqrtAlgorithm { DEFAULT, HIGH_PRECISION };
enum class FmodAlgorithm { DEFAULT, HIGH_PRECISION };
enum class FmodSAlgorithm { DEFAULT, HIGH_PRECISION };
enum class RemAlgorithm { DEFAULT, HIGH_PRECISION };
enum class RemSAlgorithm { DEFAULT, HIGH_PRECISION };
enum class AccPhase { Unspecified, Partial, Final };
enum class MaskPattern { P0101 = 1, P1010, P0001, P0010, P0100, P1000, P1111 };
enum class GatherAxis { GATHER_ROW, GATHER_COL };
enum class TFillPadMode { Normal, Inplace, Expand };
enum class PrintFormat : uint8_t { Width8_Precision4 = 0, Width8_Precision2 = 1, Width10_Precision6 = 2 };

#define PTO_INST

template <typename T, typename AddrType> PTO_INST void TASSIGN(T& obj, AddrType addr);

// The intrinsics the export calls, with the signatures of pto-isa's include/pto/common/
// pto_instr.hpp (template parameters, parameter types and order, the trailing wait events).
// tests/unit/ExportTest.cpp checks that every op the export knows is declared here.
#define PTO_UNARY(NAME)                                                                            \
  template <typename TileDataDst, typename TileDataSrc, typename... WaitEvents>                    \
  PTO_INST RecordEvent NAME(TileDataDst& dst, TileDataSrc& src, WaitEvents&... events);
#define PTO_BINARY(NAME)                                                                           \
  template <typename TileDataDst, typename TileDataSrc0, typename TileDataSrc1, typename... WaitEvents> \
  PTO_INST RecordEvent NAME(TileDataDst& dst, TileDataSrc0& src0, TileDataSrc1& src1, WaitEvents&... events);
#define PTO_BINARY_P(NAME, ALG)                                                                    \
  template <auto PrecisionType = ALG::DEFAULT, typename TileDataDst, typename TileDataSrc0,         \
            typename TileDataSrc1, typename... WaitEvents>                                         \
  PTO_INST RecordEvent NAME(TileDataDst& dst, TileDataSrc0& src0, TileDataSrc1& src1, WaitEvents&... events);
#define PTO_BINARY_TMP(NAME)                                                                       \
  template <typename TileDataDst, typename TileDataSrc0, typename TileDataSrc1, typename TileDataTmp, \
            typename... WaitEvents>                                                                \
  PTO_INST RecordEvent NAME(TileDataDst& dst, TileDataSrc0& src0, TileDataSrc1& src1, TileDataTmp& tmp, \
                            WaitEvents&... events);
#define PTO_SCALAR(NAME, SCALAR)                                                                   \
  template <typename TileDataDst, typename TileDataSrc, typename... WaitEvents>                    \
  PTO_INST RecordEvent NAME(TileDataDst& dst, TileDataSrc& src0, typename SCALAR::DType scalar,     \
                            WaitEvents&... events);
#define PTO_REDUCE_TMP(NAME)                                                                       \
  template <typename TileDataOut, typename TileDataIn, typename TileDataTmp, typename... WaitEvents> \
  PTO_INST RecordEvent NAME(TileDataOut& dst, TileDataIn& src, TileDataTmp& tmp, WaitEvents&... events);
#define PTO_REDUCE(NAME)                                                                           \
  template <typename TileDataOut, typename TileDataIn, typename... WaitEvents>                      \
  PTO_INST RecordEvent NAME(TileDataOut& dst, TileDataIn& src, WaitEvents&... events);
#define PTO_MATMUL(NAME)                                                                           \
  template <typename TileRes, typename TileLeft, typename TileRight, typename... WaitEvents>        \
  PTO_INST RecordEvent NAME(TileRes& cMatrix, TileLeft& aMatrix, TileRight& bMatrix, WaitEvents&... events);
#define PTO_MATMUL_ACC(NAME)                                                                       \
  template <typename TileRes, typename TileLeft, typename TileRight, typename... WaitEvents>        \
  PTO_INST RecordEvent NAME(TileRes& cOutMatrix, TileRes& cInMatrix, TileLeft& aMatrix, TileRight& bMatrix, \
                            WaitEvents&... events);
#define PTO_MATMUL_BIAS(NAME)                                                                      \
  template <typename TileRes, typename TileLeft, typename TileRight, typename TileBias, typename... WaitEvents> \
  PTO_INST RecordEvent NAME(TileRes& cMatrix, TileLeft& aMatrix, TileRight& bMatrix, TileBias& biasData, \
                            WaitEvents&... events);

// Memory.
template <typename TileData, typename GlobalData, typename... WaitEvents>
PTO_INST RecordEvent TLOAD(TileData& dst, GlobalData& src, WaitEvents&... events);
template <typename TileData, typename GlobalData> PTO_INST RecordEvent TPREFETCH(TileData& dst, GlobalData& src);
template <typename TileData, typename GlobalData, typename... WaitEvents>
PTO_INST RecordEvent TSTORE(GlobalData& dst, TileData& src, WaitEvents&... events);
template <STPhase Phase, typename TileData, typename GlobalData, typename... WaitEvents>
PTO_INST RecordEvent TSTORE(GlobalData& dst, TileData& src, WaitEvents&... events);
template <typename TileData, typename GlobalData, AtomicType atomicType, typename... WaitEvents>
PTO_INST RecordEvent TSTORE(GlobalData& dst, TileData& src, WaitEvents&... events);
template <STPhase Phase, typename TileData, typename GlobalData, AtomicType atomicType, typename... WaitEvents>
PTO_INST RecordEvent TSTORE(GlobalData& dst, TileData& src, WaitEvents&... events);
template <typename TileData, typename GlobalData, AtomicType atomicType, ReluPreMode reluPreMode, typename... WaitEvents>
PTO_INST RecordEvent TSTORE(GlobalData& dst, TileData& src, WaitEvents&... events);
template <STPhase Phase, typename TileData, typename GlobalData, AtomicType atomicType, ReluPreMode reluPreMode,
          typename... WaitEvents>
PTO_INST RecordEvent TSTORE(GlobalData& dst, TileData& src, WaitEvents&... events);
template <typename TileData, typename GlobalData, AtomicType atomicType = AtomicType::AtomicNone,
          ReluPreMode reluPreMode = ReluPreMode::NoRelu, typename... WaitEvents>
PTO_INST RecordEvent TSTORE(GlobalData& dst, TileData& src, uint64_t preQuantScalar, WaitEvents&... events);
template <STPhase Phase, typename TileData, typename GlobalData, AtomicType atomicType = AtomicType::AtomicNone,
          ReluPreMode reluPreMode = ReluPreMode::NoRelu, typename... WaitEvents>
PTO_INST RecordEvent TSTORE(GlobalData& dst, TileData& src, uint64_t preQuantScalar, WaitEvents&... events);
template <typename TileData, typename GlobalData, typename FpTileData, AtomicType atomicType = AtomicType::AtomicNone,
          ReluPreMode reluPreMode = ReluPreMode::NoRelu, typename... WaitEvents>
PTO_INST RecordEvent TSTORE_FP(GlobalData& dst, TileData& src, FpTileData& fp, WaitEvents&... events);
template <typename TileDst, typename GlobalData, typename TileInd, typename... WaitEvents>
PTO_INST RecordEvent MGATHER(TileDst& dst, GlobalData& src, TileInd& indexes, WaitEvents&... events);
template <typename GlobalData, typename TileSrc, typename TileInd, typename... WaitEvents>
PTO_INST RecordEvent MSCATTER(GlobalData& dst, TileSrc& src, TileInd& indexes, WaitEvents&... events);

// Moves and layout.
template <typename DstTileData, typename SrcTileData, typename... WaitEvents>
PTO_INST RecordEvent TMOV(DstTileData& dst, SrcTileData& src, WaitEvents&... events);
template <typename DstTileData, typename SrcTileData, typename FpTileData, typename... WaitEvents>
PTO_INST RecordEvent TMOV_FP(DstTileData& dst, SrcTileData& src, FpTileData& fp, WaitEvents&... events);
template <typename DstTileData, typename SrcTileData, ReluPreMode reluMode, typename... WaitEvents>
PTO_INST RecordEvent TMOV(DstTileData& dst, SrcTileData& src, WaitEvents&... events);
template <STPhase Phase, typename DstTileData, typename SrcTileData, ReluPreMode reluMode, typename... WaitEvents>
PTO_INST RecordEvent TMOV(DstTileData& dst, SrcTileData& src, WaitEvents&... events);
template <typename DstTileData, typename SrcTileData, AccToVecMode mode, ReluPreMode reluMode = ReluPreMode::NoRelu,
          typename... WaitEvents>
PTO_INST RecordEvent TMOV(DstTileData& dst, SrcTileData& src, WaitEvents&... events);
template <STPhase Phase, typename DstTileData, typename SrcTileData, AccToVecMode mode,
          ReluPreMode reluMode = ReluPreMode::NoRelu, typename... WaitEvents>
PTO_INST RecordEvent TMOV(DstTileData& dst, SrcTileData& src, WaitEvents&... events);
template <typename DstTileData, typename SrcTileData, typename FpTileData, AccToVecMode mode,
          ReluPreMode reluMode = ReluPreMode::NoRelu, typename... WaitEvents>
PTO_INST RecordEvent TMOV(DstTileData& dst, SrcTileData& src, FpTileData& fp, WaitEvents&... events);
template <STPhase Phase, typename DstTileData, typename SrcTileData, typename FpTileData, AccToVecMode mode,
          ReluPreMode reluMode = ReluPreMode::NoRelu, typename... WaitEvents>
PTO_INST RecordEvent TMOV(DstTileData& dst, SrcTileData& src, FpTileData& fp, WaitEvents&... events);
template <typename DstTileData, typename SrcTileData, ReluPreMode reluMode = ReluPreMode::NoRelu, typename... WaitEvents>
PTO_INST RecordEvent TMOV(DstTileData& dst, SrcTileData& src, uint64_t preQuantScalar, WaitEvents&... events);
template <STPhase Phase, typename DstTileData, typename SrcTileData, ReluPreMode reluMode = ReluPreMode::NoRelu,
          typename... WaitEvents>
PTO_INST RecordEvent TMOV(DstTileData& dst, SrcTileData& src, uint64_t preQuantScalar, WaitEvents&... events);
template <typename DstTileData, typename SrcTileData, AccToVecMode mode, ReluPreMode reluMode = ReluPreMode::NoRelu,
          typename... WaitEvents>
PTO_INST RecordEvent TMOV(DstTileData& dst, SrcTileData& src, uint64_t preQuantScalar, WaitEvents&... events);
template <STPhase Phase, typename DstTileData, typename SrcTileData, AccToVecMode mode,
          ReluPreMode reluMode = ReluPreMode::NoRelu, typename... WaitEvents>
PTO_INST RecordEvent TMOV(DstTileData& dst, SrcTileData& src, uint64_t preQuantScalar, WaitEvents&... events);
template <typename DstTileData, typename SrcTileData, typename... WaitEvents>
PTO_INST RecordEvent TEXTRACT(DstTileData& dst, SrcTileData& src, uint16_t indexRow = 0, uint16_t indexCol = 0,
                              WaitEvents&... events);
template <typename DstTileData, typename SrcTileData, typename... WaitEvents>
PTO_INST RecordEvent TINSERT(DstTileData& dst, SrcTileData& src, uint16_t indexRow, uint16_t indexCol,
                             WaitEvents&... events);
template <typename TileDataDst, typename TileDataSrc, typename TileDataTmp, typename... WaitEvents>
PTO_INST RecordEvent TTRANS(TileDataDst& dst, TileDataSrc& src, TileDataTmp& tmp, WaitEvents&... events);
template <TFillPadMode mode = TFillPadMode::Normal, typename DstTileData, typename SrcTileData, typename... WaitEvents>
PTO_INST RecordEvent TFILLPAD(DstTileData& dst, SrcTileData& src, WaitEvents&... events);
template <typename DstTileData, typename SrcTileData, typename... WaitEvents>
PTO_INST RecordEvent TFILLPAD_INPLACE(DstTileData& dst, SrcTileData& src, WaitEvents&... events);
template <typename DstTileData, typename SrcTileData, typename... WaitEvents>
PTO_INST RecordEvent TFILLPAD_EXPAND(DstTileData& dst, SrcTileData& src, WaitEvents&... events);
PTO_BINARY(TCONCAT)

// Cube.
PTO_MATMUL(TMATMUL) PTO_MATMUL_ACC(TMATMUL_ACC) PTO_MATMUL_BIAS(TMATMUL_BIAS)
PTO_MATMUL(TGEMV) PTO_MATMUL_ACC(TGEMV_ACC) PTO_MATMUL_BIAS(TGEMV_BIAS)
template <typename TileRes, typename TileLeft, typename TileLeftScale, typename TileRight, typename TileRightScale,
          typename... WaitEvents>
PTO_INST RecordEvent TMATMUL_MX(TileRes& cMatrix, TileLeft& aMatrix, TileLeftScale& aScaleMatrix, TileRight& bMatrix,
                                TileRightScale& bScaleMatrix, WaitEvents&... events);
template <typename TileRes, typename TileLeft, typename TileLeftScale, typename TileRight, typename TileRightScale,
          typename... WaitEvents>
PTO_INST RecordEvent TMATMUL_MX(TileRes& cOutMatrix, TileRes& cInMatrix, TileLeft& aMatrix,
                                TileLeftScale& aScaleMatrix, TileRight& bMatrix, TileRightScale& bScaleMatrix,
                                WaitEvents&... events);
template <typename TileRes, typename TileLeft, typename TileLeftScale, typename TileRight, typename TileRightScale,
          typename TileBias, typename... WaitEvents>
PTO_INST RecordEvent TMATMUL_MX(TileRes& cMatrix, TileLeft& aMatrix, TileLeftScale& aScaleMatrix, TileRight& bMatrix,
                                TileRightScale& bScaleMatrix, TileBias& biasData, WaitEvents&... events);

template <typename TileRes, typename TileLeft, typename TileLeftScale, typename TileRight, typename TileRightScale,
          typename... WaitEvents>
PTO_INST RecordEvent TGEMV_MX(TileRes& cMatrix, TileLeft& aMatrix, TileLeftScale& aScaleMatrix, TileRight& bMatrix,
                                TileRightScale& bScaleMatrix, WaitEvents&... events);
template <typename TileRes, typename TileLeft, typename TileLeftScale, typename TileRight, typename TileRightScale,
          typename... WaitEvents>
PTO_INST RecordEvent TGEMV_MX(TileRes& cOutMatrix, TileRes& cInMatrix, TileLeft& aMatrix,
                                TileLeftScale& aScaleMatrix, TileRight& bMatrix, TileRightScale& bScaleMatrix,
                                WaitEvents&... events);
template <typename TileRes, typename TileLeft, typename TileLeftScale, typename TileRight, typename TileRightScale,
          typename TileBias, typename... WaitEvents>
PTO_INST RecordEvent TGEMV_MX(TileRes& cMatrix, TileLeft& aMatrix, TileLeftScale& aScaleMatrix, TileRight& bMatrix,
                                TileRightScale& bScaleMatrix, TileBias& biasData, WaitEvents&... events);

// Element-wise tile-tile.
PTO_BINARY(TADD) PTO_BINARY(TSUB) PTO_BINARY(TMUL) PTO_BINARY(TMAX) PTO_BINARY(TMIN)
PTO_BINARY(TAND) PTO_BINARY(TOR) PTO_BINARY(TSHL) PTO_BINARY(TSHR)
PTO_BINARY(TPARTADD) PTO_BINARY(TPARTMAX) PTO_BINARY(TPARTMIN) PTO_BINARY(TPARTMUL)
#define PTO_PART_ARG(NAME)                                                                         \
  template <typename TileDataDst, typename TileDataSrc0, typename TileDataSrc1,                    \
            typename TileDataDstIdx, typename TileDataSrc0Idx, typename TileDataSrc1Idx,           \
            typename... WaitEvents>                                                                \
  PTO_INST RecordEvent NAME(TileDataDst& dstVal, TileDataSrc0& src0Val, TileDataSrc1& src1Val,     \
                            TileDataDstIdx& dstIdx, TileDataSrc0Idx& src0Idx,                      \
                            TileDataSrc1Idx& src1Idx, WaitEvents&... events);
PTO_PART_ARG(TPARTARGMAX) PTO_PART_ARG(TPARTARGMIN)
PTO_BINARY_P(TDIV, DivAlgorithm) PTO_BINARY_P(TFMOD, FmodAlgorithm)
template <auto PrecisionType = RemAlgorithm::DEFAULT, typename TileDataDst, typename TileDataSrc0,
          typename TileDataSrc1, typename TileDataTmp, typename... WaitEvents>
PTO_INST RecordEvent TREM(TileDataDst& dst, TileDataSrc0& src0, TileDataSrc1& src1, TileDataTmp& tmp,
                          WaitEvents&... events);
PTO_BINARY_TMP(TXOR) PTO_BINARY_TMP(TPRELU)
template <typename TileData, typename... WaitEvents>
PTO_INST RecordEvent TADDC(TileData& dst, TileData& src0, TileData& src1, TileData& src2, WaitEvents&... events);
template <typename TileData, typename... WaitEvents>
PTO_INST RecordEvent TSUBC(TileData& dst, TileData& src0, TileData& src1, TileData& src2, WaitEvents&... events);
template <typename TileDataDst, typename TileDataSrc0, typename TileDataSrc1, typename... WaitEvents>
PTO_INST RecordEvent TCMP(TileDataDst& dst, TileDataSrc0& src0, TileDataSrc1& src1, CmpMode cmpMode,
                          WaitEvents&... events);
template <typename TileData, typename MaskTile, typename TmpTile, typename... WaitEvents>
PTO_INST RecordEvent TSEL(TileData& dst, MaskTile& selMask, TileData& src0, TileData& src1, TmpTile& tmp,
                          WaitEvents&... events);

// Element-wise tile-scalar.
PTO_SCALAR(TADDS, TileDataSrc) PTO_SCALAR(TSUBS, TileDataSrc) PTO_SCALAR(TMULS, TileDataSrc)
PTO_SCALAR(TMAXS, TileDataSrc) PTO_SCALAR(TMINS, TileDataSrc) PTO_SCALAR(TLRELU, TileDataSrc)
template <typename TileDataDst, typename TileDataSrc, typename... WaitEvents>
PTO_INST RecordEvent TAXPY(TileDataDst& dst, TileDataSrc& src0, typename TileDataSrc::DType scalar,
                           WaitEvents&... events);
PTO_SCALAR(TANDS, TileDataDst) PTO_SCALAR(TORS, TileDataDst)
PTO_SCALAR(TSHLS, TileDataDst) PTO_SCALAR(TSHRS, TileDataDst)
template <auto PrecisionType = DivAlgorithm::DEFAULT, typename TileDataDst, typename TileDataSrc, typename... WaitEvents>
PTO_INST RecordEvent TDIVS(TileDataDst& dst, TileDataSrc& src0, typename TileDataSrc::DType scalar,
                           WaitEvents&... events);
template <auto PrecisionType = DivAlgorithm::DEFAULT, typename TileDataDst, typename TileDataSrc, typename... WaitEvents>
PTO_INST RecordEvent TDIVS(TileDataDst& dst, typename TileDataDst::DType scalar, TileDataSrc& src0,
                           WaitEvents&... events);
template <auto PrecisionType = FmodSAlgorithm::DEFAULT, typename TileDataDst, typename TileDataSrc,
          typename... WaitEvents>
PTO_INST RecordEvent TFMODS(TileDataDst& dst, TileDataSrc& src, typename TileDataSrc::DType scalar,
                            WaitEvents&... events);
template <auto PrecisionType = RemSAlgorithm::DEFAULT, typename TileDataDst, typename TileDataSrc,
          typename TileDataTmp, typename... WaitEvents>
PTO_INST RecordEvent TREMS(TileDataDst& dst, TileDataSrc& src, typename TileDataSrc::DType scalar, TileDataTmp& tmp,
                           WaitEvents&... events);
template <typename TileDataDst, typename TileDataSrc, typename TileDataTmp, typename... WaitEvents>
PTO_INST RecordEvent TXORS(TileDataDst& dst, TileDataSrc& src0, typename TileDataSrc::DType scalar, TileDataTmp& tmp,
                           WaitEvents&... events);
template <typename TileDataDst, typename TileDataSrc, typename... WaitEvents>
PTO_INST RecordEvent TCMPS(TileDataDst& dst, TileDataSrc& src0, typename TileDataSrc::DType src1, CmpMode mode,
                           WaitEvents&... events);
template <typename TileDataDst, typename TileDataMask, typename TileDataSrc, typename TileDataTmp,
          typename... WaitEvents>
PTO_INST RecordEvent TSELS(TileDataDst& dst, TileDataMask& mask, TileDataSrc& src, TileDataTmp& tmp,
                           typename TileDataSrc::DType scalar, WaitEvents&... events);
template <typename TileData, typename... WaitEvents>
PTO_INST RecordEvent TEXPANDS(TileData& dst, typename TileData::DType scalar, WaitEvents&... events);
template <typename TileData, typename... WaitEvents>
PTO_INST RecordEvent TADDSC(TileData& dst, TileData& src0, typename TileData::DType scalar, TileData& src1,
                            WaitEvents&... events);
template <typename TileData, typename... WaitEvents>
PTO_INST RecordEvent TSUBSC(TileData& dst, TileData& src0, typename TileData::DType scalar, TileData& src1,
                            WaitEvents&... events);

// Element-wise unary.
PTO_UNARY(TABS) PTO_UNARY(TNEG) PTO_UNARY(TNOT) PTO_UNARY(TRELU)
template <auto PrecisionType = ExpAlgorithm::DEFAULT, typename TileDataDst, typename TileDataSrc, typename... WaitEvents>
PTO_INST RecordEvent TEXP(TileDataDst& dst, TileDataSrc& src, WaitEvents&... events);
template <auto PrecisionType = LogAlgorithm::DEFAULT, typename TileDataDst, typename TileDataSrc, typename... WaitEvents>
PTO_INST RecordEvent TLOG(TileDataDst& dst, TileDataSrc& src, WaitEvents&... events);
template <auto PrecisionType = RecipAlgorithm::DEFAULT, typename TileDataDst, typename TileDataSrc,
          typename... WaitEvents>
PTO_INST RecordEvent TRECIP(TileDataDst& dst, TileDataSrc& src, WaitEvents&... events);
template <auto PrecisionType = SqrtAlgorithm::DEFAULT, typename TileDataDst, typename TileDataSrc,
          typename... WaitEvents>
PTO_INST RecordEvent TSQRT(TileDataDst& dst, TileDataSrc& src, WaitEvents&... events);
template <auto PrecisionType = RsqrtAlgorithm::DEFAULT, typename TileDataDst, typename TileDataSrc,
          typename... WaitEvents>
PTO_INST RecordEvent TRSQRT(TileDataDst& dst, TileDataSrc& src, WaitEvents&... events);
template <auto PrecisionType = RsqrtAlgorithm::DEFAULT, typename TileDataDst, typename TileDataSrc,
          typename TileDataTmp, typename... WaitEvents>
PTO_INST RecordEvent TRSQRT(TileDataDst& dst, TileDataSrc& src, TileDataTmp& tmp, WaitEvents&... events);
template <bool NeedSetCtrl = true, typename TileDataD, typename TileDataS, typename... WaitEvents>
PTO_INST RecordEvent TCVT(TileDataD& dst, TileDataS& src, RoundMode mode, SaturationMode satMode,
                          WaitEvents&... events);
template <bool NeedSetCtrl = true, typename TileDataD, typename TileDataS, typename TmpTileData, typename... WaitEvents>
PTO_INST RecordEvent TCVT(TileDataD& dst, TileDataS& src, TmpTileData& tmp, RoundMode mode, SaturationMode satMode,
                          WaitEvents&... events);

// Reductions and expansions.
PTO_REDUCE_TMP(TROWSUM) PTO_REDUCE_TMP(TROWMAX) PTO_REDUCE_TMP(TROWMIN) PTO_REDUCE_TMP(TROWPROD)
PTO_REDUCE_TMP(TROWARGMAX) PTO_REDUCE_TMP(TROWARGMIN) PTO_REDUCE_TMP(TCOLARGMAX) PTO_REDUCE_TMP(TCOLARGMIN)
PTO_REDUCE(TCOLSUM) PTO_REDUCE(TCOLMAX) PTO_REDUCE(TCOLMIN) PTO_REDUCE(TCOLPROD)
PTO_UNARY(TROWEXPAND) PTO_UNARY(TCOLEXPAND)
PTO_BINARY(TROWEXPANDADD) PTO_BINARY(TROWEXPANDSUB) PTO_BINARY(TROWEXPANDMUL) PTO_BINARY_P(TROWEXPANDDIV, DivAlgorithm)
PTO_BINARY(TROWEXPANDMAX) PTO_BINARY(TROWEXPANDMIN) PTO_BINARY(TROWEXPANDEXPDIF)
PTO_BINARY_TMP(TROWEXPANDADD) PTO_BINARY_TMP(TROWEXPANDSUB) PTO_BINARY_TMP(TROWEXPANDMUL)
PTO_BINARY_TMP(TROWEXPANDMAX) PTO_BINARY_TMP(TROWEXPANDMIN) PTO_BINARY_TMP(TROWEXPANDEXPDIF)
template <auto PrecisionType = DivAlgorithm::DEFAULT, typename TileDataDst, typename TileDataSrc0,
          typename TileDataSrc1, typename TileDataTmp, typename... WaitEvents>
PTO_INST RecordEvent TROWEXPANDDIV(TileDataDst& dst, TileDataSrc0& src0, TileDataSrc1& src1, TileDataTmp& tmp,
                                   WaitEvents&... events);
PTO_BINARY(TCOLEXPANDADD) PTO_BINARY(TCOLEXPANDSUB) PTO_BINARY(TCOLEXPANDMUL) PTO_BINARY_P(TCOLEXPANDDIV, DivAlgorithm)
PTO_BINARY(TCOLEXPANDMAX) PTO_BINARY(TCOLEXPANDMIN) PTO_BINARY(TCOLEXPANDEXPDIF)

// Gather, scatter, sort, generate, quantize.
template <typename TileDataD, typename TileDataS0, typename TileDataS1, typename TileDataTmp, typename... WaitEvents>
PTO_INST RecordEvent TGATHER(TileDataD& dst, TileDataS0& src0, TileDataS1& src1, TileDataTmp& tmp,
                             WaitEvents&... events);
template <typename DstTileData, typename SrcTileData, MaskPattern maskPattern = MaskPattern::P1111,
          auto gatherType = GatherAxis::GATHER_ROW, typename... WaitEvents>
PTO_INST RecordEvent TGATHER(DstTileData& dst, SrcTileData& src, WaitEvents&... events);
template <typename TileDataDst, typename TileDataSrc, typename TileDataOffset, typename... WaitEvents>
PTO_INST RecordEvent TGATHERB(TileDataDst& dst, TileDataSrc& src, TileDataOffset& offset, WaitEvents&... events);
template <typename TileDataD, typename TileDataS, typename TileDataI, typename... WaitEvents>
PTO_INST RecordEvent TSCATTER(TileDataD& dst, TileDataS& src, TileDataI& indexes, WaitEvents&... events);
template <typename DstTileData, typename SrcTileData, typename IdxTileData>
PTO_INST RecordEvent TSORT32(DstTileData& dst, SrcTileData& src, IdxTileData& idx);
template <typename DstTileData, typename SrcTileData, typename IdxTileData, typename TmpTileData>
PTO_INST RecordEvent TSORT32(DstTileData& dst, SrcTileData& src, IdxTileData& idx, TmpTileData& tmp);
template <typename DstTileData, typename SrcTileData, typename... WaitEvents>
PTO_INST RecordEvent TMRGSORT(DstTileData& dst, SrcTileData& src, uint32_t blockLen, WaitEvents&... events);
template <typename TileData, typename T, int descending, typename... WaitEvents>
PTO_INST RecordEvent TCI(TileData& dst, T start, WaitEvents&... events);
template <typename TileDataDst, typename TileDataSrc, typename TileDataPara, typename... WaitEvents>
PTO_INST RecordEvent TDEQUANT(TileDataDst& dst, TileDataSrc& src, TileDataPara& scale, TileDataPara& offset,
                              WaitEvents&... events);
// Debug print of a Vec tile (pto-isa declares it under _DEBUG / __CPU_SIM; no wait events, no
// RecordEvent). The GM-scratch overload for Acc/Mat tiles is not called by the export.
template <PrintFormat Format = PrintFormat::Width8_Precision4, typename TileData>
PTO_INST void TPRINT(TileData& src);

namespace cpu_sim {
struct KernelLaunchOptions {
  std::string kernel_name;
  uint32_t explicit_block_count = 0;
};
// Defined empty: a declared-only template cannot be used with the launcher's local lambda.
template <typename KernelFn> void LaunchKernelMultiCore(const KernelLaunchOptions&, aclrtStream, KernelFn&&) {}
} // namespace cpu_sim

} // namespace pto
