// pto.print's format rules (isa/PrintFormat.h), expected texts written by hand from C's printf
// definition, and the MLIR string decoding the parser gives them (support::mlirStringValue).
#include "isa/PrintFormat.h"
#include "support/Escape.h"

#include <gtest/gtest.h>

#include <bit>
#include <cstdint>

namespace {

using pto::isa::DType;
using pto::isa::print::formatError;
using pto::isa::print::formatted;

uint64_t f32Bits(float v) {
  return std::bit_cast<uint32_t>(v);
}

TEST(PrintFormat, FormatsOneScalarAsCDoes) {
  EXPECT_EQ(formatted("x = %.3f\n", DType::F32, f32Bits(1.25f)), "x = 1.250\n");
  EXPECT_EQ(formatted("%e", DType::F32, f32Bits(-0.5f)), "-5.000000e-01");
  EXPECT_EQ(formatted("[%8.2f]", DType::F32, f32Bits(3.14159f)), "[    3.14]");
  EXPECT_EQ(formatted("%g", DType::F16, 0x3C00), "1");       // f16 1.0
  EXPECT_EQ(formatted("%g", DType::BF16, 0xC040), "-3");     // bf16 -3.0
  EXPECT_EQ(formatted("%d", DType::I32, 0xFFFFFFFDu), "-3"); // i32 -3 as its 32 bits
  EXPECT_EQ(formatted("%#x", DType::I32, 0xFFFFFFFDu), "0xfffffffd");
  EXPECT_EQ(formatted("%u", DType::I8, 0xFF), "255");
  EXPECT_EQ(formatted("%d", DType::I8, 0xFF), "-1");
  EXPECT_EQ(formatted("%d", DType::U8, 0xFF), "255");
  EXPECT_EQ(formatted("%+05d|", DType::I64, 42), "+0042|");
  EXPECT_EQ(formatted("%-4d|", DType::I16, 7), "7   |");
  EXPECT_EQ(formatted("%lld", DType::I64, ~uint64_t{0}), "-1"); // the length is the type's
  EXPECT_EQ(formatted("%o", DType::U32, 8), "10");
  EXPECT_EQ(formatted("100%% done", DType::I32, 9), "100% done"); // no conversion: the text
  EXPECT_EQ(formatted("E00_enter_else", DType::I32, 9), "E00_enter_else");
  EXPECT_EQ(formatted("", DType::I32, 5), "5"); // an empty format: the value alone
  EXPECT_EQ(formatted("", DType::F32, f32Bits(0.5f)), "0.500000");
  // The widest a valid spec gets: the largest f32 (39 digits) at precision 64, not cut short.
  const std::string wide = formatted("%.64f", DType::F32, f32Bits(3.40282347e38f));
  EXPECT_EQ(wide.size(), 39u + 1 + 64);
  EXPECT_EQ(wide.substr(0, 12), "340282346638");
}

TEST(PrintFormat, RefusesWhatCannotPrintOneScalar) {
  EXPECT_FALSE(formatError("n = %d\n", DType::I32));
  EXPECT_FALSE(formatError("no value", DType::F32));
  EXPECT_TRUE(formatError("%d %d", DType::I32)); // two conversions
  EXPECT_TRUE(formatError("%s", DType::I32));    // a string
  EXPECT_TRUE(formatError("%n", DType::I32));    // a write
  EXPECT_TRUE(formatError("%d", DType::F32));    // an integer conversion of a float
  EXPECT_TRUE(formatError("%f", DType::I32));    // a float conversion of an integer
  EXPECT_TRUE(formatError("%100d", DType::I32)); // a width above 64
  EXPECT_TRUE(formatError("%.99f", DType::F32)); // a precision above 64
  EXPECT_TRUE(formatError("%", DType::I32));     // no letter
  EXPECT_TRUE(formatError(std::string(257, 'a'), DType::I32));
  EXPECT_TRUE(formatError(std::string("a\0b", 3), DType::I32));
}

TEST(PrintFormat, MlirStringsDecodeTheirEscapes) {
  EXPECT_EQ(pto::support::mlirStringValue("\"a\\nb\""), "a\nb");
  EXPECT_EQ(pto::support::mlirStringValue("\"q\\\"\\\\\\t\""), "q\"\\\t");
  EXPECT_EQ(pto::support::mlirStringValue("\"\\41\\0a\""), "A\n");
  EXPECT_FALSE(pto::support::mlirStringValue("\"bad\\q\""));
  EXPECT_FALSE(pto::support::mlirStringValue("\"end\\\""));
  EXPECT_FALSE(pto::support::mlirStringValue("noquotes"));
}

} // namespace
