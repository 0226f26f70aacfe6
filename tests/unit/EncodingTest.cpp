// Conformance and property tests of the PTO ISA 0.58.3 command-word layer (isa/Encoding.*).
// The catalog tests read ../shared/spec/pto-spec-0.58.3 (PTO_SHARED_DIR) and skip without it.
#include "isa/Encoding.h"

#include "TestSupport.h"
#include "support/Text.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <bit>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>

using namespace pto::isa;
using namespace pto::isa::enc;

namespace {

std::optional<nlohmann::json> loadSpec(const char* file) {
#ifdef PTO_SHARED_DIR
  std::filesystem::path p = std::filesystem::path(PTO_SHARED_DIR) / "spec/pto-spec-0.58.3" / file;
  std::ifstream in(p);
  if (!in) return std::nullopt;
  return nlohmann::json::parse(in);
#else
  (void)file;
  return std::nullopt;
#endif
}

using pto::support::hex0x;
std::string hex(uint64_t v) {
  return hex0x(v);
}

/// text -> fields -> word, and word -> fields -> the same text.
void expectWorked(std::string_view text, uint32_t word) {
  SCOPED_TRACE(std::string(text));
  auto p = parse(text);
  ASSERT_TRUE(p) << p.error().message;
  auto e = encode(*p);
  ASSERT_TRUE(e) << e.error().message;
  EXPECT_EQ(e->word32(), word) << hex(e->word32()) << " != " << hex(word);
  auto d = decode32(word);
  ASSERT_TRUE(d) << d.error().message;
  EXPECT_EQ(format(*d), text);
}

constexpr unsigned kConcrete[] = {0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12,
                                  13, 14, 16, 17, 18, 19, 20, 24, 25, 26, 27, 28};

} // namespace

// ---------------------------------------------------------------- reference 1.5
TEST(Encoding, WorkedEncodingsOfReference15) {
  expectWorked("BSTART.VEC TADD, FP32", 0x08019181);
  expectWorked("B.DIM zero, 16, ->LB0", 0x01000043);
  expectWorked("B.IOT T#1, T#2, mask=1111, last, ->T<1>", 0x0408CE13);
  expectWorked("BSTOP", 0x00000001);

  expectWorked("BSTART.SFU TDEQUANT, S8", 0x9EB19181);
  expectWorked("B.DATR {NORM, FP32, Zero, EQ, RNE, 0, 0}", 0x00109023);
  expectWorked("B.IOT T#2, mask=1111, last, ->T<1>", 0x0018DE13);

  expectWorked("BSTART.TLOAD U8", 0xD8011181);
  expectWorked("B.DIM zero, 64, ->LB0", 0x04000043);
  expectWorked("B.DIM zero, 8, ->LB1", 0x00801043);
  expectWorked("B.DIM zero, 64, ->LB2", 0x04002043);
  expectWorked("B.IOR zero, a0, zero, ->zero", 0x00200013);
  expectWorked("B.IOT mask=1111, last, ->T<1>", 0x0008EE13);
}

TEST(Encoding, WorkedEncodingsThroughBuilders) {
  EXPECT_EQ(encode(tileStart(TileOp::TADD, *dataTypeCode(DType::F32)))->word32(), 0x08019181u);
  EXPECT_EQ(encode(bDim(0, 0, 16))->word32(), 0x01000043u);
  EXPECT_EQ(encode(bIotDst(0, 1, 0, 1, true))->word32(), 0x0408CE13u);
  EXPECT_EQ(encode(bstop())->word32(), 0x00000001u);
  Datr d;
  d.dataType = 1;
  d.rmode = rmodeCode(RoundMode::CAST_RINT);
  EXPECT_EQ(encode(bDatr(d))->word32(), 0x00109023u);
  EXPECT_EQ(encode(bIor(0, *parseGpr("a0"), 0, 0))->word32(), 0x00200013u);
  EXPECT_EQ(encode(bIotDst(std::nullopt, std::nullopt, 0, 1, true))->word32(), 0x0008EE13u);
}

