// Pointer extents (obj/Extent.h, asm/codegen/RecordExtents.h, docs/object-format.md section 2.9):
// the expression language, the analysis on IR (expected values computed by hand from the view
// shapes and strides), and the .pto.extents table through objects and images.
#include "obj/Extent.h"
#include "asm/codegen/RecordExtents.h"
#include "asm/ir/Verifier.h"
#include "asm/parse/Parser.h"
#include "obj/Image.h"

#include <gtest/gtest.h>

#include <map>
#include <sstream>

using namespace pto;

namespace {

std::variant<int64_t, std::string> eval(const std::string& e,
                                        std::map<std::string, int64_t> vars = {}) {
  return obj::evalExtent(e, [&](const std::string& n) -> std::optional<int64_t> {
    auto it = vars.find(n);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  });
}

int64_t value(const std::variant<int64_t, std::string>& v) {
  if (auto* e = std::get_if<std::string>(&v)) ADD_FAILURE() << *e;
  return std::holds_alternative<int64_t>(v) ? std::get<int64_t>(v) : -1;
}

std::string error(const std::variant<int64_t, std::string>& v) {
  return std::holds_alternative<std::string>(v) ? std::get<std::string>(v) : "";
}

/// pointerUses of function `fn` of a module in text form.
std::vector<as::PointerUse> uses(const std::string& text) {
  as::SourceFile src("t.pto", text);
  std::ostringstream err;
  as::DiagEngine diags(src, err);
  auto m = as::parseModule(src, diags, std::nullopt);
  EXPECT_TRUE(m && !diags.failed()) << err.str();
  if (!m || m->functions.empty()) return {};
  return as::pointerUses(*m->functions[0]);
}

} // namespace

TEST(Extent, Expressions) {
  EXPECT_EQ(value(eval("8192")), 8192);
  EXPECT_EQ(value(eval("64*%n+1", {{"n", 3}})), 193);
  EXPECT_EQ(value(eval("64 * %n + 1", {{"n", 3}})), 193); // spaces are accepted
  EXPECT_EQ(value(eval("max(64*%n+1,4096)", {{"n", 3}})), 4096);
  EXPECT_EQ(value(eval("max(64*%n+1,4096)", {{"n", 100}})), 6401);
  EXPECT_EQ(value(eval("2*(%a+%b)-%a*%b", {{"a", 3}, {"b", 4}})), 2);
  EXPECT_EQ(value(eval("0-5")), -5);
  EXPECT_NE(error(eval("64*%m")).find("the value of %m is not known"), std::string::npos);
  EXPECT_NE(error(eval("64*")).find("unexpected end"), std::string::npos);
  EXPECT_NE(error(eval("max(1,2")).find("expected ')'"), std::string::npos);
  EXPECT_NE(error(eval("9223372036854775807+1")).find("overflow"), std::string::npos);
  EXPECT_NE(error(eval("4 4")).find("unexpected '4'"), std::string::npos);
  std::vector<std::string> names;
  EXPECT_FALSE(obj::checkExtent("max(%rows*%cols,%n+1)", &names));
  EXPECT_EQ(names, (std::vector<std::string>{"rows", "cols", "n"}));
  EXPECT_TRUE(obj::checkExtent(std::string(200, '(') + "1" +
                               std::string(200, ')'))); // too deep, not a crash
}

// 1 + sum (shape_i - 1) * stride_i per view, max over the views and scalar accesses.
TEST(Extent, FromViewsAndScalarAccesses) {
  auto u = uses(R"(module {
  func.func @k(%a: !pto.ptr<f32>, %b: !pto.ptr<f16>, %c: !pto.ptr<i32>, %d: !pto.ptr<f32>, %e: !pto.ptr<f32>, %n: index, %m: i32, %f: !pto.ptr<f32>) {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %c16 = arith.constant 16 : index
    %c64 = arith.constant 64 : index
    %va = pto.make_tensor_view %a, shape = [%c4, %c16], strides = [%c64, %c1] : !pto.tensor_view<?x?xf32>
    %va2 = pto.make_tensor_view %a, shape = [%c64], strides = [%c1] : !pto.tensor_view<?xf32>
    %vb = pto.make_tensor_view %b, shape = [%n, %c16], strides = [%c16, %c1] : !pto.tensor_view<?x?xf16>
    %mi = arith.index_cast %m : i32 to index
    %m2 = arith.muli %mi, %c4 : index
    %vd = pto.make_tensor_view %d, shape = [%m2], strides = [%c1] : !pto.tensor_view<?xf32>
    %ve = pto.make_tensor_view %e, shape = [%n], strides = [%c1] : !pto.tensor_view<?xf32>
    scf.for %i = %c1 to %c16 step %c1 {
      %x = pto.load_scalar %c[%i] : !pto.ptr<i32> -> i32
      %xi = arith.index_cast %x : i32 to index
      %y = pto.load_scalar %e[%xi] : !pto.ptr<f32> -> f32
      %z = pto.load_scalar %f[%xi] : !pto.ptr<f32> -> f32
    }
    return
  }
})");
  ASSERT_EQ(u.size(), 8u);
  EXPECT_EQ(u[0].extent, "208");   // max(1 + 3 * 64 + 15 * 1, 1 + 63 * 1)
  EXPECT_EQ(u[1].extent, "16*%n"); // 1 + (n - 1) * 16 + 15
  EXPECT_EQ(u[2].extent, "16");    // loads at %i < 16: index 15 at most
  EXPECT_TRUE(u[2].indexValues);   // its values become an index into %e
  EXPECT_EQ(u[3].extent, "4*%m");  // 1 + (4m - 1) * 1
  EXPECT_EQ(u[4].extent, "%n");    // an index loaded from memory stays in the declared view
  EXPECT_FALSE(u[4].indexValues);
  EXPECT_EQ(u[7].extent, ""); // ... and with no view the extent is unknown
  EXPECT_EQ(u[5].extent, ""); // %n: not a pointer
  EXPECT_FALSE(u[0].indexValues);
}

