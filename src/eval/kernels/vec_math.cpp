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
bool wide() { return hasAvx2Fma(); }

SF_WIDE void expWide(float *p, int64_t n) {
  for (int64_t i = 0; i < n; ++i) p[i] = expVec(p[i]);
}
SF_WIDE void sigmoidWide(float *p, int64_t n) {
  for (int64_t i = 0; i < n; ++i) p[i] = sigmoidVec(p[i]);
}
SF_WIDE void tanhWide(float *p, int64_t n) {
  for (int64_t i = 0; i < n; ++i) p[i] = tanhVec(p[i]);
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

void expVec(float *p, int64_t n) {
  if (wide()) return expWide(p, n);
  for (int64_t i = 0; i < n; ++i) p[i] = expVec(p[i]);
}
void sigmoidVec(float *p, int64_t n) {
  if (wide()) return sigmoidWide(p, n);
  for (int64_t i = 0; i < n; ++i) p[i] = sigmoidVec(p[i]);
}
void tanhVec(float *p, int64_t n) {
  if (wide()) return tanhWide(p, n);
  for (int64_t i = 0; i < n; ++i) p[i] = tanhVec(p[i]);
}

} // namespace sf::eval::detail
