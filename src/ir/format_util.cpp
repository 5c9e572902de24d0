// Number and string spellings for the printers.
#include "format_util.h"

#include <charconv>
#include <cmath>
#include <cctype>
#include <cstdio>

namespace sf::detail {
namespace {
std::string ensureFloatLooking(std::string s) {
  for (char c : s)
    if (c == '.' || c == 'e' || c == 'E' || c == 'n' || c == 'i') return s; // inf, nan
  return s + ".0";
}
} // namespace

std::string formatDouble(double v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return ensureFloatLooking(std::string(buf, r.ptr));
}

std::string formatFloat(float v) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, v);
  return ensureFloatLooking(std::string(buf, r.ptr));
}

std::string formatAttrFloat(double v) {
  if (std::isfinite(v) && std::fabs(v) <= 3.4028234663852886e38 && double(float(v)) == v)
    return formatFloat(float(v));
  return formatDouble(v);
}

std::string quote(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
    case '\\': out += "\\\\"; break;
    case '"': out += "\\\""; break;
    case '\n': out += "\\n"; break;
    case '\t': out += "\\t"; break;
    case '\r': out += "\\r"; break;
    default:
      if (uint8_t(c) < 0x20 || uint8_t(c) >= 0x7f) {
        char buf[8];
        std::snprintf(buf, sizeof buf, "\\x%02x", unsigned(uint8_t(c)));
        out += buf;
      } else {
        out += c;
      }
    }
  }
  return out + "\"";
}

bool isBareName(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!(std::isalnum(uint8_t(c)) || c == '_' || c == '.')) return false;
  return true;
}

} // namespace sf::detail
