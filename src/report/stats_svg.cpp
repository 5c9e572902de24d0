// The statistics report's SVG picture (report/stats_report.h): work per op type, work per node
// along the graph, and the total's growth with one symbol.
#include "shapeflow/report/stats_report.h"

#include "stats_internal.h"

#include <algorithm>
#include <optional>
#include <sstream>

namespace sf {
using stats_detail::asDouble;
using stats_detail::valueAt;
using stats_detail::workOf;

namespace {

std::string xml(const std::string &s) {
  std::string out;
  for (char c : s) {
    switch (c) {
    case '&':
      out += "&amp;";
      break;
    case '<':
      out += "&lt;";
      break;
    case '>':
      out += "&gt;";
      break;
    case '"':
      out += "&quot;";
      break;
    default:
      out += c;
    }
  }
  return out;
}

/// The picture's body as it is drawn, top to bottom: `y` is where the next element goes.
struct SvgPage {
  static constexpr int width = 960, pad = 60, chartH = 160;
  std::ostringstream body;
  int y = 30;
};

void drawTitle(SvgPage &page, const std::string &t) {
  page.body << "<text x='" << page.pad << "' y='" << page.y
            << "' font-size='16' font-weight='bold'>" << xml(t) << "</text>\n";
  page.y += 14;
}

/// The op types by work at the report's binding, the largest first (14 at most), and the
/// largest work of all of them.
std::vector<std::pair<double, std::string>> opTypesByWork(const StatsReport &r, double &maxWork) {
  std::vector<std::pair<double, std::string>> ops;
  maxWork = 0;
  for (const auto &[op, t] : r.stats->byOpType) {
    double w = asDouble(valueAt(r, workOf(t.counts)));
    ops.push_back({w, op});
    maxWork = std::max(maxWork, w);
  }
  std::stable_sort(ops.begin(), ops.end(),
                   [](const auto &a, const auto &b) { return a.first > b.first; });
  if (ops.size() > 14) ops.resize(14);
  return ops;
}

/// Per op type: work (2 * MACs + other FLOPs) as horizontal bars.
void drawOpTypeBars(SvgPage &page, const StatsReport &r) {
  const int width = page.width, pad = page.pad;
  double maxWork = 0;
  auto ops = opTypesByWork(r, maxWork);
  std::ostringstream &body = page.body;
  int &y = page.y;
  y += 10;
  body << "<text x='" << pad << "' y='" << y
       << "' font-size='12'>operations per op type (2 x MACs + other FLOPs)</text>\n";
  y += 8;
  for (const auto &[w, op] : ops) {
    double len = maxWork > 0 ? w / maxWork * (width - 2 * pad - 260) : 0;
    body << "<text x='" << pad << "' y='" << y + 12 << "' font-size='11'>" << xml(op) << "</text>"
         << "<rect x='" << pad + 170 << "' y='" << y + 2 << "' width='" << std::max(len, 0.5)
         << "' height='12' fill='#4878a8'/>"
         << "<text x='" << pad + 176 + len << "' y='" << y + 12 << "' font-size='10'>"
         << xml(humanCount(w, "OP")) << "</text>\n";
    y += 16;
  }
}

/// Each node's work at the report's binding, times its runs, in graph order.
std::vector<double> nodeWorks(const StatsReport &r, double &maxNode) {
  std::vector<double> works;
  maxNode = 0;
  for (const NodeStats &n : r.stats->nodes) {
    auto runs = valueAt(r, n.runs);
    double w =
        asDouble(valueAt(r, workOf(n.counts))) * asDouble(runs ? runs : std::optional<int64_t>(1));
    works.push_back(w);
    maxNode = std::max(maxNode, w);
  }
  return works;
}

/// A node's column: red when it is memory-bound on the device, else blue.
std::string nodeColor(const StatsReport &r, const NodeStats &n) {
  std::string color = "#4878a8";
  if (r.device) {
    auto rf = roofline(n.counts, *r.device);
    if (rf.ok()) {
      auto c = valueAt(r, rf->computeNs), m = valueAt(r, rf->memoryNs);
      if (c && m && *m > *c) color = "#c0392b";
    }
  }
  return color;
}

/// Per node in graph order: work as columns; memory-bound nodes red (with a device).
void drawNodeColumns(SvgPage &page, const StatsReport &r) {
  const int width = page.width, pad = page.pad, chartH = page.chartH;
  const ModelStats &s = *r.stats;
  std::ostringstream &body = page.body;
  int &y = page.y;
  y += 24;
  body << "<text x='" << pad << "' y='" << y
       << "' font-size='12'>operations per node, in graph order"
       << (r.device ? " (red: memory-bound on " + xml(r.device->name) + ")" : std::string())
       << "</text>\n";
  y += 8;
  double maxNode = 0;
  std::vector<double> works = nodeWorks(r, maxNode);
  double colW = s.nodes.empty() ? 1 : double(width - 2 * pad) / double(s.nodes.size());
  body << "<rect x='" << pad << "' y='" << y << "' width='" << width - 2 * pad << "' height='"
       << chartH << "' fill='none' stroke='#ccc'/>\n";
  for (size_t i = 0; i < s.nodes.size(); ++i) {
    double h = maxNode > 0 ? works[i] / maxNode * chartH : 0;
    if (h <= 0) continue;
    std::string color = nodeColor(r, s.nodes[i]);
    body << "<rect x='" << pad + colW * double(i) << "' y='" << y + chartH - h << "' width='"
         << std::max(colW * 0.9, 0.3) << "' height='" << h << "' fill='" << color << "'><title>"
         << xml(s.nodes[i].name + " (" + s.nodes[i].op + "): " + humanCount(works[i], "OP"))
         << "</title></rect>\n";
  }
  y += chartH + 10;
}

using NamedSymbols = std::vector<std::pair<std::string, Interval>>;

/// The names of the symbols the total MACs depend on.
std::vector<std::string> symbolsOfTotal(const StatsReport &r) {
  const Dimension &macs = r.stats->total.macs;
  std::vector<std::string> used;
  if (!macs.isStatic() && macs.expr() && !macs.expr()->hasAnonymous)
    for (SymbolId id : symbolsOf(macs.expr()))
      used.push_back(symbolInfo(id).name);
  return used;
}

/// The symbol the growth curve sweeps: --sweep, else the first symbol the total depends on that
/// --at does not fix, else the first one it depends on.
std::optional<std::pair<std::string, Interval>>
sweptSymbol(const StatsReport &r, const NamedSymbols &syms, const std::vector<std::string> &used) {
  std::optional<std::pair<std::string, Interval>> swept;
  for (const auto &[name, range] : syms) {
    bool mentioned = std::find(used.begin(), used.end(), name) != used.end();
    if (!r.sweep.empty() ? name == r.sweep : mentioned && !r.at.count(name)) {
      swept = {name, range};
      break;
    }
  }
  if (!swept && r.sweep.empty())
    for (const auto &[name, range] : syms)
      if (std::find(used.begin(), used.end(), name) != used.end()) {
        swept = {name, range};
        break;
      }
  return swept;
}

/// `M=1, K=64`: the other symbols the total depends on, at the report's binding.
std::string otherSymbolsText(const StatsReport &r, const std::string &name,
                             const NamedSymbols &syms, const std::vector<std::string> &used) {
  std::string others;
  for (const auto &[other, otherRange] : syms) {
    if (other == name || std::find(used.begin(), used.end(), other) == used.end()) continue;
    auto it = r.at.find(other);
    others += (others.empty() ? "" : ", ") + other + "=" +
              std::to_string(it != r.at.end() ? it->second : otherRange.lo);
  }
  return others;
}

/// The total MACs at 33 values of `name` from `lo` to `hi`, and the largest of them.
std::vector<std::pair<double, double>> growthPoints(const StatsReport &r, const std::string &name,
                                                    int64_t lo, int64_t hi, double &maxV) {
  std::vector<std::pair<double, double>> pts;
  maxV = 0;
  for (int i = 0; i <= 32; ++i) {
    int64_t v = lo + (hi - lo) * i / 32;
    StatsReport at = r;
    at.at[name] = v;
    double m = asDouble(valueAt(at, r.stats->total.macs));
    pts.push_back({double(v), m});
    maxV = std::max(maxV, m);
  }
  return pts;
}

/// The total's growth with `name` between its bounds (an unbounded one to 16 times its lower
/// end, at least 1024), the other symbols at the binding.
void drawGrowthCurve(SvgPage &page, const StatsReport &r, const std::string &name,
                     const Interval &range, const NamedSymbols &syms,
                     const std::vector<std::string> &used) {
  const int width = page.width, pad = page.pad, chartH = page.chartH;
  std::ostringstream &body = page.body;
  int &y = page.y;
  int64_t lo = std::max<int64_t>(range.lo, 1);
  int64_t hi = range.hi == kInf ? std::max<int64_t>(lo * 16, 1024) : range.hi;
  std::string others = otherSymbolsText(r, name, syms, used);
  y += 24;
  body << "<text x='" << pad << "' y='" << y << "' font-size='12'>total MACs as " << xml(name)
       << " goes from " << lo << " to " << hi
       << xml(others.empty() ? std::string() : " (" + others + ")") << "</text>\n";
  y += 8;
  double maxV = 0;
  std::vector<std::pair<double, double>> pts = growthPoints(r, name, lo, hi, maxV);
  body << "<rect x='" << pad << "' y='" << y << "' width='" << width - 2 * pad << "' height='"
       << chartH
       << "' fill='none' stroke='#ccc'/>\n<polyline fill='none' stroke='#4878a8' "
          "stroke-width='2' points='";
  for (const auto &[v, m] : pts) {
    double px = pad + (hi > lo ? (v - double(lo)) / double(hi - lo) : 0) * (width - 2 * pad);
    double py = y + chartH - (maxV > 0 ? m / maxV * chartH : 0);
    body << px << "," << py << " ";
  }
  body << "'/>\n<text x='" << pad << "' y='" << y + chartH + 14 << "' font-size='10'>" << lo
       << "</text><text x='" << width - pad - 40 << "' y='" << y + chartH + 14
       << "' font-size='10'>" << hi << "</text><text x='" << pad + 4 << "' y='" << y + 12
       << "' font-size='10'>" << xml(humanCount(maxV, "MAC")) << "</text>\n";
  y += chartH + 20;
}

} // namespace

std::string statsSvg(const StatsReport &r) {
  ExprScope scope = r.graph->enter();
  SvgPage page;
  drawTitle(page, "Where the work goes: " + r.model);
  drawOpTypeBars(page, r);
  drawNodeColumns(page, r);
  // A symbolic model: the total's growth with one symbol between its bounds (--sweep, else the
  // first symbol the total depends on that --at does not fix), the others at the binding.
  NamedSymbols syms = r.graph->symbols.namedSymbols();
  std::vector<std::string> used = symbolsOfTotal(r);
  if (auto swept = sweptSymbol(r, syms, used))
    drawGrowthCurve(page, r, swept->first, swept->second, syms, used);
  std::ostringstream svg;
  svg << "<svg xmlns='http://www.w3.org/2000/svg' width='" << page.width << "' height='"
      << page.y + 20 << "' font-family='sans-serif'>\n<rect width='100%' height='100%' "
      << "fill='white'/>\n" << page.body.str() << "</svg>\n";
  return svg.str();
}

} // namespace sf