// ---------------------------------------------------------------- tables
TEST(Encoding, FormTableIsConsistent) {
  for (const FormInfo& f : allForms()) {
    SCOPED_TRACE(std::string(f.idName));
    EXPECT_EQ(f.match & ~f.mask, 0u);
    EXPECT_LE(f.fields.size(), kMaxFields);
    uint64_t fieldBits = 0;
    for (const FieldInfo& fi : f.fields)
      for (const Piece& p : fi.pieces) {
        uint64_t m = ((uint64_t(1) << p.width) - 1) << p.instrLsb;
        EXPECT_EQ(m & f.mask, 0u) << fi.name << " overlaps fixed bits";
        EXPECT_EQ(m & fieldBits, 0u) << fi.name << " overlaps another field";
        fieldBits |= m;
      }
  }
  // Equal-priority forms of one length never overlap, so the decode order is unambiguous.
  auto forms = allForms();
  for (size_t i = 0; i < forms.size(); ++i)
    for (size_t j = i + 1; j < forms.size(); ++j) {
      const FormInfo &a = forms[i], &b = forms[j];
      if (a.bits != b.bits || std::popcount(a.mask) != std::popcount(b.mask)) continue;
      uint64_t common = a.mask & b.mask;
      EXPECT_NE(a.match & common, b.match & common)
          << a.idName << " and " << b.idName << " overlap";
    }
}

TEST(Encoding, CodeTables) {
  EXPECT_EQ(dataTypeCode(DType::F64), 0u);
  EXPECT_EQ(dataTypeCode(DType::F32), 1u);
  EXPECT_EQ(dataTypeCode(DType::F16), 4u);
  EXPECT_EQ(dataTypeCode(DType::BF16), 5u);
  EXPECT_EQ(dataTypeCode(DType::I8), 19u);
  EXPECT_EQ(dataTypeCode(DType::I4), 20u);
  EXPECT_EQ(dataTypeCode(DType::U64), 24u);
  EXPECT_EQ(dataTypeCode(DType::U8), 27u);
  EXPECT_FALSE(dataTypeCode(DType::I1).has_value());
  EXPECT_EQ(parseDataType("f32"), 1u);
  EXPECT_EQ(parseDataType("DTYPE_NONE"), kDataTypeNone);
  EXPECT_FALSE(isConcreteDataType(15));
  EXPECT_FALSE(isConcreteDataType(31));
  // CAST_* -> RMode (reference 3.3): never the public ordinal.
  EXPECT_EQ(rmodeCode(RoundMode::CAST_NONE), 0u);
  EXPECT_EQ(rmodeCode(RoundMode::CAST_RINT), 1u);
  EXPECT_EQ(rmodeCode(RoundMode::CAST_ROUND), 5u);
  EXPECT_EQ(rmodeCode(RoundMode::CAST_FLOOR), 3u);
  EXPECT_EQ(rmodeCode(RoundMode::CAST_CEIL), 4u);
  EXPECT_EQ(rmodeCode(RoundMode::CAST_TRUNC), 2u);
  EXPECT_EQ(rmodeCode(RoundMode::CAST_ODD), 6u);
  EXPECT_EQ(cmodeCode(CmpMode::GT), 3u);
  EXPECT_EQ(cmodeCode(CmpMode::LE), 4u);
  EXPECT_EQ(padCode(PadValue::Null), 3u);
  EXPECT_EQ(gprName(0), "zero");
  EXPECT_EQ(gprName(1), "sp");
  EXPECT_EQ(gprName(2), "a0");
  EXPECT_EQ(gprName(10), "ra");
  EXPECT_EQ(gprName(23), "x3");
  EXPECT_EQ(parseGpr("R10"), 10u);
  EXPECT_FALSE(parseGpr("R24").has_value());
  for (unsigned m = 0; m < 8; ++m)
    EXPECT_EQ(peModeOfMask(maskOfPeMode(m)), m);
  EXPECT_FALSE(peModeOfMask(0x3).has_value()); // mask=0011 is not encodable (ADR-0096)
}

