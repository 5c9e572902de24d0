// Diagnostics: formatting names the node and op once; counting errors ignores warnings and notes.
#include "shapeflow/support/diagnostic.h"

#include <gtest/gtest.h>

namespace sf {
namespace {

TEST(Diagnostic, SeverityNames) {
  EXPECT_STREQ(toString(Severity::Error), "error");
  EXPECT_STREQ(toString(Severity::Warning), "warning");
  EXPECT_STREQ(toString(Severity::Note), "note");
}

TEST(Diagnostic, FormatTable) {
  struct Case {
    Diagnostic d;
    std::string expected;
  } cases[] = {
      // The design notes' example, verbatim.
      {{Severity::Error, "concat_3", "Concat",
        "input 1 has rank 3, expected 4 (f32[N,2,3,?{1..5}] vs f32[?{1..5},?{1..5},?{1..5}])"},
       "node 'concat_3' (Concat): input 1 has rank 3, expected 4 (f32[N,2,3,?{1..5}] vs "
       "f32[?{1..5},?{1..5},?{1..5}])"},
      {{Severity::Error, "", "", "graph has no outputs"}, "graph has no outputs"},
      {{Severity::Warning, "n1", "", "unused attribute"}, "node 'n1': unused attribute"},
      {{Severity::Note, "relu", "Relu", "kept loose"}, "node 'relu' (Relu): kept loose"},
      {{Severity::Error, "", "", ""}, ""},
  };
  for (const auto &c : cases) EXPECT_EQ(format(c.d), c.expected);
}

// Graph-level op diagnostics (no node name) are not specified beyond "just the message when there
// is no node"; whatever the prefix, the message itself must be there in full, at the end.
TEST(Diagnostic, FormatWithOpButNoNodeKeepsMessage) {
  std::string s = format({Severity::Error, "", "Loop", "body has no outputs"});
  ASSERT_GE(s.size(), std::string("body has no outputs").size());
  EXPECT_EQ(s.substr(s.size() - std::string("body has no outputs").size()), "body has no outputs");
}

TEST(Diagnostics, CollectsInOrderAndCountsErrors) {
  Diagnostics ds;
  EXPECT_FALSE(ds.hasErrors());
  EXPECT_EQ(ds.errorCount(), 0u);
  ds.warning("a", "Add", "w1");
  EXPECT_FALSE(ds.hasErrors());
  ds.error("b", "Mul", "e1");
  ds.add({Severity::Note, "", "", "n1"});
  ds.error("", "", "e2");
  EXPECT_TRUE(ds.hasErrors());
  EXPECT_EQ(ds.errorCount(), 2u);
  ASSERT_EQ(ds.list().size(), 4u);
  EXPECT_EQ(ds.list()[0].severity, Severity::Warning);
  EXPECT_EQ(ds.list()[0].node, "a");
  EXPECT_EQ(ds.list()[0].op, "Add");
  EXPECT_EQ(ds.list()[0].message, "w1");
  EXPECT_EQ(ds.list()[1].severity, Severity::Error);
  EXPECT_EQ(format(ds.list()[1]), "node 'b' (Mul): e1");
  EXPECT_EQ(ds.list()[2].severity, Severity::Note);
  EXPECT_EQ(format(ds.list()[3]), "e2");
}

TEST(Diagnostics, DefaultSeverityIsError) {
  Diagnostic d;
  EXPECT_EQ(d.severity, Severity::Error);
  Diagnostics ds;
  ds.add(d);
  EXPECT_EQ(ds.errorCount(), 1u);
}

} // namespace
} // namespace sf
