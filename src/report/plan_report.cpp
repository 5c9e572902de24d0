// The memory plan report (report/plan_report.h).
#include "shapeflow/report/plan_report.h"

#include "shapeflow/report/json_writer.h"
#include "shapeflow/report/names.h"
#include "shapeflow/report/report.h"
#include "shapeflow/report/stats_report.h"
#include "shapeflow/support/format.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <sstream>
#include <unordered_map>

namespace sf {

using namespace lower;

namespace {

/// The sizes the text and the picture show: the report's shown binding, else `at` over the
/// plan's reference.
std::map<std::string, int64_t> shownSizes(const PlanReport &r) {
  std::map<std::string, int64_t> b = r.plan->reference;
  for (const auto *over : {&r.shown, &r.at})
    for (const auto &[k, v] : *over) b[k] = v;
  return b;
}

std::string bindingText(const PlanReport &r) {
  if (!r.shownNote.empty()) {
    // Sizes inside the model that no input names (a declared P): at the plan's reference.
    std::string others;
    for (const auto &[k, v] : r.plan->reference)
      if (!r.shown.count(k) && !r.at.count(k) && k.rfind("_", 0) != 0)
        others += fmt::format("{}{}={}", others.empty() ? "" : ", ", k, v);
    return others.empty() ? r.shownNote : r.shownNote + "; " + others + " (the plan's reference)";
  }
  std::map<std::string, int64_t> b = shownSizes(r);
  std::string s;
  for (const auto &[k, v] : b)
    s += (s.empty() ? "" : ", ") + k + "=" + std::to_string(v);
  return s;
}


} // namespace

std::vector<size_t> definitionOrder(const MemoryPlan &p) {
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < p.derived.size(); ++i) index[p.derived[i].first] = i;
  std::vector<size_t> order;
  std::vector<int> state(p.derived.size(), 0); // 0 unseen, 1 in progress, 2 done
  std::function<void(size_t)> visit = [&](size_t i) {
    if (state[i]) return;
    state[i] = 1;
    if (const Dimension &d = p.derived[i].second; d.expr())
      for (SymbolId s : symbolsOf(d.expr()))
        if (auto it = index.find(symbolInfo(s).name); it != index.end() && state[it->second] == 0) visit(it->second);
    state[i] = 2;
    order.push_back(i);
  };
  for (size_t i = 0; i < p.derived.size(); ++i) visit(i);
  return order;
}

std::string planJsonText(const PlanReport &r, int indent) {
  ExprScope scope = r.graph->enter();
  const MemoryPlan &p = *r.plan;
  DimTexts texts;
  std::string s;
  JsonWriter w(s, indent);
  w.beginObject();
  w.key("model").value(r.model);
  writeSymbolsJson(w, *r.graph);
  w.key("derived").beginObject(); // each defined before an expression uses it
  for (size_t i : definitionOrder(p)) {
    w.key(p.derived[i].first);
    writeDimJson(w, p.derived[i].second, texts);
  }
  w.endObject();
  w.key("align").value(p.align);
  w.key("symbolic").value(p.symbolic);
  w.key("reference").beginObject();
  for (const auto &[name, v] : p.reference)
    w.key(name).value(v);
  w.endObject();
  w.key("order").beginArray();
  for (const std::string &n : p.order)
    w.value(n);
  w.endArray();
  w.key("peak"), writeDimJson(w, p.peak, texts);
  w.key("lower_bound"), writeDimJson(w, p.lowerBound, texts);
  w.key("lower_bound_model_order"), writeDimJson(w, p.lowerBoundModelOrder, texts);
  if (!r.at.empty()) {
    // The numbers at --at (named sizes not given: the reference's).
    PlanValues valueAt(p, r.at);
    w.key("at").beginObject();
    for (const auto &[name, v] : r.at) w.key(name).value(v);
    w.endObject();
    w.key("at_values").beginObject();
    for (auto [key, d] : {std::pair{"peak", &p.peak}, std::pair{"lower_bound", &p.lowerBound}}) {
      w.key(key);
      if (auto v = valueAt(*d)) w.value(*v);
      else w.null();
    }
    w.endObject();
  }
  w.key("shape_value_bytes").value(p.shapeValueBytes);
  w.key("bounded_offsets").value(uint64_t(p.boundedOffsets));
  w.key("buffers").beginArray();
  for (const Slot &slot : p.slots) {
    w.beginObject();
    w.key("tensor").value(slot.tensor);
    w.key("bytes"), writeDimJson(w, slot.bytes, texts);
    w.key("size"), writeDimJson(w, slot.size, texts);
    w.key("offset"), writeDimJson(w, slot.offset, texts);
    w.key("first").value(uint64_t(slot.first));
    w.key("last").value(uint64_t(slot.last));
    if (slot.sharesWith) {
      w.key("in_place_of").value(p.slots[*slot.sharesWith].tensor);
      w.key("reuse").value(toString(slot.reuse));
    }
    if (slot.body) w.key("body").value(true);
    w.endObject();
  }
  w.endArray();
  w.endObject();
  return s;
}