// Every op of our table has an encoding: OpRecord.EveryOpHasEveryLayer (OpRecordTest.cpp) walks
// the table for every layer at once; these pin the family of a few.
TEST(Encoding, OurOpsEncodingFamilies) {
  EXPECT_EQ(tileOpFor(OpId::TAXPY)->family, TileFamily::EXT);
  EXPECT_EQ(tileOpFor(OpId::TDEQUANT)->family, TileFamily::TEPL); // seed 000: four tile bindings
  EXPECT_EQ(tileOpFor(OpId::TADD)->family, TileFamily::TEPL);
  EXPECT_EQ(tileOpFor(OpId::TMATMUL_ACC)->startForm, FormId::BSTART_TMATMUL_ACC);
}

// ---------------------------------------------------------------- catalog conformance
TEST(EncodingConformance, EveryCatalogTileOpAndDataType) {
  auto j = loadSpec("tile-operations.json");
  PTO_REQUIRE_SHARED(j);
  const auto& ops = (*j)["operations"];
  ASSERT_EQ(ops.size(), 109u);
  std::set<unsigned> teplSelectors;
  unsigned checked = 0;
  for (const auto& o : ops) {
    std::string name = o["name"];
    std::string family = o["family"];
    std::string engine = o["engine"];
    SCOPED_TRACE(name);
    const TileOpInfo* t = findTileOp(name);
    ASSERT_NE(t, nullptr);
    unsigned function = o["function"];
    unsigned mode = family == "TEPL" ? o["mode"].get<unsigned>() : 0;
    EXPECT_EQ(t->function, function);
    if (family == "TEPL") {
      EXPECT_EQ(t->family, TileFamily::TEPL);
      EXPECT_EQ(t->mode, mode);
      EXPECT_EQ(t->engine, engine == "VEC" ? TileEngine::VEC : TileEngine::SFU);
      EXPECT_EQ(t->selector(), std::stoul(o["selector"].get<std::string>(), nullptr, 16));
      teplSelectors.insert(t->selector());
    } else {
      EXPECT_EQ(t->family, family == "TLSU" ? TileFamily::TLSU : TileFamily::CUBE);
      std::string cm = o["command_mnemonic"];
      EXPECT_EQ(info(t->startForm).mnemonic(), cm);
    }
    std::vector<unsigned> dts(std::begin(kConcrete), std::end(kConcrete));
    if (name == "TMOV") dts.push_back(kDataTypeNone);
    for (unsigned dt : dts) {
      // The catalog formula (reference 2.2).
      uint32_t formula = family == "TEPL"   ? (dt << 27 | mode << 25 | function << 20 | 0x00019181u)
                         : family == "TLSU" ? (dt << 27 | function << 20 | 0x00011181u)
                                            : (dt << 27 | function << 20 | 0x00031181u);
      auto e = encode(tileStart(t->op, dt));
      ASSERT_TRUE(e) << e.error().message;
      EXPECT_EQ(e->word32(), formula) << "dt " << dt;
      EXPECT_EQ(catalogStartWord(t->op, dt), formula);
      auto d = decode32(formula);
      ASSERT_TRUE(d) << d.error().message;
      EXPECT_EQ(tileOpOf(*d), t->op);
      EXPECT_EQ(dataTypeOf(*d), dt);
      std::string text = format(*d);
      std::string start = family == "TEPL"
                              ? (engine == "VEC" ? "BSTART.VEC " : "BSTART.SFU ") + name + ", "
                              : std::string(o["command_mnemonic"]) + " ";
      EXPECT_EQ(text.rfind(start, 0), 0u) << text;
      auto p = parse(text);
      ASSERT_TRUE(p) << p.error().message;
      EXPECT_EQ(encode(*p)->word32(), formula);
      ++checked;
    }
    // Reserved DataType codes are rejected on the start word.
    for (unsigned dt : {15u, 21u, 22u, 23u, 29u, 30u}) {
      uint32_t w = catalogStartWord(t->op, dt);
      EXPECT_FALSE(decode32(w)) << hex(w);
      EXPECT_FALSE(encode(tileStart(t->op, dt)));
    }
    if (name != "TMOV") {
      EXPECT_FALSE(decode32(catalogStartWord(t->op, kDataTypeNone)));
    }
  }
  EXPECT_EQ(checked, 109u * 25u + 1u);
  // Every TEPL selector the catalog does not assign is a hole: rejected, never encoded.
  for (unsigned sel = 0; sel < 128; ++sel) {
    if (teplSelectors.count(sel)) continue;
    uint32_t w = 1u << 27 | sel << 20 | 0x00019181u;
    EXPECT_FALSE(decode32(w)) << hex(w);
    EXPECT_FALSE(decode32(w, {.extensions = true})) << hex(w);
    auto p = parse("BSTART.TEPL " + std::to_string(sel >> 5) + ", " + std::to_string(sel & 31) +
                   ", FP32");
    ASSERT_TRUE(p);
    EXPECT_FALSE(encode(*p));
  }
  EXPECT_EQ(teplSelectors.size(), 87u);
}

