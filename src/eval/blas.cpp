// sgemm on oneDNN, else OpenBLAS, else loops, as the build has them (eval/blas.h).
#include "blas.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#ifdef SF_HAVE_DNNL
#include <dnnl.h>
#endif
#ifdef SF_HAVE_OPENBLAS
#include <openblas-pthread/cblas.h>
extern "C" int blas_thread_shutdown_(void); // exported by OpenBLAS, not declared in cblas.h
#endif

namespace sf::eval::detail {
namespace {

void sgemmLoops(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t lda,
                const float *b, int64_t ldb, float beta, float *c, int64_t ldc) {
  std::vector<float> row(size_t(std::max<int64_t>(n, 0)));
  for (int64_t i = 0; i < m; ++i) {
    std::fill(row.begin(), row.end(), 0.0f);
    for (int64_t kk = 0; kk < k; ++kk) {
      float av = ta ? a[kk * lda + i] : a[i * lda + kk];
      if (av == 0.0f) continue;
      for (int64_t j = 0; j < n; ++j) row[size_t(j)] += av * (tb ? b[j * ldb + kk] : b[kk * ldb + j]);
    }
    for (int64_t j = 0; j < n; ++j)
      c[i * ldc + j] = alpha * row[size_t(j)] + (beta == 0.0f ? 0.0f : beta * c[i * ldc + j]);
  }
}

/// oneDNN's sgemm (row-major, its own AVX-512 kernels); false without oneDNN or where it
/// refuses the arguments.
bool dnnlGemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t lda,
              const float *b, int64_t ldb, float beta, float *c, int64_t ldc) {
#ifdef SF_HAVE_DNNL
  return dnnl_sgemm(ta ? 'T' : 'N', tb ? 'T' : 'N', m, n, k, alpha, a, lda, b, ldb, beta, c, ldc) == dnnl_success;
#else
  (void)ta, (void)tb, (void)m, (void)n, (void)k, (void)alpha, (void)a, (void)lda, (void)b, (void)ldb, (void)beta,
      (void)c, (void)ldc;
  return false;
#endif
}

} // namespace

#ifdef SF_HAVE_OPENBLAS
namespace {
// One thread unless asked otherwise, set once before the first product. OpenBLAS started its
// worker threads when it was loaded, and they spin in sched_yield waiting for work: in every
// process that links the executor, `shapeflow infer` included (a tenth of a second of CPU on
// the 100k-node graph). They are stopped here; OpenBLAS starts them again on the first product
// that asks for more than one thread (setGemmThreads).
struct OneThread {
  OneThread() {
    openblas_set_num_threads(1);
    blas_thread_shutdown_();
  }
} oneThread;
} // namespace

void sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t lda,
           const float *b, int64_t ldb, float beta, float *c, int64_t ldc) {
  if (m <= 0 || n <= 0) return;
  if (k > 0 && dnnlGemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)) return;
  const int64_t limit = INT32_MAX; // OpenBLAS's blasint is 32 bits here
  if (m > limit || n > limit || k > limit || lda > limit || ldb > limit || ldc > limit)
    return sgemmLoops(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, blasint(m),
              blasint(n), blasint(k), alpha, a, blasint(lda), b, blasint(ldb), beta, c, blasint(ldc));
}

#ifdef SF_HAVE_DNNL
const char *gemmBackend() { return "oneDNN sgemm (OpenBLAS where it refuses)"; }
#else
const char *gemmBackend() { return "OpenBLAS"; }
#endif
void setGemmThreads(int threads) {
  // Only on a change: OpenBLAS starts its worker threads again on every call, even for the one
  // thread it has (and they spin in sched_yield beside the run).
  static int current = 1;
  threads = std::max(1, threads);
  if (threads == current) return;
  openblas_set_num_threads(threads);
  current = threads;
}

#else

void sgemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float *a, int64_t lda,
           const float *b, int64_t ldb, float beta, float *c, int64_t ldc) {
  if (m <= 0 || n <= 0) return;
  if (k > 0 && dnnlGemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)) return;
  sgemmLoops(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

#ifdef SF_HAVE_DNNL
const char *gemmBackend() { return "oneDNN sgemm"; }
#else
const char *gemmBackend() { return "loops"; }
#endif
void setGemmThreads(int) {}

#endif

} // namespace sf::eval::detail
