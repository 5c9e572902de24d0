// The roofline estimate (cost/device.h).
#include "shapeflow/cost/device.h"

#include <cmath>

namespace sf {

const char *toString(Bound b) {
  switch (b) {
  case Bound::Compute:
    return "compute";
  case Bound::Memory:
    return "memory";
  case Bound::Either:
    return "either";
  }
  return "?";
}

namespace {

/// `count` at `rate` per second, in nanoseconds: count * 1000 // (rate in millions per second)
/// (exact integer arithmetic on expressions; a rate below 1e6/s is taken as 1e6/s).
Result<Dimension> nanoseconds(const Dimension &count, double rate) {
  int64_t perMicro = std::max<int64_t>(1, int64_t(std::llround(rate / 1e6)));
  SF_ASSIGN(Dimension scaled, count * Dimension(1000));
  return scaled.floorDiv(perMicro);
}

} // namespace

Result<Roofline> roofline(const Counts &c, const Device &d) {
  Roofline r;
  SF_ASSIGN(Dimension twoMacs, c.macs * Dimension(2));
  SF_ASSIGN(Dimension work, twoMacs + c.flops);
  SF_ASSIGN(Dimension traffic, c.readBytes + c.writeBytes);
  // Each kind at its rate: MACs at the MAC rate (half the peak when none is given: 2 operations
  // each), every other kind at its own or the peak.
  SF_ASSIGN(r.computeNs, nanoseconds(c.macs, d.macRate > 0 ? d.macRate : d.peakFlops / 2));
  for (size_t k = 0; k < kFlopKinds; ++k) {
    if (c.flopsByKind[k].isStatic() && c.flopsByKind[k].length() == 0) continue;
    SF_ASSIGN(Dimension ns, nanoseconds(c.flopsByKind[k],
                                        d.kindRate[k] > 0 ? d.kindRate[k] : d.peakFlops));
    SF_ASSIGN(r.computeNs, r.computeNs + ns);
  }
  SF_ASSIGN(r.memoryNs, nanoseconds(traffic, d.bandwidth));
  SF_ASSIGN(r.timeNs, Dimension::max(r.computeNs, r.memoryNs));
  if (r.computeNs.minLength() >= r.memoryNs.maxLength())
    r.bound = Bound::Compute;
  else if (r.memoryNs.minLength() >= r.computeNs.maxLength())
    r.bound = Bound::Memory;
  else if (r.computeNs.isStatic() && r.memoryNs.isStatic())
    r.bound = r.computeNs.length() >= r.memoryNs.length() ? Bound::Compute : Bound::Memory;
  if (traffic.minLength() > 0) r.intensity = double(work.minLength()) / double(traffic.minLength());
  return r;
}

} // namespace sf