TEST(EncodingConformance, SpecVectors) {
  auto j = loadSpec("encoding-vectors.json");
  PTO_REQUIRE_SHARED(j);
  unsigned accepted = 0, rejected = 0, scalar = 0;
  for (const auto& v : (*j)["vectors"]) {
    std::string origin = v["origin"];
    if (origin != "avs-test" && origin != "release-evidence") continue;
    uint64_t word = std::stoull(v["hex"].get<std::string>(), nullptr, 16);
    unsigned bits = v["bits"];
    std::string asmText = v["asm"];
    bool legal = v["catalog_legal_encoding"];
    SCOPED_TRACE(v["hex"].get<std::string>() + " " + asmText);
    auto d = decode(word, bits);
    auto dx = decode(word, bits, {.extensions = true});
    if (asmText.rfind("[scalar form ", 0) == 0) {
      // e.g. "[scalar form addi_32_...] addi RegDst=0, ...": a scalar word the AVS executes.
      std::string mn = asmText.substr(asmText.find(']') + 2);
      mn = mn.substr(0, mn.find(' '));
      ASSERT_TRUE(d) << d.error().message;
      EXPECT_EQ(info(d->form).mnemonic(), mn);
      ++scalar;
      continue;
    }
    if (legal) {
      ASSERT_TRUE(d) << d.error().message;
      EXPECT_EQ(format(*d), asmText);
      auto e = encode(*d);
      ASSERT_TRUE(e) << e.error().message;
      // Bits that are neither fixed nor in a field (bits 8:7 of the source-only B.IOT forms)
      // are don't-care: the encoder writes 0 there, everything else is reproduced exactly.
      uint64_t covered = info(d->form).mask;
      for (const FieldInfo& fi : info(d->form).fields)
        for (const Piece& pc : fi.pieces)
          covered |= ((uint64_t(1) << pc.width) - 1) << pc.instrLsb;
      EXPECT_EQ(e->value, word & covered);
      auto p = parse(asmText);
      ASSERT_TRUE(p) << p.error().message;
      EXPECT_EQ(*p, *d);
      // Extensions never change the meaning of an accepted word.
      ASSERT_TRUE(dx);
      EXPECT_EQ(*dx, *d);
      ++accepted;
    } else {
      EXPECT_FALSE(d) << "accepted as " << format(*d);
      EXPECT_FALSE(dx) << "accepted with extensions as " << format(*dx);
      ++rejected;
    }
  }
  EXPECT_EQ(accepted + rejected + scalar, 369u);
  std::printf("spec vectors: %u accepted, %u rejected, %u scalar\n", accepted, rejected, scalar);
}

TEST(EncodingConformance, ReservationsAreNeverProduced) {
  auto j = loadSpec("extension-encoding-reservations.json");
  PTO_REQUIRE_SHARED(j);
  // The extension space (tile-family sub-family 7) is disjoint from every reservation.
  for (const auto& r : (*j)["reservations"]) {
    const auto& enc = r["encoding"];
    if (enc.size() != 1 || r["length_bits"] != 32) continue;
    uint64_t m = std::stoull(enc[0]["match"].get<std::string>(), nullptr, 16);
    uint64_t k = std::stoull(enc[0]["mask"].get<std::string>(), nullptr, 16);
    for (FormId f : {FormId::BSTART_EXT, FormId::BSTART_EXTC}) {
      uint64_t common = k & info(f).mask;
      EXPECT_NE(m & common, info(f).match & common)
          << r["mnemonic"] << " overlaps " << info(f).idName;
    }
  }
}

