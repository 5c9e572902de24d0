// Dense matrix products for the heavy kernels (Conv, MatMul, Gemm, attention in f32): oneDNN's
// sgemm where the build has oneDNN (its AVX-512 kernels: Debian's OpenBLAS runs its generic
// kernels on this machine, 2-6x slower), else OpenBLAS's (Debian libopenblas-dev), else a loop
// here. Row-major.
#pragma once

#include <cstdint>

namespace sf::eval::detail {

/// C[m,n] = alpha * op(A)[m,k] * op(B)[k,n] + beta * C, op = transpose when `ta` / `tb`;
/// lda, ldb, ldc are the row strides of A, B and C as stored.
void sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t lda,
           const float *b, int64_t ldb, float beta, float *c, int64_t ldc);

/// Which implementation sgemm uses ("OpenBLAS 0.3.21" or "loops").
const char *gemmBackend();

/// Threads the BLAS may use (1 by default: runs are compared one thread against one).
void setGemmThreads(int threads);

} // namespace sf::eval::detail