std::vector<std::string> planLines(const PlanReport &r) {
  PlanValues valueAt(*r.plan, shownSizes(r));
  ExprScope scope = r.graph->enter();
  const MemoryPlan &p = *r.plan;
  std::vector<std::string> out;
  // The peak and the bounds short, what they share and their long parts named (`R1 = ...`).
  NamedTexts named = nameForPrinting(*r.graph, {p.peak, p.lowerBound, p.lowerBoundModelOrder}, 72);
  auto shown = [&](const Dimension &d) {
    auto v = valueAt(d);
    std::string text = v ? humanCount(double(*v), "B") : std::string("?");
    if (!d.isStatic()) text += "  (" + named.text(d) + ")";
    return text;
  };
  size_t owners = 0, shared = 0;
  for (const Slot &s : p.slots)
    (s.sharesWith ? shared : owners)++;
  out.push_back(fmt::format("{} steps, {} buffers in the arena ({} more share a buffer), aligned to {}",
                            p.order.size(), owners, shared, p.align));
  if (p.symbolic) out.push_back("sizes are expressions; numbers at " + bindingText(r));
  out.push_back("peak                     " + shown(p.peak));
  // The worst case over the sizes' ranges beside the binding's number.
  if (p.symbolic) {
    std::string worst = p.peak.hasUpperBound() ? humanCount(double(p.peak.maxLength()), "B")
                                               : std::string("unbounded (give the sizes ranges: --dim SYM=LO..HI)");
    out.push_back("peak over every size     at most " + worst);
  }
  out.push_back("lower bound (this order) " + shown(p.lowerBound));
  if (!(p.lowerBoundModelOrder == p.lowerBound))
    out.push_back("lower bound (model order) " + shown(p.lowerBoundModelOrder));
  auto peak = valueAt(p.peak), lb = valueAt(p.lowerBound);
  if (peak && lb && *lb > 0)
    out.push_back(fmt::format("peak / lower bound        {:.4f}", double(*peak) / double(*lb)));
  if (!named.where.empty()) out.push_back("where");
  for (const std::string &line : named.where) out.push_back("  " + line);
  if (p.boundedOffsets)
    out.push_back(fmt::format("{} offsets grew too large as expressions and are constant bounds "
                              "(valid for every binding, wasteful at small ones)",
                              p.boundedOffsets));
  if (p.shapeValueBytes)
    out.push_back(fmt::format("shape values (kept apart) {}",
                              humanCount(double(p.shapeValueBytes), "B")));
  out.push_back("buffers (offset, size, steps):");
  for (const Slot &s : p.slots) {
    auto off = valueAt(s.offset), size = valueAt(s.size);
    std::string line = fmt::format("  {:>12} {:>10}  {:>4}..{:<4} {}", off ? std::to_string(*off) : "?",
                                   size ? std::to_string(*size) : "?", s.first, s.last, s.tensor);
    if (s.sharesWith)
      line += fmt::format(" ({} of {})", toString(s.reuse), p.slots[*s.sharesWith].tensor);
    if (s.body) line += " (a body's arena)";
    out.push_back(line);
  }
  if (!p.derived.empty()) out.push_back("derived symbols:");
  for (size_t i : definitionOrder(p))
    out.push_back(fmt::format("  {} = {}", p.derived[i].first,
                              p.derived[i].second.expr() ? toString(p.derived[i].second.expr())
                                                         : p.derived[i].second.toString()));
  return out;
}