// ---------------------------------------------------------------- extension space
TEST(EncodingExtension, WordsAreRejectedByStrictDecoder) {
  unsigned n = 0;
  for (const TileOpInfo& t : allTileOps()) {
    if (t.family != TileFamily::EXT) continue;
    for (unsigned dt : kConcrete) {
      auto e = encode(tileStart(t.op, dt));
      ASSERT_TRUE(e) << e.error().message;
      EXPECT_EQ(e->word32(), dt << 27 | t.function << 20 | 0x00039181u);
      EXPECT_FALSE(decode32(e->word32())) << hex(e->word32());
      auto d = decode32(e->word32(), {.extensions = true});
      ASSERT_TRUE(d) << d.error().message;
      EXPECT_EQ(tileOpOf(*d), t.op);
      EXPECT_EQ(dataTypeOf(*d), dt);
      ++n;
    }
  }
  for (unsigned c = 1; c < 8; ++c)
    for (unsigned a = 0; a < 8; ++a)
      for (unsigned b = 0; b < 8; ++b) {
        Inst in = extControl(static_cast<ExtCtl>(c));
        in.put("PipeA", a);
        in.put("PipeB", b);
        auto e = encode(in);
        if (!e) continue; // unused pipe fields must be zero
        EXPECT_FALSE(decode32(e->word32()));
        auto d = decode32(e->word32(), {.extensions = true});
        ASSERT_TRUE(d);
        EXPECT_EQ(*d, in);
        ++n;
      }
  // The former BSTART.FIXP witnesses stay rejected even with extensions enabled.
  EXPECT_FALSE(decode32(0x00039181u, {.extensions = true}));
  EXPECT_FALSE(decode32(0xC0039181u, {.extensions = true}));
  EXPECT_GT(n, 19u * 25u);
}

TEST(EncodingExtension, ControlBlocks) {
  DecodeOptions x{.extensions = true};
  auto p = parse("BSTART.EXT SET_FLAG, PIPE_MTE2, PIPE_V", x);
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(*p, extControl(ExtCtl::SET_FLAG, Pipe::MTE2, Pipe::V));
  EXPECT_EQ(format(*p), "BSTART.EXT SET_FLAG, PIPE_MTE2, PIPE_V");
  EXPECT_FALSE(parse("BSTART.EXT SET_FLAG, PIPE_MTE2, PIPE_V")); // extensions off
  EXPECT_EQ(format(extControl(ExtCtl::PIPE_BARRIER, Pipe::All)),
            "BSTART.EXT PIPE_BARRIER, PIPE_ALL");
  EXPECT_EQ(format(extControl(ExtCtl::GET_BLOCK_IDX)), "BSTART.EXT GET_BLOCK_IDX");
  EXPECT_EQ(format(tileStart(TileOp::TAXPY, 1)), "BSTART.EXT TAXPY, FP32");
  EXPECT_EQ(encode(tileStart(TileOp::TAXPY, 1))->word32(), 0x08139181u);
  EXPECT_NE(isaNoteDescriptor(true), isaNoteDescriptor(false));
  EXPECT_EQ(isaNoteDescriptor(false),
            "{\"encoding_abi\":\"pto-isa-0.58.3-mode-function-v1\",\"encoding_projection_sha256\":"
            "\"8a48b80e04484c70870f155bf9efc79d2a805cf99e809f4e4e8a7e6a7eb34172\",\"release\":\"0."
            "58.3\"}");
}

