// The cases of a golden file for tests that walk every golden graph (lowering, memory plan, the
// executor's self-check): the text between `// -----` separators, with comment lines (the
// CHECK lines among them) left out.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace sf::golden {

inline std::vector<std::string> goldenCases(const std::filesystem::path &file) {
  std::ifstream in(file);
  std::vector<std::string> parts(1);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("// -----", 0) == 0) {
      parts.emplace_back();
      continue;
    }
    parts.back() += (line.rfind("//", 0) == 0 ? std::string() : line) + "\n";
  }
  return parts;
}

} // namespace sf::golden
