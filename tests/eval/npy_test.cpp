// .npy reading and writing (eval/npy.h): round trips of every element type, the header forms
// NumPy writes, and malformed files rejected with a message (nothing allocated from a claim).
#include "shapeflow/eval/npy.h"

#include <gtest/gtest.h>

namespace sf::eval {
namespace {

std::string header(const std::string &dict, size_t dataBytes, char fill = 0) {
  std::string h = dict;
  size_t total = 10 + h.size() + 1;
  h += std::string((64 - total % 64) % 64, ' ') + "\n";
  std::string out = "\x93NUMPY";
  out += char(1);
  out += char(0);
  out += char(h.size() & 0xff);
  out += char(h.size() >> 8);
  return out + h + std::string(dataBytes, fill);
}

TEST(Npy, RoundTripsEveryType) {
  for (ElementType t : {ElementType::F32, ElementType::F64, ElementType::F16, ElementType::I64,
                        ElementType::I32, ElementType::I16, ElementType::I8, ElementType::U8,
                        ElementType::U16, ElementType::U32, ElementType::U64, ElementType::Bool}) {
    auto a = Tensor::fromDoubles(t, {2, 3}, {0, 1, 0, 1, 1, 0});
    ASSERT_TRUE(a.ok()) << shortName(t);
    auto bytes = npyBytes(*a);
    ASSERT_TRUE(bytes.ok()) << bytes.error().message;
    EXPECT_EQ(bytes->size() % 64, size_t(6 * elementSize(t)) % 64 == 0 ? 0u : bytes->size() % 64);
    auto b = parseNpy(*bytes);
    ASSERT_TRUE(b.ok()) << b.error().message;
    EXPECT_EQ(*a, *b) << shortName(t);
  }
}

TEST(Npy, ScalarsAndEmptyAndOneDim) {
  for (Shape s : {Shape{}, Shape{0}, Shape{5}, Shape{2, 0, 3}}) {
    std::vector<double> v(size_t(s.empty() ? 1 : s[0] * (s.size() > 1 ? s[1] * s[2] : 1)), 2.5);
    auto a = Tensor::fromDoubles(ElementType::F32, s, v);
    ASSERT_TRUE(a.ok());
    auto b = parseNpy(*npyBytes(*a));
    ASSERT_TRUE(b.ok()) << b.error().message;
    EXPECT_EQ(b->shape(), s);
    EXPECT_EQ(*a, *b);
  }
}

TEST(Npy, ReadsNumpysOwnHeader) {
  // As numpy.save writes it: a space after each colon and comma, a trailing comma for 1-D.
  auto t = parseNpy(header("{'descr': '<i8', 'fortran_order': False, 'shape': (3,), }", 24));
  ASSERT_TRUE(t.ok()) << t.error().message;
  EXPECT_EQ(t->type(), ElementType::I64);
  EXPECT_EQ(t->shape(), Shape{3});
}

TEST(Npy, RejectsMalformedFiles) {
  struct Case {
    std::string bytes, message;
  } cases[] = {
      {"not numpy at all", "magic"},
      {header("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", 8), "little-endian"},
      {header("{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", 8), "Fortran"},
      {header("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", 7), "needs 8 bytes, the file has 7"},
      {header("{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 4), }", 8), "2^63"},
      {header("{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000000,), }", 8), "the file has 8"},
      {header("{'descr': '<U4', 'fortran_order': False, 'shape': (2,), }", 8), "not one ONNX uses"},
      {header("{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }", 2, 7), "not 0 or 1"},
      {header("{'descr': '<f4', 'fortran_order': False, }", 8), "no 'shape'"},
      {std::string("\x93NUMPY\x01\x00\xff\xff", 10), "past the end"},
  };
  for (const Case &c : cases) {
    auto t = parseNpy(c.bytes, "x.npy");
    ASSERT_FALSE(t.ok()) << c.message;
    EXPECT_NE(t.error().message.find(c.message), std::string::npos) << t.error().message;
    EXPECT_EQ(t.error().message.rfind("x.npy: ", 0), 0u) << t.error().message;
  }
}

} // namespace
} // namespace sf::eval