// ---------------------------------------------------------------- properties
namespace {
/// Representative values of one field: domain edges, small values and a few patterns.
std::vector<int64_t> sampleValues(const FieldInfo& f) {
  std::set<int64_t> s;
  int64_t lo = f.isSigned ? -(int64_t(1) << (f.width - 1)) : 0;
  int64_t hi = f.isSigned ? (int64_t(1) << (f.width - 1)) - 1
                          : (f.width >= 63 ? INT64_MAX : (int64_t(1) << f.width) - 1);
  if (f.width <= 6) {
    for (int64_t v = lo; v <= hi; ++v)
      s.insert(v);
  } else {
    for (int64_t v : {lo, lo + 1, int64_t(-1), int64_t(0), int64_t(1), int64_t(2), int64_t(3),
                      int64_t(16), hi - 1, hi, hi / 3, lo / 3})
      if (v >= lo && v <= hi) s.insert(v);
  }
  std::vector<int64_t> out;
  for (int64_t v : s) {
    uint64_t u =
        static_cast<uint64_t>(v) & (f.width >= 64 ? ~uint64_t(0) : (uint64_t(1) << f.width) - 1);
    if ((u & ~f.valueMask) == 0 && f.domain.contains(v)) out.push_back(v);
  }
  return out;
}

/// A legal base instruction of a form (smallest legal value per field; tile starts get a real op).
Inst baseInst(const FormInfo& f) {
  Inst in;
  in.form = f.id;
  for (size_t i = 0; i < f.fields.size(); ++i) {
    auto vals = sampleValues(f.fields[i]);
    in.field[i] = vals.empty()
                      ? 0
                      : (std::find(vals.begin(), vals.end(), 0) != vals.end() ? 0 : vals.front());
  }
  if (f.id == FormId::BSTART_EXT) in.put("XOP", 1);
  if (f.id == FormId::BSTART_EXTC) in.put("CTL", 1);
  return in;
}

void roundTrip(const Inst& in, unsigned& n) {
  auto e = encode(in);
  if (!e) return; // only encodable values are properties
  SCOPED_TRACE(format(in) + " " + hex(e->value));
  auto d = decode(e->value, e->bits, {.extensions = true});
  ASSERT_TRUE(d) << d.error().message;
  EXPECT_EQ(*d, in);
  auto e2 = encode(*d);
  ASSERT_TRUE(e2);
  EXPECT_EQ(*e2, *e);
  std::string text = format(*d);
  auto p = parse(text, {.extensions = true});
  ASSERT_TRUE(p) << p.error().message;
  EXPECT_EQ(*p, in);
  EXPECT_EQ(format(*p), text);
  ++n;
}
} // namespace

TEST(EncodingProperty, EncodeDecodeEncodeAndTextOverAllForms) {
  unsigned total = 0;
  for (const FormInfo& f : allForms()) {
    if (f.status != FormStatus::Accepted) continue;
    SCOPED_TRACE(std::string(f.idName));
    unsigned n = 0;
    Inst base = baseInst(f);
    if (f.id == FormId::BSTART_TEPL) {
      for (const TileOpInfo& t : allTileOps())
        if (t.family == TileFamily::TEPL)
          for (unsigned dt : kConcrete)
            roundTrip(tileStart(t.op, dt), n);
    } else {
      roundTrip(base, n);
      for (size_t i = 0; i < f.fields.size(); ++i)
        for (int64_t v : sampleValues(f.fields[i])) {
          Inst in = base;
          in.field[i] = v;
          if (f.id == FormId::B_HINT && in.get("V") == 0 && in.get("LUL") == 1) {
            EXPECT_FALSE(encode(in)) << "BR.none has no likely/unlikely bit";
            continue;
          }
          roundTrip(in, n);
        }
    }
    EXPECT_GT(n, 0u) << "no encodable instance";
    total += n;
  }
  std::printf("round-tripped %u instances\n", total);
}