// Constants fold from the front end's typed value: "040" is forty (never octal), hex is exact.
TEST(Extent, ConstantsAreReadAsTheFrontEndReadThem) {
  auto u = uses(R"(module {
  func.func @k(%a: !pto.ptr<f32>, %b: !pto.ptr<f32>, %n: index) {
    %c40 = arith.constant 040 : index
    %x = pto.load_scalar %a[%c40] : !pto.ptr<f32> -> f32
    %h = arith.constant 0x7FFF : index
    %m = arith.constant -0x10 : index
    %i = arith.addi %h, %m : index
    %y = pto.load_scalar %b[%i] : !pto.ptr<f32> -> f32
    return
  }
})");
  ASSERT_EQ(u.size(), 3u);
  EXPECT_EQ(u[0].extent, "41");    // index 40
  EXPECT_EQ(u[1].extent, "32752"); // index 0x7FFF - 16
}

// The table goes through an object and an image unchanged, and the readers refuse a record that
// names a non-pointer, or an expression over a parameter that is not an integer scalar.
TEST(Extent, TableRoundTripAndValidation) {
  obj::ObjectFile o;
  o.text = {0x00, 0x00, 0x00, 0x00};
  obj::Function f;
  f.name = "k";
  f.flags = obj::kEntry;
  f.textSize = 0;
  f.params.push_back(
      {"x", obj::ParamKind::Pointer, isa::DType::F32, {}, "max(64*%n+1,4096)", false});
  f.params.push_back({"i", obj::ParamKind::Pointer, isa::DType::I32, {}, "16", true});
  f.params.push_back({"n", obj::ParamKind::Index, isa::DType::I64, {}, "", false});
  f.params.push_back({"alpha", obj::ParamKind::Scalar, isa::DType::F32, {}, "", false});
  o.functions.push_back(f);
  auto bytes = obj::writeObject(o);
  ASSERT_TRUE(std::holds_alternative<std::vector<uint8_t>>(bytes)) << std::get<std::string>(bytes);
  auto& b = std::get<std::vector<uint8_t>>(bytes);
  auto back = obj::readObject(b.data(), b.size());
  ASSERT_TRUE(std::holds_alternative<obj::ObjectFile>(back)) << std::get<std::string>(back);
  EXPECT_EQ(std::get<obj::ObjectFile>(back).functions[0].params, o.functions[0].params);

  obj::Image img;
  img.functions.push_back(f);
  img.entries.push_back({0, "k"});
  auto ib = obj::writeImage(img);
  ASSERT_TRUE(std::holds_alternative<std::vector<uint8_t>>(ib)) << std::get<std::string>(ib);
  auto& ibytes = std::get<std::vector<uint8_t>>(ib);
  auto iback = obj::readImage(ibytes.data(), ibytes.size());
  ASSERT_TRUE(std::holds_alternative<obj::Image>(iback)) << std::get<std::string>(iback);
  EXPECT_EQ(std::get<obj::Image>(iback).functions[0].params, f.params);

  auto refused = [&](obj::ObjectFile bad) {
    auto w = obj::writeObject(bad);
    if (!std::holds_alternative<std::vector<uint8_t>>(w)) return std::get<std::string>(w);
    auto& wb = std::get<std::vector<uint8_t>>(w);
    auto r = obj::readObject(wb.data(), wb.size());
    return std::holds_alternative<std::string>(r) ? std::get<std::string>(r) : std::string();
  };
  obj::ObjectFile bad = o;
  bad.functions[0].params[0].extent = "64*%alpha";
  EXPECT_NE(refused(bad).find("%alpha is not an integer scalar parameter of 'k'"),
            std::string::npos)
      << refused(bad);
  bad = o;
  bad.functions[0].params[0].extent = "64*";
  EXPECT_NE(refused(bad).find("unexpected end"), std::string::npos) << refused(bad);
  bad = o;
  bad.functions[0].params[2].extent = "4"; // on an index parameter
  EXPECT_NE(refused(bad).find("parameter 'n' of 'k' is not a pointer"), std::string::npos)
      << refused(bad);
  // Without extents the object has no .pto.extents section and reads back the same.
  obj::ObjectFile plain = o;
  for (auto& p : plain.functions[0].params) {
    p.extent.clear();
    p.indexValues = false;
  }
  auto pb = obj::writeObject(plain);
  auto& pbytes = std::get<std::vector<uint8_t>>(pb);
  EXPECT_EQ(std::string(pbytes.begin(), pbytes.end()).find(".pto.extents"), std::string::npos);
  EXPECT_LT(pbytes.size(), b.size());
}
