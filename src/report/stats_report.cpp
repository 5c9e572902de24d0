// The statistics report (report/stats_report.h): JSON, CSV, a terminal table and an SVG picture.
#include "shapeflow/report/stats_report.h"

#include "shapeflow/report/json_writer.h"
#include "shapeflow/report/names.h"
#include "shapeflow/report/report.h"
#include "shapeflow/support/format.h"

#include "stats_internal.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

namespace sf {
using stats_detail::asDouble;
using stats_detail::trafficOf;
using stats_detail::valueAt;
using stats_detail::workOf;

std::optional<int64_t> stats_detail::valueAt(const StatsReport &r, const Dimension &d) {
  if (d.isStatic()) return d.length();
  if (!d.expr() || d.expr()->hasAnonymous) {
    if (d.minLength() >= 0) return d.minLength();
    return std::nullopt;
  }
  auto v = evaluate(d.expr(), [&](SymbolId s) -> std::optional<int64_t> {
    const SymbolInfo &info = symbolInfo(s);
    auto it = r.at.find(info.name);
    if (it != r.at.end()) return it->second;
    return info.range.lo;
  });
  if (!v.ok()) return std::nullopt;
  return *v;
}

Dimension stats_detail::workOf(const Counts &c) {
  auto twice = c.macs * Dimension(2);
  if (!twice.ok()) return Dimension::dynamic();
  auto w = *twice + c.flops;
  return w.ok() ? *w : Dimension::dynamic();
}

Dimension stats_detail::trafficOf(const Counts &c) {
  auto t = c.readBytes + c.writeBytes;
  return t.ok() ? *t : Dimension::dynamic();
}

namespace {

/// The model's totals at each of the report's rows.
struct RowTotals {
  std::map<std::string, int64_t> at;
  std::optional<int64_t> macs, flops, read, write, timeNs;
};
std::vector<RowTotals> rowTotals(const StatsReport &r);

void writeCounts(JsonWriter &w, const Counts &c, DimTexts &texts) {
  w.key("macs"), writeDimJson(w, c.macs, texts);
  w.key("flops"), writeDimJson(w, c.flops, texts);
  w.key("flops_by_kind").beginObject();
  for (size_t k = 0; k < kFlopKinds; ++k)
    w.key(toString(FlopKind(k))), writeDimJson(w, c.flopsByKind[k], texts);
  w.endObject();
  w.key("read_bytes"), writeDimJson(w, c.readBytes, texts);
  w.key("write_bytes"), writeDimJson(w, c.writeBytes, texts);
}

bool sameCounts(const Counts &a, const Counts &b) {
  return a.macs == b.macs && a.flops == b.flops && a.readBytes == b.readBytes &&
         a.writeBytes == b.writeBytes && a.flopsByKind == b.flopsByKind;
}

/// (2 * macs + flops) / traffic at the report's binding, to three decimals; null when a count
/// is not known there or nothing moves.
void writeIntensity(JsonWriter &w, const StatsReport &r, const Counts &c) {
  auto macs = valueAt(r, c.macs), flops = valueAt(r, c.flops);
  auto read = valueAt(r, c.readBytes), written = valueAt(r, c.writeBytes);
  w.key("intensity");
  if (!macs || !flops || !read || !written || *read + double(*written) == 0) {
    w.null();
    return;
  }
  double work = 2.0 * double(*macs) + double(*flops), traffic = double(*read) + double(*written);
  w.value(std::round(work / traffic * 1000.0) / 1000.0);
}

/// A node's roofline; for a sum (`summed`), its time is the sum of its nodes' times (computed
/// with the statistics) and compute_ns, memory_ns and bound are those of the summed counts: the
/// time it would take at best, were all its work one op.
void writeRoofline(JsonWriter &w, const StatsReport &r, const Counts &c, bool summed,
                   DimTexts &texts) {
  if (!r.device) return;
  auto rf = roofline(c, *r.device);
  if (!rf.ok()) return;
  w.key("time_ns"), writeDimJson(w, summed ? c.timeNs : rf->timeNs, texts);
  w.key("compute_ns"), writeDimJson(w, rf->computeNs, texts);
  w.key("memory_ns"), writeDimJson(w, rf->memoryNs, texts);
  w.key("bound").value(toString(rf->bound));
  // Whether its traffic (at the report's binding) fits the last-level cache: such a node's
  // operands may stay in cache between ops, so its memory time is an upper estimate.
  if (!summed && r.device->cacheBytes > 0) {
    auto read = valueAt(r, c.readBytes), written = valueAt(r, c.writeBytes);
    if (read && written) w.key("fits_cache").value(double(*read) + double(*written) <= r.device->cacheBytes);
  }
}

/// A dim for a CSV cell: the number, or the expression (its bounds in brackets).
std::string csvCell(const Dimension &d) {
  if (d.isStatic()) return std::to_string(d.length());
  std::string e = d.expr() && !d.expr()->hasAnonymous ? toString(d.expr()) : "?";
  std::string s = e + " [" + std::to_string(d.minLength()) + ".." +
                  (d.hasUpperBound() ? std::to_string(d.maxLength()) : std::string("")) + "]";
  std::string quoted = "\"";
  for (char ch : s)
    quoted += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return quoted + "\"";
}

} // namespace

std::vector<std::string> statsLines(const ModelStats &s) {
  auto counts = [](const Counts &c) {
    std::string out = fmt::format("macs {}, flops {}", c.macs, c.flops);
    std::string kinds;
    for (size_t k = 0; k < kFlopKinds; ++k) {
      const Dimension &d = c.flopsByKind[k];
      if (d.isStatic() && d.length() == 0) continue;
      kinds += fmt::format("{}{} {}", kinds.empty() ? "" : ", ", toString(FlopKind(k)), d);
    }
    if (!kinds.empty()) out += " (" + kinds + ")";
    return out + fmt::format(", read {}, write {}", c.readBytes, c.writeBytes);
  };
  std::vector<std::string> lines;
  for (const NodeStats &n : s.nodes) {
    std::string line = fmt::format("{} ({})", n.name, n.op);
    if (!n.path.empty()) line += fmt::format(" in {} x {}", n.path, n.runs);
    line += ": ";
    line += n.modeled ? counts(n.counts) : std::string("not modeled");
    if (n.paramElems) line += fmt::format(", params {} ({} B)", n.paramElems, n.paramBytes);
    if (!n.note.empty()) line += " -- " + n.note;
    lines.push_back(std::move(line));
  }
  for (const auto &[op, t] : s.byOpType)
    lines.push_back(fmt::format("op {} x{}: {}", op, t.count, counts(t.counts)));
  lines.push_back(fmt::format("total: {}, params {} ({} B)", counts(s.total), s.params,
                              s.paramBytes));
  if (!sameCounts(s.total, s.totalKnown))
    lines.push_back(fmt::format("total known: {}", counts(s.totalKnown)));
  for (const std::string &note : s.notes)
    lines.push_back("note: " + note);
  return lines;
}

namespace {
/// `v` (scaled by 1000 `steps` times at most, while it is 1000 or more) with three significant
/// digits: 4.11, 42.1, 512 (whole numbers when not scaled); returns the steps taken.
std::string threeDigits(double &v, int maxSteps, int &steps) {
  steps = 0;
  while (std::fabs(v) >= 1000 && steps < maxSteps)
    v /= 1000, ++steps;
  int decimals = steps == 0 ? 0 : std::fabs(v) < 10 ? 2 : std::fabs(v) < 100 ? 1 : 0;
  std::ostringstream os;
  os << std::setprecision(decimals) << std::fixed << v;
  std::string s = os.str();
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0')
      s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s;
}
} // namespace

std::string humanCount(double v, const char *unit) {
  static const char *kPrefix[] = {"", "K", "M", "G", "T", "P", "E"};
  int p = 0;
  std::string s = threeDigits(v, 6, p);
  return s + " " + kPrefix[p] + unit;
}

std::string humanTime(double ns) {
  static const char *kUnit[] = {"ns", "us", "ms", "s"};
  int u = 0;
  std::string s = threeDigits(ns, 3, u);
  return s + " " + kUnit[u];
}

Result<Device> parseDevice(const nlohmann::json &j) {
  if (!j.is_object()) return makeError("a device is a JSON object");
  Device d;
  d.name = j.value("name", std::string("device"));
  auto num = [&](const char *key, bool required) -> Result<double> {
    if (!j.contains(key)) {
      if (required) return errorf("the device has no \"{}\"", key);
      return 0.0;
    }
    if (!j[key].is_number() || j[key].get<double>() < 0)
      return errorf("the device's \"{}\" must be a non-negative number", key);
    return j[key].get<double>();
  };
  SF_ASSIGN(d.peakFlops, num("peak_flops", true));
  SF_ASSIGN(d.bandwidth, num("memory_bandwidth", true));
  SF_ASSIGN(d.cacheBytes, num("cache_bytes", false));
  SF_ASSIGN(d.macRate, num("mac_rate", false));
  if (d.peakFlops <= 0 || d.bandwidth <= 0)
    return makeError("the device's peak_flops and memory_bandwidth must be positive");
  if (j.contains("peak_by_kind")) {
    const auto &kinds = j["peak_by_kind"];
    if (!kinds.is_object()) return makeError("the device's \"peak_by_kind\" must be an object");
    for (const auto &[key, value] : kinds.items()) {
      size_t k = 0;
      while (k < kFlopKinds && key != toString(FlopKind(k)))
        ++k;
      if (k == kFlopKinds)
        return errorf("the device's \"peak_by_kind\" has \"{}\": the kinds are add, mul, div, "
                      "special, compare, other",
                      key);
      if (!value.is_number() || value.get<double>() <= 0)
        return errorf("the device's rate for \"{}\" must be a positive number", key);
      d.kindRate[k] = value.get<double>();
    }
  }
  return d;
}

namespace {

/// "total" (with the parameters, the intensity and the roofline) and, when some counts are not
/// known, "total_known".
void writeTotalsJson(JsonWriter &w, const StatsReport &r, DimTexts &texts) {
  const ModelStats &s = *r.stats;
  w.key("total").beginObject();
  writeCounts(w, s.total, texts);
  w.key("params").value(s.params);
  w.key("param_bytes").value(s.paramBytes);
  writeIntensity(w, r, s.total);
  writeRoofline(w, r, s.total, true, texts);
  w.endObject();
  if (!sameCounts(s.total, s.totalKnown)) {
    w.key("total_known").beginObject();
    writeCounts(w, s.totalKnown, texts);
    w.endObject();
  }
}

void writeByOpTypeJson(JsonWriter &w, const ModelStats &s, DimTexts &texts) {
  w.key("by_op_type").beginObject();
  for (const auto &[op, t] : s.byOpType) {
    w.key(op).beginObject();
    writeCounts(w, t.counts, texts);
    w.key("count").value(uint64_t(t.count));
    w.endObject();
  }
  w.endObject();
}

void writeNodeJson(JsonWriter &w, const StatsReport &r, const NodeStats &n, DimTexts &texts) {
  w.beginObject();
  w.key("name").value(n.name);
  w.key("op").value(n.op);
  if (!n.path.empty()) w.key("path").value(n.path);
  writeCounts(w, n.counts, texts);
  w.key("runs"), writeDimJson(w, n.runs, texts);
  w.key("in_elems"), writeDimJson(w, n.inElems, texts);
  w.key("out_elems"), writeDimJson(w, n.outElems, texts);
  w.key("in_bytes"), writeDimJson(w, n.inBytes, texts);
  w.key("out_bytes"), writeDimJson(w, n.outBytes, texts);
  w.key("param_elems").value(n.paramElems);
  w.key("param_bytes").value(n.paramBytes);
  writeIntensity(w, r, n.counts);
  if (!n.modeled) w.key("modeled").value(false);
  if (!n.note.empty()) w.key("note").value(n.note);
  writeRoofline(w, r, n.counts, false, texts);
  w.endObject();
}

void writeDeviceJson(JsonWriter &w, const Device &d) {
  w.key("device").beginObject();
  w.key("name").value(d.name);
  w.key("peak_flops").value(d.peakFlops);
  w.key("memory_bandwidth").value(d.bandwidth);
  w.key("cache_bytes").value(d.cacheBytes);
  if (d.macRate > 0) w.key("mac_rate").value(d.macRate);
  bool anyKind = false;
  for (size_t k = 0; k < kFlopKinds; ++k) {
    if (d.kindRate[k] <= 0) continue;
    if (!anyKind) w.key("peak_by_kind").beginObject();
    anyKind = true;
    w.key(toString(FlopKind(k))).value(d.kindRate[k]);
  }
  if (anyKind) w.endObject();
  w.endObject();
}

/// "rows": the totals at each binding of --at.
void writeRowsJson(JsonWriter &w, const StatsReport &r) {
  w.key("rows").beginArray();
  for (const RowTotals &row : rowTotals(r)) {
    w.beginObject().key("at").beginObject();
    for (const auto &[k, v] : row.at) w.key(k).value(v);
    w.endObject();
    auto put = [&](const char *key, const std::optional<int64_t> &v) {
      w.key(key);
      if (v) w.value(*v);
      else w.null();
    };
    put("macs", row.macs), put("flops", row.flops), put("read_bytes", row.read), put("write_bytes", row.write);
    if (r.device) put("time_ns", row.timeNs);
    w.endObject();
  }
  w.endArray();
}

} // namespace

std::string statsJsonText(const StatsReport &r, int indent) {
  const ModelStats &s = *r.stats;
  ExprScope scope = r.graph->enter();
  DimTexts texts; // counts repeat (in_bytes and read_bytes, a kind and the flops): print once
  std::string out;
  out.reserve(256 + s.nodes.size() * 700);
  JsonWriter w(out, indent);
  w.beginObject();
  w.key("model").value(r.model);
  writeSymbolsJson(w, *r.graph);
  writeTotalsJson(w, r, texts);
  writeByOpTypeJson(w, s, texts);
  w.key("nodes").beginArray();
  for (const NodeStats &n : s.nodes)
    writeNodeJson(w, r, n, texts);
  w.endArray();
  if (r.device) writeDeviceJson(w, *r.device);
  if (!r.rows.empty()) writeRowsJson(w, r);
  w.key("notes").beginArray();
  for (const std::string &note : s.notes)
    w.value(note);
  w.endArray();
  w.endObject();
  return out;
}

nlohmann::json statsJson(const StatsReport &r) { return nlohmann::json::parse(statsJsonText(r)); }

void printStatsCsv(const StatsReport &r, std::ostream &os) {
  ExprScope scope = r.graph->enter();
  os << "name,op,path,runs,macs,flops,in_elems,out_elems,in_bytes,out_bytes,param_elems,"
        "param_bytes,read_bytes,write_bytes";
  if (r.device) os << ",time_ns,bound";
  os << "\n";
  auto text = [](const std::string &s) {
    std::string q = "\"";
    for (char c : s)
      q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
  };
  for (const NodeStats &n : r.stats->nodes) {
    os << text(n.name) << "," << text(n.op) << "," << text(n.path) << "," << csvCell(n.runs) << ","
       << csvCell(n.counts.macs) << "," << csvCell(n.counts.flops) << "," << csvCell(n.inElems)
       << "," << csvCell(n.outElems) << "," << csvCell(n.inBytes) << "," << csvCell(n.outBytes)
       << "," << n.paramElems << "," << n.paramBytes << "," << csvCell(n.counts.readBytes) << ","
       << csvCell(n.counts.writeBytes);
    if (r.device) {
      auto rf = roofline(n.counts, *r.device);
      if (rf.ok())
        os << "," << csvCell(rf->timeNs) << "," << toString(rf->bound);
      else
        os << ",,";
    }
    os << "\n";
  }
}

namespace {

std::vector<RowTotals> rowTotals(const StatsReport &r) {
  std::vector<RowTotals> out;
  for (const auto &at : r.rows) {
    StatsReport one = r;
    one.at = at;
    const Counts &t = r.stats->total;
    out.push_back({at, valueAt(one, t.macs), valueAt(one, t.flops), valueAt(one, t.readBytes),
                   valueAt(one, t.writeBytes), r.device ? valueAt(one, t.timeNs) : std::nullopt});
  }
  return out;
}

/// One row per binding: the totals, and with a device the time and its inverse (steps per
/// second: a decode step's tokens per second for a batch of one).
void printStatsRows(const StatsReport &r, std::ostream &os) {
  if (r.rows.empty()) return;
  std::vector<std::string> names;
  for (const auto &[k, v] : r.rows.front()) names.push_back(k);
  os << "per binding:\n|";
  for (const std::string &n : names) os << " " << n << " |";
  os << " MACs | other FLOPs | bytes moved |" << (r.device ? " time | steps/s |" : "") << "\n|";
  for (size_t i = 0; i < names.size() + 3 + (r.device ? 2 : 0); ++i) os << "---:|";
  os << "\n";
  auto count = [](const std::optional<int64_t> &v, const char *unit) {
    return v ? humanCount(double(*v), unit) : std::string("?");
  };
  for (const RowTotals &row : rowTotals(r)) {
    os << "|";
    for (const std::string &n : names) {
      auto it = row.at.find(n);
      os << " " << (it == row.at.end() ? std::string("?") : std::to_string(it->second)) << " |";
    }
    std::optional<int64_t> moved;
    if (row.read && row.write) moved = *row.read + *row.write;
    os << " " << count(row.macs, "MAC") << " | " << count(row.flops, "FLOP") << " | " << count(moved, "B") << " |";
    if (r.device) {
      os << " " << (row.timeNs ? humanTime(double(*row.timeNs)) : "?") << " | ";
      if (row.timeNs && *row.timeNs > 0) os << fmt::format("{:.1f}", 1e9 / double(*row.timeNs));
      else os << "?";
      os << " |";
    }
    os << "\n";
  }
}

/// The totals' expressions short: what they share, and the parts that make one long, named
/// (`R1 = ...` under them, as `infer` names derived sizes); the full ones are in --json.
NamedTexts namedTotals(const StatsReport &r) {
  const ModelStats &s = *r.stats;
  std::vector<Dimension> totals;
  for (const Dimension *d : {&s.total.macs, &s.total.flops, &s.total.readBytes, &s.total.writeBytes})
    if (!d->isStatic() && d->expr() && !d->expr()->hasAnonymous) totals.push_back(*d);
  return nameForPrinting(*r.graph, totals);
}

/// The model, and the binding the counts are shown at.
void printShownAt(const StatsReport &r, std::ostream &os) {
  os << "model: " << r.model << "\n";
  const auto symbols = r.graph->symbols.namedSymbols();
  if (!symbols.empty() && !r.atNote.empty()) {
    os << "counts shown at: " << r.atNote << "\n";
  } else if (!symbols.empty()) {
    os << "symbols (counts shown at:";
    for (const auto &[name, range] : symbols) {
      auto it = r.at.find(name);
      os << " " << name << "=" << (it != r.at.end() ? it->second : range.lo);
    }
    os << ")\n";
  }
}

/// The model's totals at the binding, their expressions (named with `named`) and with a device
/// its time.
void printTotals(const StatsReport &r, const NamedTexts &named, std::ostream &os) {
  const ModelStats &s = *r.stats;
  auto shown = [&](const Dimension &d, const char *unit) {
    std::string v = humanCount(asDouble(valueAt(r, d)), unit);
    if (d.isStatic()) return v;
    return v + "  (" + (d.expr() && !d.expr()->hasAnonymous ? named.text(d) : std::string("?")) + ")";
  };
  // A total that is not an expression: what is known of it, and that a part is not.
  auto total = [&](const Dimension &d, const Dimension &known, const char *unit) {
    if (d.isStatic() || (d.expr() && !d.expr()->hasAnonymous)) return shown(d, unit);
    return "at least " + shown(known, unit) + " + parts not known (notes)";
  };
  os << "total:\n";
  const Counts &t = s.total, &k = s.totalKnown;
  os << "  MACs          " << total(t.macs, k.macs, "MAC") << "\n";
  os << "  other FLOPs   " << total(t.flops, k.flops, "FLOP") << "\n";
  os << "  parameters    " << humanCount(double(s.params), "") << " ("
     << humanCount(double(s.paramBytes), "B") << ")\n";
  os << "  bytes read    " << total(t.readBytes, k.readBytes, "B") << "\n";
  os << "  bytes written " << total(t.writeBytes, k.writeBytes, "B") << "\n";
  if (!named.where.empty()) {
    os << "  where\n";
    for (const std::string &line : named.where) os << "    " << line << "\n";
  }
  if (r.device) {
    auto t = valueAt(r, s.total.timeNs);
    os << "  time on " << r.device->name << ": " << (t ? humanTime(double(*t)) : "?")
       << " (the sum of the nodes' roofline times)\n";
  }
}

/// The ten nodes with the largest `key` (times their runs) at the binding.
template <class Key>
void printTopNodes(const StatsReport &r, std::ostream &os, const char *title, Key key,
                   const char *unit) {
  std::vector<std::pair<double, const NodeStats *>> v;
  for (const NodeStats &n : r.stats->nodes) {
    auto runs = valueAt(r, n.runs);
    v.push_back({key(n) * asDouble(runs ? runs : std::optional<int64_t>(1)), &n});
  }
  std::stable_sort(v.begin(), v.end(),
                   [](const auto &a, const auto &b) { return a.first > b.first; });
  os << title << ":\n";
  for (size_t i = 0; i < std::min<size_t>(10, v.size()) && v[i].first > 0; ++i) {
    const NodeStats &n = *v[i].second;
    std::string label = (n.path.empty() ? "" : n.path + "/") + n.name;
    if (label.size() > 48) label = "..." + label.substr(label.size() - 45);
    os << "  " << std::left << std::setw(48) << label << " " << std::setw(22) << n.op << " "
       << humanCount(v[i].first, unit) << "\n";
  }
}

/// The op types by work (then bytes moved) at the binding: MACs, other FLOPs, bytes moved.
void printByOpType(const StatsReport &r, std::ostream &os) {
  const ModelStats &s = *r.stats;
  os << "by op type (MACs, other FLOPs, bytes moved):\n";
  std::vector<std::pair<double, std::string>> ops;
  for (const auto &[op, t] : s.byOpType)
    ops.push_back(
        {asDouble(valueAt(r, workOf(t.counts))) + asDouble(valueAt(r, trafficOf(t.counts))) * 1e-9,
         op});
  std::stable_sort(ops.begin(), ops.end(),
                   [](const auto &a, const auto &b) { return a.first > b.first; });
  for (const auto &[w, op] : ops) {
    const OpTypeStats &t = s.byOpType.at(op);
    os << "  " << std::left << std::setw(28) << op << std::right << std::setw(5) << t.count << "  "
       << std::left << std::setw(14) << humanCount(asDouble(valueAt(r, t.counts.macs)), "MAC")
       << std::setw(15) << humanCount(asDouble(valueAt(r, t.counts.flops)), "FLOP")
       << humanCount(asDouble(valueAt(r, trafficOf(t.counts))), "B") << "\n";
  }
}

} // namespace

void printStatsText(const StatsReport &r, std::ostream &os) {
  ExprScope scope = r.graph->enter();
  NamedTexts named = namedTotals(r);
  printShownAt(r, os);
  printTotals(r, named, os);
  printStatsRows(r, os);
  // Top nodes by MACs and by bytes, at the binding.
  printTopNodes(
      r, os, "top nodes by MACs",
      [&](const NodeStats &n) { return asDouble(valueAt(r, n.counts.macs)); }, "MAC");
  printTopNodes(
      r, os, "top nodes by bytes moved",
      [&](const NodeStats &n) { return asDouble(valueAt(r, trafficOf(n.counts))); }, "B");
  printByOpType(r, os);
  for (const std::string &n : r.stats->notes)
    os << "note: " << n << "\n";
}

} // namespace sf