// Random words of every length: whatever the decoder accepts as canonical (it re-encodes to the
// same bits) must print as text that parses back to those bits. A listing built on a word that
// fails this loses bits on reassembly (a fuzz-object finding: B.HINT with LUL but not V).
TEST(EncodingProperty, AcceptedRandomWordsRoundTripThroughText) {
  std::mt19937_64 rng(20261201);
  unsigned accepted = 0, tried = 0;
  for (unsigned bits : {16u, 32u, 48u, 64u}) {
    // Half fully random, half steered onto a form's fixed bits so that every form is reached.
    std::vector<const FormInfo*> forms;
    for (const FormInfo& f : allForms())
      if (f.bits == bits && f.status == FormStatus::Accepted) forms.push_back(&f);
    for (unsigned i = 0; i < 200000; ++i, ++tried) {
      uint64_t value = rng();
      if (bits < 64) value &= (uint64_t(1) << bits) - 1;
      if ((i & 1) && !forms.empty()) {
        const FormInfo& f = *forms[rng() % forms.size()];
        value = (value & ~f.mask) | f.match;
      }
      auto d = decode(value, bits, {.extensions = true});
      if (!d) continue;
      auto e = encode(*d);
      if (!e || e->value != value) continue; // listed as data, not as text
      ++accepted;
      std::string text = format(*d);
      auto p = parse(text, {.extensions = true});
      ASSERT_TRUE(p) << hex(value) << " '" << text << "': " << p.error().message;
      auto e2 = encode(*p);
      ASSERT_TRUE(e2) << text;
      ASSERT_EQ(e2->value, value) << "'" << text << "' loses bits of " << hex(value);
    }
  }
  std::printf("%u random words, %u accepted and round-tripped through text\n", tried, accepted);
  EXPECT_GT(accepted, 100000u);
}

TEST(EncodingProperty, LengthDecodeFromBytes) {
  for (const FormInfo& f : allForms()) {
    if (f.status != FormStatus::Accepted) continue;
    Inst in = baseInst(f);
    if (f.id == FormId::BSTART_TEPL) in = tileStart(TileOp::TADD, 1);
    auto e = encode(in);
    if (!e) continue;
    std::vector<uint8_t> bytes;
    for (unsigned i = 0; i < e->bits / 8; ++i)
      bytes.push_back(static_cast<uint8_t>(e->value >> (8 * i)));
    bytes.push_back(0); // trailing bytes must not matter
    bytes.push_back(0);
    size_t used = 0;
    auto d = decodeBytes(bytes, used, {.extensions = true});
    ASSERT_TRUE(d) << f.idName << ": " << d.error().message;
    EXPECT_EQ(used, e->bits / 8) << f.idName;
    EXPECT_EQ(*d, in) << f.idName;
  }
}

