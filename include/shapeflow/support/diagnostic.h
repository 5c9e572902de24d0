// Diagnostics collected during loading and inference: each names the node and op it is about.
#pragma once

#include <string>
#include <vector>

namespace sf {

/// Assumption: something inference took to be true that the model does not guarantee (a named
/// dim is at least 1, a computed Reshape entry is not 0, the branches of an If disagree on a
/// size); listed with the diagnostics, an error with --strict (promoteAssumptions).
enum class Severity { Error, Warning, Note, Assumption };

struct Diagnostic {
  Severity severity = Severity::Error;
  std::string node; // node name ("" for graph-level)
  std::string op;   // op type ("" for graph-level)
  std::string message;
};

const char *toString(Severity s);
/// `node 'concat_3' (Concat): message` or just the message when there is no node.
std::string format(const Diagnostic &d);

class Diagnostics {
public:
  void add(Diagnostic d) { list_.push_back(std::move(d)); }
  void error(std::string node, std::string op, std::string message) {
    add({Severity::Error, std::move(node), std::move(op), std::move(message)});
  }
  void warning(std::string node, std::string op, std::string message) {
    add({Severity::Warning, std::move(node), std::move(op), std::move(message)});
  }
  void assumption(std::string node, std::string op, std::string message) {
    add({Severity::Assumption, std::move(node), std::move(op), std::move(message)});
  }
  const std::vector<Diagnostic> &list() const { return list_; }
  /// `--strict`: every assumption becomes an error; returns how many there were.
  size_t promoteAssumptions();
  size_t errorCount() const;
  bool hasErrors() const { return errorCount() > 0; }

private:
  std::vector<Diagnostic> list_;
};

} // namespace sf
