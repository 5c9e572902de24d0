// The run and check reports (report/run_report.h).
#include "shapeflow/report/run_report.h"

#include "shapeflow/eval/npy.h"
#include "shapeflow/report/stats_report.h"
#include "shapeflow/support/format.h"

#include <algorithm>
#include <cctype>

namespace sf {
namespace {

using nlohmann::json;

/// One tensor's summary (and its .npy under `outDir`).
Result<json> summarize(const Tensor &t, const std::string &stem, const std::string &outDir) {
  json o;
  o["dtype"] = shortName(t.type());
  o["shape"] = t.shape();
  if ((isFloat(t.type()) || isInteger(t.type()) || t.type() == ElementType::Bool) && !isComplex(t.type())) {
    auto v = t.toDoubles(size_t(t.elementCount()));
    if (v.ok() && !v->empty()) {
      double lo = (*v)[0], hi = (*v)[0], sum = 0;
      for (double x : *v) lo = std::min(lo, x), hi = std::max(hi, x), sum += x;
      o["min"] = lo, o["max"] = hi, o["mean"] = sum / double(v->size());
    }
  }
  if (!outDir.empty()) {
    std::string file = outDir + "/" + outputFileName(stem);
    SF_TRY(eval::writeNpy(file, t));
    o["file"] = file;
  }
  return o;
}

std::string outputLine(const std::string &name, const json &o) {
  std::string text = fmt::format("  {}  {}{}", name, o["dtype"].get<std::string>(), o["shape"].dump());
  if (o.contains("min"))
    text += fmt::format("  min {:.6g}  max {:.6g}  mean {:.6g}", o["min"].get<double>(), o["max"].get<double>(),
                        o["mean"].get<double>());
  if (o.contains("file")) text += "  -> " + o["file"].get<std::string>();
  return text;
}

} // namespace

std::string outputFileName(const std::string &name) {
  std::string s;
  for (char c : name) s += (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.') ? c : '_';
  return (s.empty() ? "output" : s) + ".npy";
}

Result<json> runJson(const RunReport &r) {
  const eval::RunResult &result = *r.result;
  json j;
  j["model"] = r.model;
  j["nodes_run"] = result.nodesRun;
  j["peak_bytes"] = result.peakBytes;
  j["ms"] = r.ms;
  if (r.medianMs) j["median_ms"] = *r.medianMs, j["repeat"] = r.repeat;
  j["threads"] = r.threads;
  j["blocked_tensors"] = result.blockedTensors;
  j["channels_last_tensors"] = result.channelsLastTensors;
  if (r.session) {
    json rewrites = json::object();
    for (const auto &p : r.session->rewrites) rewrites[p.name] = p.rewrites;
    j["rewrites"] = rewrites;
  }
  if (result.arena) {
    const eval::ArenaUse &u = *result.arena;
    j["arena"] = {{"bytes", u.bytes},       {"placed", u.placed},         {"in_place", u.inPlace},
                  {"elsewhere", u.elsewhere}, {"conflicts", u.conflicts}, {"refused", u.refused},
                  {"plan_ms", r.session ? r.session->planMs : 0.0}};
  } else {
    std::string why = r.session ? r.session->noArena : "not asked for";
    if (r.session && r.session->arena)
      why = fmt::format("an arena of {} bytes does not fit the memory budget", r.session->arena->bytes);
    j["arena"] = {{"none", why}};
  }
  // Per op, slowest first: ms per run in its kernels and in the checks against the shape rules.
  if (r.profile) {
    std::vector<std::pair<std::string, eval::OpTime>> byTime(r.profile->begin(), r.profile->end());
    std::sort(byTime.begin(), byTime.end(), [](const auto &x, const auto &y) {
      return x.second.kernelMs + x.second.checkMs > y.second.kernelMs + y.second.checkMs;
    });
    j["profile"] = json::array();
    for (const auto &[op, t] : byTime)
      j["profile"].push_back({{"op", op}, {"calls", double(t.calls) / r.profileRuns},
                              {"kernel_ms", t.kernelMs / r.profileRuns}, {"check_ms", t.checkMs / r.profileRuns}});
  }
  j["outputs"] = json::array();
  for (size_t i = 0; i < result.outputs.size(); ++i) {
    const Value &v = result.outputs[i];
    const std::string &name = result.outputNames[i];
    json o;
    if (v.isTensor()) {
      SF_ASSIGN(o, summarize(*v, name, r.outDir));
    } else if (v.isSequence()) {
      o["kind"] = "sequence";
      o["dtype"] = shortName(v.elementType());
      o["elements"] = json::array();
      for (size_t k = 0; k < v.elements().size(); ++k) {
        SF_ASSIGN(json e, summarize(*v.elements()[k], name + "_" + std::to_string(k), r.outDir));
        o["elements"].push_back(e);
      }
    } else {
      o["kind"] = v.isNone() ? "none" : "absent";
    }
    o["name"] = name;
    j["outputs"].push_back(o);
  }
  return j;
}

void printRun(const json &j, std::ostream &os) {
  os << fmt::format("ran {} nodes in {:.1f} ms, peak {} of tensors", j["nodes_run"].get<size_t>(),
                    j["ms"].get<double>(), humanCount(double(j["peak_bytes"].get<int64_t>()), "B"));
  if (j.contains("median_ms"))
    os << fmt::format("; median of {} more runs {:.1f} ms", j["repeat"].get<int>(), j["median_ms"].get<double>());
  os << "\n";
  const json &a = j["arena"];
  if (a.contains("bytes"))
    os << fmt::format("arena {} (the memory plan at these sizes): {} tensors at their offsets, {} of them in "
                      "place; {} elsewhere, {} refused\n",
                      humanCount(double(a["bytes"].get<int64_t>()), "B"), a["placed"].get<size_t>(),
                      a["in_place"].get<size_t>(), a["elsewhere"].get<size_t>(), a["conflicts"].get<size_t>());
  else
    os << "no arena: " << a["none"].get<std::string>() << "\n";
  if (j.contains("profile")) {
    os << fmt::format("time per op, ms per run ({}):\n",
                      j.contains("repeat") ? "mean of the repeated runs" : "one run");
    for (const auto &p : j["profile"])
      os << fmt::format("  {:<24} {:>7.0f} calls {:>9.2f} kernel {:>8.2f} check\n", p["op"].get<std::string>(),
                        p["calls"].get<double>(), p["kernel_ms"].get<double>(), p["check_ms"].get<double>());
  }
  for (const auto &o : j["outputs"]) {
    std::string name = o["name"].get<std::string>();
    if (!o.contains("kind")) {
      os << outputLine(name, o) << "\n";
    } else if (o["kind"] == "sequence") {
      os << fmt::format("  {}  sequence of {} {}\n", name, o["elements"].size(), o["dtype"].get<std::string>());
      for (size_t k = 0; k < o["elements"].size(); ++k)
        os << "  " << outputLine(fmt::format("[{}]", k), o["elements"][k]) << "\n";
    } else {
      os << fmt::format("  {}  {}\n", name, o["kind"].get<std::string>());
    }
  }
}

json checkJson(const std::string &model, const eval::CheckResult &r) {
  json j;
  j["model"] = model;
  j["requested"] = r.requested;
  j["ran"] = r.ran();
  j["passed"] = r.passed();
  if (!r.drawFailure.empty()) j["draw_failure"] = r.drawFailure;
  j["mismatches"] = r.mismatches();
  j["samples"] = json::array();
  for (const auto &s : r.samples) {
    json x;
    x["binding"] = s.binding;
    x["ran"] = s.ran;
    if (!s.error.empty()) x["error"] = s.error;
    x["tensors"] = s.tensors;
    x["mismatches"] = s.mismatches;
    j["samples"].push_back(x);
  }
  return j;
}

void printCheck(const eval::CheckResult &r, std::ostream &os) {
  for (const auto &s : r.samples) {
    std::string binding;
    for (const auto &[k, v] : s.binding) binding += fmt::format("{}{}={}", binding.empty() ? "" : ", ", k, v);
    os << fmt::format("sample {}: {} tensors checked, {} mismatches{}\n", binding.empty() ? "(static)" : binding,
                      s.tensors, s.mismatches.size(), s.ran ? "" : " (stopped: " + s.error + ")");
    for (const auto &m : s.mismatches) os << "  MISMATCH " << m << "\n";
  }
  if (!r.drawFailure.empty())
    os << fmt::format("only {} admissible sizes were found for {} samples; the draws broke: {}\n", r.samples.size(),
                      r.requested, r.drawFailure);
  os << fmt::format("{} of {} samples ran; {} mismatches{}\n", r.ran(), r.requested, r.mismatches(),
                    r.passed() ? "" : ": FAILED (every sample asked for must run and agree)");
}

} // namespace sf
