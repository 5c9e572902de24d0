// The array forms of vec_math.h: each loop compiled twice, for the build's baseline (SSE2) and
// for AVX2 with FMA, the second chosen once at run time where the processor has both (the build
// targets the baseline, so a machine's wider vectors are used only through such a choice).
#include "vec_math.h"

namespace sf::eval::detail {
namespace {

#if defined(__x86_64__) && defined(__GNUC__)
#define SF_WIDE __attribute__((target("avx2,fma")))
#else
#define SF_WIDE
#endif

/// p[i] = F(p[i]) for each element, in the baseline's vectors; `eachWide` the same in AVX2's.
template <float (*F)(float)> void each(float *p, int64_t n) {
  for (int64_t i = 0; i < n; ++i) p[i] = F(p[i]);
}
template <float (*F)(float)> SF_WIDE void eachWide(float *p, int64_t n) {
  for (int64_t i = 0; i < n; ++i) p[i] = F(p[i]);
}
template <float (*F)(float)> void eachOnThisMachine(float *p, int64_t n) {
  if (hasAvx2Fma()) return eachWide<F>(p, n);
  each<F>(p, n);
}

} // namespace

bool hasAvx2Fma() {
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
#else
  return false;
#endif
}

void expVec(float *p, int64_t n) { eachOnThisMachine<expVec>(p, n); }
void sigmoidVec(float *p, int64_t n) { eachOnThisMachine<sigmoidVec>(p, n); }
void tanhVec(float *p, int64_t n) { eachOnThisMachine<tanhVec>(p, n); }

} // namespace sf::eval::detail
