// libFuzzer harness: the text form (docs/TEXT_FORMAT.md). Whatever parses must print, reparse to
// the same printed text, and infer without crashing; everything else must fail with an error.
// Seeds: the golden graphs (scripts/fuzz.sh). Build and run: scripts/fuzz.sh.
#include "shapeflow/infer/infer.h"
#include "shapeflow/ir/text.h"
#include "shapeflow/report/report.h"

#include <sstream>

#include <cstdio>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string_view text(reinterpret_cast<const char *>(data), size);
  auto g = sf::parseGraph(text);
  if (!g.ok()) return 0;
  std::string printed = sf::printGraph(*g);
  auto back = sf::parseGraph(printed);
  if (!back.ok()) {
    std::fprintf(stderr, "printed text does not parse: %s\n%s\n", back.error().message.c_str(),
                 printed.c_str());
    std::abort();
  }
  if (sf::printGraph(*back) != printed) {
    std::fprintf(stderr, "reprinted text differs:\n%s\n", printed.c_str());
    std::abort();
  }
  sf::Diagnostics diags;
  sf::InferStats stats = sf::inferGraph(*g, diags);
  // The streamed JSON the CLI prints parses to the document toJson() builds, names on and off;
  // the listing prints.
  for (bool names : {true, false}) {
    sf::Report report{"fuzz", &*g, &diags, stats, names};
    // The document as printed (bytes that are not UTF-8 replaced, as the streamed text has them).
    nlohmann::json doc = nlohmann::json::parse(sf::jsonText(sf::toJson(report)), nullptr, false);
    std::ostringstream os;
    sf::writeJson(report, os, 0);
    if (nlohmann::json::parse(os.str(), nullptr, false) != doc) {
      std::fprintf(stderr, "the streamed JSON differs from the document:\n%s\n", printed.c_str());
      std::abort();
    }
    std::ostringstream text;
    sf::printText(report, text);
  }
  return 0;
}
