// Tests of the matrix product rules (src/ops/matmul.cpp): MatMul in every case
// (matrix, batched with broadcast batch dims, vector-vector, matrix-vector, vector-matrix),
// MatMulInteger, QLinearMatMul, Gemm (transA/transB, unidirectional C), Einsum (explicit and
// implicit output, ellipsis, diagonals); plus ONNX's backend node tests for these ops.
#include "op_test_util.h"

namespace sf::test {
namespace {

std::string matmul(const char *a, const char *b) {
  OpTester t("MatMul", 13);
  t.input(a).input(b);
  return t.run();
}

TEST(MatmulMatMul, EveryShapeRuleCase) {
  EXPECT_EQ(matmul("f32[3,4]", "f32[4,5]"), "f32[3,5]");           // (M,K) x (K,N)
  EXPECT_EQ(matmul("f32[2,7,3,4]", "f32[2,7,4,5]"), "f32[2,7,3,5]"); // batched
  EXPECT_EQ(matmul("f32[4]", "f32[4]"), "f32[]");                   // vector-vector
  EXPECT_EQ(matmul("f32[3,4]", "f32[4]"), "f32[3]");                // matrix-vector
  EXPECT_EQ(matmul("f32[4]", "f32[4,5]"), "f32[5]");                // vector-matrix
}

TEST(MatmulMatMul, BatchBroadcast) {
  EXPECT_EQ(matmul("f32[2,1,3,4]", "f32[5,4,6]"), "f32[2,5,3,6]");
  EXPECT_EQ(matmul("f32[3,4]", "f32[8,4,6]"), "f32[8,3,6]");
  EXPECT_EQ(matmul("f32[2,3,4]", "f32[4]"), "f32[2,3]");
  EXPECT_EQ(matmul("f32[4]", "f32[2,4,5]"), "f32[2,5]");
  EXPECT_EQ(matmul("f32[B,1,S,D]", "f32[1,H,D,S]"), "f32[B,H,S,S]");
}

TEST(MatmulMatMul, SymbolsAndIntervals) {
  EXPECT_EQ(matmul("f32[B,S,D]", "f32[D,H]"), "f32[B,S,H]");
  // K of A is learned from B, and A's other uses of the symbol see it.
  EXPECT_EQ(matmul("f32[K,K]", "f32[4,M]"), "f32[4,M]");
  EXPECT_EQ(matmul("f32[?{1..8},3]", "f32[?{2..5},7]"), "f32[?{1..8},7]");
  // 5 against a batch dim of 1..4: that dim is 1.
  EXPECT_EQ(matmul("f32[?{1..4},2,3]", "f32[5,3,2]"), "f32[5,2,2]");
  EXPECT_EQ(matmul("f32[?,?]", "f32[?,?]"), "f32[?,?]");
  OpTester narrowed("MatMul", 13);
  narrowed.input("f32[2,K]").input("f32[?{4..16},3]");
  EXPECT_EQ(narrowed.run(), "f32[2,3]");
  EXPECT_EQ(narrowed.range("K"), "4..16");
}

TEST(MatmulMatMul, UnknownRankAndType) {
  EXPECT_EQ(matmul("f32[...]", "f32[3,4]"), "f32[...]");
  EXPECT_EQ(matmul("f32[3,4]", "?[...]"), "f32[...]");
  EXPECT_EQ(matmul("?[2,3]", "f32[3,4]"), "f32[2,4]");
  EXPECT_EQ(matmul("?[2,3]", "?[3]"), "?[2]");
}

TEST(MatmulMatMul, Errors) {
  EXPECT_EQ(matmul("f32[2,3]", "f32[4,5]"),
            "error: inner dimensions differ: 3 vs 4 (f32[2,3] times f32[4,5])");
  EXPECT_EQ(matmul("f32[4]", "f32[5]"),
            "error: inner dimensions differ: 4 vs 5 (f32[4] times f32[5])");
  EXPECT_EQ(matmul("f32[?{1..3},3]", "f32[?{4..6},5]"),
            "error: inner dimensions differ: 3 vs ?{4..6} (f32[?{1..3},3] times f32[?{4..6},5])");
  EXPECT_EQ(matmul("f32[]", "f32[3]"),
            "error: input 0 is a scalar, matrix product needs rank >= 1 (f32[])");
  EXPECT_EQ(matmul("f32[3]", "f32[...]"), "f32[...]");
  EXPECT_EQ(matmul("f32[3]", "f32[]"),
            "error: input 1 is a scalar, matrix product needs rank >= 1 (f32[])");
  EXPECT_EQ(matmul("f32[2,3]", "f16[3,4]"), "error: input types differ: f32[2,3] vs f16[3,4]");
  std::string batch = matmul("f32[2,3,4]", "f32[3,4,5]");
  EXPECT_EQ(batch.rfind("error: batch dimensions do not broadcast: ", 0), 0u) << batch;
  EXPECT_NE(batch.find("(f32[2,3,4] times f32[3,4,5])"), std::string::npos) << batch;
}

TEST(MatmulMatMulInteger, Shapes) {
  OpTester t("MatMulInteger", 10);
  t.input("u8[N,3]").input("i8[3,4]").input("u8[]").input("i8[]");
  EXPECT_EQ(t.run(), "i32[N,4]");
  OpTester noZero("MatMulInteger", 10);
  noZero.input("u8[2,N,3]").input("u8[3]");
  EXPECT_EQ(noZero.run(), "i32[2,N]");
  OpTester mid("MatMulInteger", 10);
  mid.input("u8[N,3]").input("u8[3,4]").absent().input("u8[4]");
  EXPECT_EQ(mid.run(), "i32[N,4]");
  OpTester rank("MatMulInteger", 10);
  rank.input("?[...]").input("u8[3,4]");
  EXPECT_EQ(rank.run(), "i32[...]");
}

TEST(MatmulMatMulInteger, Errors) {
  OpTester zp("MatMulInteger", 10);
  zp.input("u8[2,3]").input("i8[3,4]").input("i8[]");
  EXPECT_EQ(zp.run(), "error: input 2 (zero point) has type i8, expected u8 like input 0 (i8[] vs u8[2,3])");
  OpTester k("MatMulInteger", 10);
  k.input("u8[2,3]").input("i8[2,4]");
  EXPECT_EQ(k.run(), "error: inner dimensions differ: 3 vs 2 (u8[2,3] times i8[2,4])");
}

TEST(MatmulQLinearMatMul, Shapes) {
  OpTester t("QLinearMatMul", 10);
  t.input("u8[B,S,64]").input("f32[]").input("u8[]").input("i8[64,32]").input("f32[]").input("i8[]")
      .input("f32[]").input("i8[]");
  EXPECT_EQ(t.run(), "i8[B,S,32]");
  OpTester unknownOut("QLinearMatMul", 10);
  unknownOut.input("u8[2,4]").input("f32[]").input("u8[]").input("u8[4,?{1..3}]").input("f32[]")
      .input("u8[]").input("f32[]").input("?[...]");
  EXPECT_EQ(unknownOut.run(), "?[2,?{1..3}]");
}

TEST(MatmulQLinearMatMul, Errors) {
  OpTester scale("QLinearMatMul", 10);
  scale.input("u8[2,4]").input("i32[]").input("u8[]").input("u8[4,3]").input("f32[]").input("u8[]")
      .input("f32[]").input("u8[]");
  EXPECT_EQ(scale.run(), "error: input 1 (scale) must be a float tensor, got i32[]");
  OpTester zp("QLinearMatMul", 10);
  zp.input("u8[2,4]").input("f32[]").input("u8[]").input("u8[4,3]").input("f32[]").input("i8[]")
      .input("f32[]").input("u8[]");
  EXPECT_EQ(zp.run(), "error: input 5 (zero point) has type i8, expected u8 like input 3 (i8[] vs u8[4,3])");
  OpTester k("QLinearMatMul", 10);
  k.input("u8[2,4]").input("f32[]").input("u8[]").input("u8[5,3]").input("f32[]").input("u8[]")
      .input("f32[]").input("u8[]");
  EXPECT_EQ(k.run(), "error: inner dimensions differ: 4 vs 5 (u8[2,4] times u8[5,3])");
}

std::string gemm(const char *a, const char *b, const char *c, int64_t transA = 0,
                 int64_t transB = 0, int opset = 13) {
  OpTester t("Gemm", opset);
  t.input(a).input(b);
  if (c) t.input(c);
  t.attr("transA", transA).attr("transB", transB);
  return t.run();
}

TEST(MatmulGemm, Transposes) {
  EXPECT_EQ(gemm("f32[3,5]", "f32[5,4]", nullptr), "f32[3,4]");
  EXPECT_EQ(gemm("f32[5,3]", "f32[5,4]", nullptr, 1), "f32[3,4]");
  EXPECT_EQ(gemm("f32[3,5]", "f32[4,5]", nullptr, 0, 1), "f32[3,4]");
  EXPECT_EQ(gemm("f32[5,3]", "f32[4,5]", nullptr, 1, 1), "f32[3,4]");
  EXPECT_EQ(gemm("f32[N,512]", "f32[1000,K]", "f32[1000]", 0, 1), "f32[N,1000]");
}

TEST(MatmulGemm, BiasBroadcastsOneWay) {
  EXPECT_EQ(gemm("f32[3,5]", "f32[5,4]", "f32[]"), "f32[3,4]");
  EXPECT_EQ(gemm("f32[3,5]", "f32[5,4]", "f32[4]"), "f32[3,4]");
  EXPECT_EQ(gemm("f32[3,5]", "f32[5,4]", "f32[1,4]"), "f32[3,4]");
  EXPECT_EQ(gemm("f32[3,5]", "f32[5,4]", "f32[3,1]"), "f32[3,4]");
  EXPECT_EQ(gemm("f32[3,5]", "f32[5,4]", "f32[3,4]"), "f32[3,4]");
  EXPECT_EQ(gemm("f32[3,5]", "f32[5,4]", "f32[?,?]"), "f32[3,4]");
  // A bias of 2..8 elements cannot be 1: it is N.
  OpTester t("Gemm", 13);
  t.input("f32[M,K]").input("f32[K,N]").input("f32[?{2..8}]");
  EXPECT_EQ(t.run(), "f32[M,N]");
  EXPECT_EQ(t.range("N"), "2..8");
  // A bias dim that cannot be 4 is 1.
  OpTester one("Gemm", 13);
  one.input("f32[3,5]").input("f32[5,4]").input("f32[S]");
  EXPECT_EQ(one.run(), "f32[3,4]");
  OpTester learned("Gemm", 13);
  learned.input("f32[M,5]").input("f32[5,N]").input("f32[7,?{5..9}]");
  EXPECT_EQ(learned.run(), "f32[7,N]");
  EXPECT_EQ(learned.range("N"), "5..9");
}

TEST(MatmulGemm, UnknownRankAndType) {
  EXPECT_EQ(gemm("f32[...]", "f32[K,N]", nullptr), "f32[?,N]");
  EXPECT_EQ(gemm("?[...]", "?[...]", "f32[3,4]"), "f32[3,4]");
  EXPECT_EQ(gemm("f32[...]", "f32[...]", "f32[?{2..3},1]"), "f32[?{2..3},?]");
  EXPECT_EQ(gemm("?[2,3]", "f16[3,4]", "?[...]"), "f16[2,4]");
}

TEST(MatmulGemm, Errors) {
  EXPECT_EQ(gemm("f32[3,5]", "f32[6,4]", nullptr),
            "error: inner dimensions differ: 5 vs 6 (f32[3,5] times f32[6,4])");
  EXPECT_EQ(gemm("f32[3,5]", "f32[6,4]", nullptr, 1, 1),
            "error: inner dimensions differ: 3 vs 4 (f32[3,5] transposed times f32[6,4] transposed)");
  EXPECT_EQ(gemm("f32[2,3,5]", "f32[5,4]", nullptr),
            "error: input 0 (A) has rank 3, expected 2 (f32[2,3,5])");
  EXPECT_EQ(gemm("f32[3,5]", "f32[5]", nullptr),
            "error: input 1 (B) has rank 1, expected 2 (f32[5])");
  EXPECT_EQ(gemm("f32[3,5]", "f32[5,4]", "f32[3]"),
            "error: input 2 (C) f32[3] does not broadcast to [3,4]");
  EXPECT_EQ(gemm("f32[3,5]", "f32[5,4]", "f32[1,3,4]"),
            "error: input 2 (C) f32[1,3,4] does not broadcast to [3,4]");
  EXPECT_EQ(gemm("f32[1,5]", "f32[5,4]", "f32[3,4]"),
            "error: input 2 (C) f32[3,4] does not broadcast to [1,4]");
  EXPECT_EQ(gemm("f32[3,5]", "f32[5,4]", "f16[4]"), "error: input types differ: f16[4] vs f32[3,5]");
  EXPECT_EQ(gemm("f32[3,5]", "i32[5,4]", nullptr), "error: input types differ: f32[3,5] vs i32[5,4]");
}

TEST(MatmulGemm, LegacyBroadcastAttribute) {
  // Before opset 7, C must be (M, N) unless broadcast = 1.
  OpTester exact("Gemm", 6);
  exact.input("f32[3,5]").input("f32[5,4]").input("f32[1,4]").attr("broadcast", 0);
  EXPECT_EQ(exact.run(), "error: input 2 (C) f32[1,4] must have shape [3,4] when broadcast = 0");
  OpTester bcast("Gemm", 6);
  bcast.input("f32[3,5]").input("f32[5,4]").input("f32[4]").attr("broadcast", 1);
  EXPECT_EQ(bcast.run(), "f32[3,4]");
  OpTester learn("Gemm", 6);
  learn.input("f32[M,5]").input("f32[5,4]").input("f32[3,?]");
  EXPECT_EQ(learn.attr("broadcast", 0).run(), "f32[3,4]");
}

std::string einsum(const char *eq, std::vector<const char *> inputs) {
  OpTester t("Einsum", 12);
  for (const char *in : inputs) t.input(in);
  t.attr("equation", eq);
  return t.run();
}

TEST(MatmulEinsum, ExplicitOutput) {
  EXPECT_EQ(einsum("ij,jk->ik", {"f32[3,4]", "f32[4,5]"}), "f32[3,5]");
  EXPECT_EQ(einsum("bij,bjk->bik", {"f32[B,S,D]", "f32[B,D,T]"}), "f32[B,S,T]");
  EXPECT_EQ(einsum("ij->ji", {"f32[N,?{1..8}]"}), "f32[?{1..8},N]");
  EXPECT_EQ(einsum("ij->", {"f32[3,4]"}), "f32[]");
  EXPECT_EQ(einsum("ii->i", {"f32[N,N]"}), "f32[N]");
  EXPECT_EQ(einsum("bhqd,bhkd->bhqk", {"f32[B,12,S,64]", "f32[B,12,S,64]"}), "f32[B,12,S,S]");
  EXPECT_EQ(einsum(" i j , j k -> i k ", {"f32[3,4]", "f32[4,5]"}), "f32[3,5]");
}

TEST(MatmulEinsum, ImplicitOutput) {
  EXPECT_EQ(einsum("ij,jk", {"f32[3,4]", "f32[4,5]"}), "f32[3,5]");
  EXPECT_EQ(einsum("ji", {"f32[3,4]"}), "f32[4,3]");
  EXPECT_EQ(einsum("ii", {"f32[3,3]"}), "f32[]");
  EXPECT_EQ(einsum("i,i", {"f32[5]", "f32[5]"}), "f32[]");
  // ASCII order: upper case first.
  EXPECT_EQ(einsum("bA,ab", {"f32[2,3]", "f32[2,2]"}), "f32[3,2]");
  EXPECT_EQ(einsum("...ij,...jk", {"f32[2,3,4]", "f32[4,5]"}), "f32[2,3,5]");
}

TEST(MatmulEinsum, Ellipsis) {
  EXPECT_EQ(einsum("...ij,...jk->...ik", {"f32[2,1,3,4]", "f32[5,4,6]"}), "f32[2,5,3,6]");
  EXPECT_EQ(einsum("...ii->...i", {"f32[3,5,5]"}), "f32[3,5]");
  EXPECT_EQ(einsum("i...->...", {"f32[3,4,5]"}), "f32[4,5]");
  EXPECT_EQ(einsum("i...j->ij", {"f32[3,4,5]"}), "f32[3,5]");
  EXPECT_EQ(einsum("ij...->...ij", {"f32[3,4]"}), "f32[3,4]");
  EXPECT_EQ(einsum("ij,jk->...ik", {"f32[3,4]", "f32[4,5]"}), "f32[3,5]");
}

TEST(MatmulEinsum, LabelsBroadcastAcrossInputs) {
  EXPECT_EQ(einsum("ij,ij->ij", {"f32[1,3]", "f32[2,3]"}), "f32[2,3]");
  // N may be 1: the result is the other side.
  EXPECT_EQ(einsum("ij,ij->ij", {"f32[N,3]", "f32[?{2..4},3]"}), "f32[?{2..4},3]");
  OpTester t("Einsum", 12);
  t.bound("N", 2).input("f32[N,3]").input("f32[?{2..4},3]").attr("equation", "ij,ij->ij");
  EXPECT_EQ(t.run(), "f32[N,3]");
  EXPECT_EQ(t.range("N"), "2..4");
}

TEST(MatmulEinsum, UnknownRanks) {
  EXPECT_EQ(einsum("ij,jk->ik", {"f32[...]", "f32[3,4]"}), "f32[?,4]");
  EXPECT_EQ(einsum("...ij,jk->...ik", {"f32[...]", "f32[3,4]"}), "f32[...]");
  EXPECT_EQ(einsum("...ij,jk->ik", {"f32[...]", "f32[3,4]"}), "f32[?,4]");
  EXPECT_EQ(einsum("ij,jk->ik", {"?[2,3]", "?[3,4]"}), "?[2,4]");
}

TEST(MatmulEinsum, Errors) {
  EXPECT_EQ(einsum("ij,jk->ik", {"f32[3,4]", "f32[5,6]"}),
            "error: dimension 'j' of input 1 is 5, elsewhere 4 (f32[5,6])");
  EXPECT_EQ(einsum("ii->i", {"f32[3,4]"}),
            "error: input 0 repeats 'i' on axes of different sizes 3 and 4 (f32[3,4])");
  EXPECT_EQ(einsum("ijk->i", {"f32[3,4]"}),
            "error: input 0 has rank 2 but its term in 'ijk->i' names 3 axes (f32[3,4])");
  EXPECT_EQ(einsum("ij->i", {"f32[3,4,5]"}),
            "error: input 0 has rank 3 but its term in 'ij->i' names 2 axes (f32[3,4,5])");
  EXPECT_EQ(einsum("ij->ik", {"f32[3,4]"}), "error: output label 'k' of 'ij->ik' is not in any input");
  EXPECT_EQ(einsum("ij->ii", {"f32[3,3]"}), "error: output label 'i' of 'ij->ii' is repeated");
  EXPECT_EQ(einsum("ij,jk->ik", {"f32[3,4]"}),
            "error: equation 'ij,jk->ik' has 2 input terms for 1 inputs");
  EXPECT_EQ(einsum("i1->i", {"f32[3,4]"}), "error: bad character '1' in einsum term 'i1'");
  EXPECT_EQ(einsum("i..j->i", {"f32[3,4]"}), "error: bad ellipsis in einsum term 'i..j'");
  EXPECT_EQ(einsum("ij,jk->ik", {"f32[3,4]", "f64[4,5]"}),
            "error: input types differ: f32[3,4] vs f64[4,5]");
  std::string ell = einsum("...i,...i->...", {"f32[2,3]", "f32[4,3]"});
  EXPECT_EQ(ell.rfind("error: ellipsis dimensions do not broadcast: ", 0), 0u) << ell;
  OpTester missing("Einsum", 12);
  missing.input("f32[3]");
  EXPECT_EQ(missing.run(), "error: attribute 'equation' is missing");
}

// ---- ONNX backend node tests (generated from /usr/share/libonnx-testdata/data) ----
class MatmulOnnxNode : public ::testing::TestWithParam<NodeCase> {};
TEST_P(MatmulOnnxNode, MatchesActualShapes) { checkNodeCase(GetParam()); }

const std::vector<NodeCase> kMatmulNodeCases = {
    {"einsum_batch_diagonal", "Einsum", 12, {P("f64[3,5,5]")}, {{"equation", std::string("...ii ->...i")}}, 1, "f64[3,5]"},
    {"einsum_batch_matmul", "Einsum", 12, {P("f64[5,2,3]"), P("f64[5,3,4]")}, {{"equation", std::string("bij, bjk -> bik")}}, 1, "f64[5,2,4]"},
    {"einsum_inner_prod", "Einsum", 12, {P("f64[5]"), P("f64[5]")}, {{"equation", std::string("i,i")}}, 1, "f64[]"},
    {"einsum_sum", "Einsum", 12, {P("f64[3,4]")}, {{"equation", std::string("ij->i")}}, 1, "f64[3]"},
    {"einsum_transpose", "Einsum", 12, {P("f64[3,4]")}, {{"equation", std::string("ij->ji")}}, 1, "f64[4,3]"},
    {"gemm_all_attributes", "Gemm", 13, {P("f32[4,3]"), P("f32[5,4]"), P("f32[1,5]")}, {{"alpha", double(0.25)}, {"beta", double(0.3499999940395355)}, {"transA", int64_t(1)}, {"transB", int64_t(1)}}, 1, "f32[3,5]"},
    {"gemm_alpha", "Gemm", 13, {P("f32[3,5]"), P("f32[5,4]"), P("f32[1,4]")}, {{"alpha", double(0.5)}}, 1, "f32[3,4]"},
    {"gemm_beta", "Gemm", 13, {P("f32[2,7]"), P("f32[7,4]"), P("f32[1,4]")}, {{"beta", double(0.5)}}, 1, "f32[2,4]"},
    {"gemm_default_matrix_bias", "Gemm", 13, {P("f32[3,6]"), P("f32[6,4]"), P("f32[3,4]")}, {}, 1, "f32[3,4]"},
    {"gemm_default_no_bias", "Gemm", 13, {P("f32[2,10]"), P("f32[10,3]")}, {}, 1, "f32[2,3]"},
    {"gemm_default_scalar_bias", "Gemm", 13, {P("f32[2,3]"), P("f32[3,4]"), P("f32[]")}, {}, 1, "f32[2,4]"},
    {"gemm_default_single_elem_vector_bias", "Gemm", 13, {P("f32[3,7]"), P("f32[7,3]"), P("f32[1]")}, {}, 1, "f32[3,3]"},
    {"gemm_default_vector_bias", "Gemm", 13, {P("f32[2,7]"), P("f32[7,4]"), P("f32[1,4]")}, {}, 1, "f32[2,4]"},
    {"gemm_default_zero_bias", "Gemm", 13, {P("f32[3,5]"), P("f32[5,4]"), P("f32[1,4]")}, {}, 1, "f32[3,4]"},
    {"gemm_transposeA", "Gemm", 13, {P("f32[6,3]"), P("f32[6,4]"), P("f32[1,4]")}, {{"transA", int64_t(1)}}, 1, "f32[3,4]"},
    {"gemm_transposeB", "Gemm", 13, {P("f32[3,6]"), P("f32[4,6]"), P("f32[1,4]")}, {{"transB", int64_t(1)}}, 1, "f32[3,4]"},
    {"matmul_2d", "MatMul", 13, {P("f32[3,4]"), P("f32[4,3]")}, {}, 1, "f32[3,3]"},
    {"matmul_3d", "MatMul", 13, {P("f32[2,3,4]"), P("f32[2,4,3]")}, {}, 1, "f32[2,3,3]"},
    {"matmul_4d", "MatMul", 13, {P("f32[1,2,3,4]"), P("f32[1,2,4,3]")}, {}, 1, "f32[1,2,3,3]"},
    {"matmulinteger", "MatMulInteger", 10, {P("u8[4,3]"), P("u8[3,2]"), P("u8[1]"), P("u8[1]")}, {}, 1, "i32[4,2]"},
    {"qlinearmatmul_2D", "QLinearMatMul", 10, {P("u8[2,4]"), P("f32[1]"), P("u8[1]"), P("u8[4,3]"), P("f32[1]"), P("u8[1]"), P("f32[1]"), P("u8[1]")}, {}, 1, "u8[2,3]"},
    {"qlinearmatmul_3D", "QLinearMatMul", 10, {P("u8[2,2,4]"), P("f32[1]"), P("u8[1]"), P("u8[2,4,3]"), P("f32[1]"), P("u8[1]"), P("f32[1]"), P("u8[1]")}, {}, 1, "u8[2,2,3]"},
    {"pt_Linear", "Gemm", 6, {P("f32[4,10]"), P("f32[8,10]"), P("f32[8]")}, {{"alpha", double(1.0)}, {"beta", double(1.0)}, {"broadcast", int64_t(1)}, {"transB", int64_t(1)}}, 1, "f32[4,8]"},
};
INSTANTIATE_TEST_SUITE_P(MatmulBackend, MatmulOnnxNode, ::testing::ValuesIn(kMatmulNodeCases),
                         [](const auto &info) { return info.param.name; });

} // namespace
} // namespace sf::test
