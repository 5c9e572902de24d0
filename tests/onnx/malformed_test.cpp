// The committed corpus of malformed models (tests/onnx/malformed/, made by make_corpus.py):
// every file must give an error naming the file and saying what is wrong, never a crash.
#include "shapeflow/onnx/wire.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <set>

namespace fs = std::filesystem;
using namespace sf::onnx;

namespace {

struct Case {
  std::string file, stage, expected;
};

std::string trim(const std::string &s) {
  size_t b = s.find_first_not_of(' '), e = s.find_last_not_of(' ');
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

std::vector<Case> loadManifest(const fs::path &dir) {
  std::vector<Case> out;
  std::ifstream in(dir / "expected.txt");
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    size_t a = line.find(" | "), b = line.find(" | ", a + 3);
    if (a == std::string::npos || b == std::string::npos) continue;
    out.push_back(
        {trim(line.substr(0, a)), trim(line.substr(a + 3, b - a - 3)), line.substr(b + 3)});
  }
  return out;
}

/// The file read as loadModelFile reads it (the main graph's nodes left encoded, then decoded
/// one at a time): the first error, with the file's name in front as the reader puts it.
std::optional<std::string> deferredError(const std::string &path) {
  auto m = readModelFile(path, {}, ReadOptions{.deferNodes = true});
  if (!m.ok()) return m.error().message;
  if (auto nodes = NodeDecoder(*m).decodeAll(); !nodes.ok()) return path + ": " + nodes.error().message;
  return std::nullopt;
}

} // namespace

TEST(MalformedCorpus, EveryFileFailsWithItsMessage) {
  fs::path dir = SF_ONNX_TEST_DIR "/malformed";
  std::vector<Case> cases = loadManifest(dir);
  ASSERT_GE(cases.size(), 40u);
  std::set<std::string> listed;
  for (const Case &c : cases) {
    SCOPED_TRACE(c.file);
    listed.insert(c.file);
    std::string path = (dir / c.file).string();
    auto m = readModelFile(path);
    if (c.stage == "read") {
      ASSERT_FALSE(m.ok()) << "read without error";
      const std::string &message = m.error().message;
      EXPECT_EQ(0u, message.find(path + ": ")) << message;
      EXPECT_NE(std::string::npos, message.find(c.expected)) << message;
      EXPECT_NE(std::string::npos, message.find("(at byte ")) << message;
      // Read with the nodes left encoded, the same error, word for word, wherever it is found.
      EXPECT_EQ(message, deferredError(path).value_or("(no error)"));
      continue;
    }
    ASSERT_EQ("data", c.stage);
    ASSERT_TRUE(m.ok()) << m.error().message;
    EXPECT_EQ(std::nullopt, deferredError(path));
    std::string errors;
    for (const TensorView &t : m->graph.initializers) {
      auto bytes = tensorBytes(t, *m);
      auto values = decodeFloats(t, *m, 1 << 20);
      EXPECT_EQ(bytes.ok(), values.ok());
      if (!bytes.ok()) errors += bytes.error().message + "\n";
    }
    EXPECT_NE(std::string::npos, errors.find(c.expected)) << errors;
  }
  // Every model in the folder is listed, so none is silently untested.
  for (const auto &entry : fs::directory_iterator(dir))
    if (entry.path().extension() == ".onnx") {
      EXPECT_TRUE(listed.count(entry.path().filename().string())) << entry.path();
    }
}