std::string planSvg(const PlanReport &r) {
  PlanValues valueAt(*r.plan, shownSizes(r));
  ExprScope scope = r.graph->enter();
  const MemoryPlan &p = *r.plan;
  const int width = 960, height = 540, pad = 60;
  auto peak = valueAt(p.peak).value_or(0), lb = valueAt(p.lowerBound).value_or(0);
  double steps = std::max<double>(1, double(p.order.size()));
  double top = std::max<double>(1, double(peak));
  double w = width - 2 * pad, h = height - 2 * pad;
  std::ostringstream svg;
  svg << "<svg xmlns='http://www.w3.org/2000/svg' width='" << width << "' height='" << height + 40
      << "' font-family='sans-serif'>\n<rect width='100%' height='100%' fill='white'/>\n";
  std::string title = "Memory plan: " + r.model + (p.symbolic ? " at " + bindingText(r) : "");
  std::string esc;
  for (char c : title)
    esc += c == '<' ? std::string("&lt;") : c == '&' ? std::string("&amp;") : std::string(1, c);
  svg << "<text x='" << pad << "' y='24' font-size='15' font-weight='bold'>" << esc << "</text>\n";
  svg << "<rect x='" << pad << "' y='" << pad << "' width='" << w << "' height='" << h
      << "' fill='none' stroke='#ccc'/>\n";
  static const char *kColors[] = {"#4878a8", "#e49444", "#5ba053", "#d1605e", "#85b6b2",
                                  "#e7ca60", "#a87c9f", "#f1a2a9", "#967662", "#b8b0ac"};
  size_t color = 0;
  for (const Slot &s : p.slots) {
    if (s.sharesWith) continue;
    auto off = valueAt(s.offset), size = valueAt(s.size);
    if (!off || !size || *size == 0) continue;
    double x = pad + double(s.first) / steps * w;
    double x2 = pad + double(s.last + 1) / steps * w;
    double y2 = pad + h - double(*off) / top * h;
    double y = pad + h - double(*off + *size) / top * h;
    std::string label;
    for (char c : s.tensor)
      label += c == '<' ? std::string("&lt;") : c == '&' ? std::string("&amp;") : c == '\'' ? std::string("&apos;") : std::string(1, c);
    svg << "<rect x='" << x << "' y='" << y << "' width='" << std::max(0.5, x2 - x)
        << "' height='" << std::max(0.5, y2 - y) << "' fill='" << kColors[color++ % 10]
        << "' fill-opacity='0.8' stroke='white' stroke-width='0.3'><title>" << label << ": "
        << humanCount(double(*size), "B") << " at " << *off << ", steps " << s.first << ".."
        << s.last << "</title></rect>\n";
  }
  svg << "<line x1='" << pad << "' x2='" << pad + w << "' y1='" << pad << "' y2='" << pad
      << "' stroke='#d1605e' stroke-dasharray='4 3'/>\n";
  svg << "<text x='" << pad + w - 220 << "' y='" << pad - 6 << "' font-size='11' fill='#d1605e'>peak "
      << humanCount(double(peak), "B") << " (lower bound " << humanCount(double(lb), "B")
      << ")</text>\n";
  svg << "<text x='" << pad << "' y='" << pad + h + 18 << "' font-size='11'>execution step: 0 .. "
      << p.order.size() << "</text>\n";
  svg << "<text x='" << 8 << "' y='" << pad + 10 << "' font-size='11'>address</text>\n";
  svg << "</svg>\n";
  return svg.str();
}

} // namespace sf
