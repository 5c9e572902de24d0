// Internal to `shapeflow._core`: JSON as Python objects (common.h).
#include "common.h"

namespace sf::python {

py::object toPython(const nlohmann::json &j) {
  switch (j.type()) {
  case nlohmann::json::value_t::null: return py::none();
  case nlohmann::json::value_t::boolean: return py::bool_(j.get<bool>());
  case nlohmann::json::value_t::number_integer: return py::int_(j.get<int64_t>());
  case nlohmann::json::value_t::number_unsigned: return py::int_(j.get<uint64_t>());
  case nlohmann::json::value_t::number_float: return py::float_(j.get<double>());
  case nlohmann::json::value_t::string: return text(j.get_ref<const std::string &>());
  case nlohmann::json::value_t::array: {
    py::list l;
    for (const auto &e : j) l.append(toPython(e));
    return l;
  }
  case nlohmann::json::value_t::object: {
    py::dict d;
    for (const auto &[k, v] : j.items()) d[text(k)] = toPython(v);
    return d;
  }
  default: return py::none();
  }
}

py::object fromJsonText(const std::string &text) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) throw Error("internal error: the report is not JSON");
  return toPython(j);
}

} // namespace sf::python