// ---------------------------------------------------------------- text
TEST(EncodingText, CanonicalRoundTripAndAliases) {
  for (const char* t : {"BSTART.VEC TADD, FP32",
                        "BSTART.SFU TEXP, FP16",
                        "BSTART.TMATMUL.ACC FP16",
                        "BSTART.TMOV DTYPE_NONE",
                        "BSTART.TMOV U8 [TMOV.L2S.INSERT form]",
                        "BSTART DIRECT, pc-64",
                        "BSTART COND, pc+8",
                        "BSTART.STD FALL",
                        "B.DATR {ND2M16, DTYPE_NONE, Null, EQ, Default, 0, 0}",
                        "B.DATR {NORM, U64, Min, GE, RHB, 1, 1}",
                        "B.DIM a0, 16, ->LB0",
                        "B.IOR a0, a1, zero, ->zero",
                        "B.IOT T#1, mask=1111, last",
                        "B.IOT U#3, M#16, mask=1100",
                        "B.IOT mask=0001, last, ->N<10>",
                        "B.IOS S7, mask=1111",
                        "B.IOS mask=1111, ->S255<12>",
                        "B.CATR {aq, rl}",
                        "B.CATR {}",
                        "B.HINT {BR.likely, TEMP.hot, 64}",
                        "B.HINT TRACE.end",
                        "C.B.DIMI 255, ->LB2",
                        "C.BSTOP",
                        "L.BSTOP",
                        "B.FPATR 0, 0, 0, 0, 0, 0, 0, 1, 1",
                        "add a0, a1.sw<<3, ->a2",
                        "addi zero, 4095, ->s0",
                        "cmp.lt a0, a1, ->t#1",
                        "setc.eqi a0, -1",
                        "lui 1048575, ->a0",
                        "ld [a0, a1<<3], ->a2",
                        "sd a2, [sp, a1]",
                        "ldi [sp, -8], ->ra",
                        "sdi ra, [sp, 2040]",
                        "hl.lis -2147483648, ->a0",
                        "hl.liu 4294967295, ->a0",
                        "hl.lui 305419896, ->a1",
                        "hl.addi a0, 16777215, ->a0",
                        "hl.ldi [a0, -2097152], ->a1",
                        "and a0, a1.not, ->a2"}) {
    SCOPED_TRACE(t);
    auto p = parse(t);
    ASSERT_TRUE(p) << p.error().message;
    EXPECT_EQ(format(*p), t);
    auto e = encode(*p);
    ASSERT_TRUE(e) << e.error().message;
    auto d = decode(e->value, e->bits);
    ASSERT_TRUE(d) << d.error().message;
    EXPECT_EQ(format(*d), t);
  }
  // Accepted input spellings that print canonically.
  std::pair<const char*, const char*> aliases[] = {
      {"BSTART.TEPL 0, 0, FP32", "BSTART.VEC TADD, FP32"},
      {"BSTART.TEPL 3, 11, S8", "BSTART.SFU TDEQUANT, S8"},
      {"bstart.vec tadd, f32", "BSTART.VEC TADD, FP32"},
      {"B.IOR R2, R0, R0, ->R0", "B.IOR a0, zero, zero, ->zero"},
      {"B.DATR {NORM, FP32, Zero, None, RDN, 0, 0}", "B.DATR {NORM, FP32, Zero, EQ, RTM, 0, 0}"},
      {"B.CATR {aqrl}", "B.CATR {aq, rl}"},
      {"  B.IOT   T#1 , T#2 , mask=1111 , last , ->T<1>  ",
       "B.IOT T#1, T#2, mask=1111, last, ->T<1>"},
  };
  for (auto [in, out] : aliases) {
    auto p = parse(in);
    ASSERT_TRUE(p) << in << ": " << p.error().message;
    EXPECT_EQ(format(*p), out);
  }
  // Rejected text.
  for (const char* bad :
       {"BSTART.VEC TEXP, FP32", "BSTART.SFU TADD, FP32", "BSTART.VEC TAXPY, FP32",
        "B.IOT T#1, mask=0011, last", "B.IOT T#17, mask=1111", "B.DIM q0, 1, ->LB0",
        "BSTART DIRECT, pc+3", "B.DATR {NORM, FP32, Zero, EQ, RNE, 0}", "TADD T#1, T#2"}) {
    auto p = parse(bad);
    EXPECT_FALSE(p && encode(*p)) << bad;
  }
  // Values out of range are errors, not aborts.
  EXPECT_FALSE(encode(bDim(0, 24, 0)));
  EXPECT_FALSE(encode(bDim(0, 0, 1u << 17)));
  EXPECT_FALSE(encode(bIotDst(0, std::nullopt, 0, 11, true)));
  EXPECT_FALSE(encode(bstartDirect(int64_t(1) << 30)));
  EXPECT_FALSE(decode(0, 24));
}

TEST(EncodingScalar, Materialize64) {
  for (uint64_t v :
       {uint64_t(0), uint64_t(4095), uint64_t(4096), uint64_t(0x7fffffff), uint64_t(-1),
        uint64_t(0xffffffff), uint64_t(0x123456789abcdef0), uint64_t(0x100000000)}) {
    auto seq = materialize64(2, v, 3);
    ASSERT_FALSE(seq.empty());
    for (const Inst& in : seq) {
      auto e = encode(in);
      EXPECT_TRUE(e) << hex(v) << ": " << e.error().message;
    }
  }
  EXPECT_EQ(materialize64(2, 0x123456789abcdef0, 3).size(), 3u);
  EXPECT_EQ(format(materialize64(2, 5, 3)[0]), "addi zero, 5, ->a0");
}
