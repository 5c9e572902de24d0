// Formatting of diagnostics.
#include "shapeflow/support/diagnostic.h"

namespace sf {

const char *toString(Severity s) {
  switch (s) {
  case Severity::Error: return "error";
  case Severity::Warning: return "warning";
  case Severity::Note: return "note";
  case Severity::Assumption: return "assumption";
  }
  return "error";
}

std::string format(const Diagnostic &d) {
  std::string out;
  if (!d.node.empty() || !d.op.empty()) {
    out += "node '" + d.node + "'";
    if (!d.op.empty()) out += " (" + d.op + ")";
    out += ": ";
  }
  return out + d.message;
}

size_t Diagnostics::promoteAssumptions() {
  size_t n = 0;
  for (Diagnostic &d : list_) {
    if (d.severity != Severity::Assumption) continue;
    d.severity = Severity::Error;
    d.message = "assumption refused (--strict): " + d.message;
    ++n;
  }
  return n;
}

size_t Diagnostics::errorCount() const {
  size_t n = 0;
  for (const auto &d : list_) n += d.severity == Severity::Error;
  return n;
}

} // namespace sf
