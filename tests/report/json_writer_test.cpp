// The streaming JSON writer: what it writes parses back to what was written, its layout matches
// nlohmann::json's dump (compact and indented), strings are escaped and non-UTF-8 bytes replaced
// as jsonText() does.
#include "shapeflow/report/json_writer.h"
#include "shapeflow/report/report.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>

namespace sf {
namespace {

std::string sample(int indent) {
  std::string out;
  JsonWriter w(out, indent);
  w.beginObject();
  w.key("int").value(int64_t(-42));
  w.key("big").value(std::numeric_limits<int64_t>::max());
  w.key("u").value(uint64_t(7));
  w.key("bool").value(true);
  w.key("null").null();
  w.key("text").value("a \"quoted\" \\ line\nwith\ttabs and \x01 control");
  w.key("empty_obj").beginObject().endObject();
  w.key("empty_arr").beginArray().endArray();
  w.key("list").beginArray().value(int64_t(1)).value("two").beginObject().key("k").value(false)
      .endObject().endArray();
  w.key("nested").beginObject().key("a").beginArray().value(int64_t(3)).endArray().endObject();
  w.endObject();
  return out;
}

nlohmann::json expected() {
  nlohmann::json j;
  j["int"] = -42;
  j["big"] = std::numeric_limits<int64_t>::max();
  j["u"] = 7;
  j["bool"] = true;
  j["null"] = nullptr;
  j["text"] = "a \"quoted\" \\ line\nwith\ttabs and \x01 control";
  j["empty_obj"] = nlohmann::json::object();
  j["empty_arr"] = nlohmann::json::array();
  j["list"] = {1, "two", {{"k", false}}};
  j["nested"] = {{"a", {3}}};
  return j;
}

TEST(JsonWriter, ParsesBackToTheSameDocument) {
  EXPECT_EQ(nlohmann::json::parse(sample(0)), expected());
  EXPECT_EQ(nlohmann::json::parse(sample(1)), expected());
}

// Keys in the order nlohmann::json keeps them (sorted), so that the text can be compared.
TEST(JsonWriter, LayoutMatchesNlohmannDump) {
  std::string out;
  JsonWriter w(out, 1);
  w.beginObject();
  w.key("a").beginArray().value(int64_t(1)).value(int64_t(2)).endArray();
  w.key("b").beginObject().endObject();
  w.key("c").beginObject().key("d").value("x").endObject();
  w.endObject();
  nlohmann::json j = {{"a", {1, 2}}, {"b", nlohmann::json::object()}, {"c", {{"d", "x"}}}};
  EXPECT_EQ(out, j.dump(1));
  std::string compact;
  JsonWriter c(compact);
  c.beginObject().key("a").beginArray().value(int64_t(1)).value(int64_t(2)).endArray().endObject();
  EXPECT_EQ(compact, nlohmann::json({{"a", {1, 2}}}).dump());
}

TEST(JsonWriter, InvalidUtf8IsReplacedAsJsonTextDoes) {
  const std::string bad[] = {
      std::string("\xff"),              // never valid
      std::string("a\xc3"),             // truncated 2-byte sequence
      std::string("\xe2\x82"),          // truncated 3-byte sequence
      std::string("\xc0\xaf"),          // overlong '/'
      std::string("\xed\xa0\x80"),      // a surrogate
      std::string("\xf4\x90\x80\x80"),  // past U+10FFFF
      std::string("ok \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"), // valid: é € 😀
      std::string("\xe2\x82x\xf0\x9f\x98"),  // truncated sequences between text
      std::string("\x80\xbf\xf5\xfe"),        // stray continuation and impossible bytes
  };
  for (const std::string &s : bad) {
    std::string out;
    appendJsonString(out, s);
    auto parsed = nlohmann::json::parse(out, nullptr, false);
    ASSERT_FALSE(parsed.is_discarded()) << out;
    EXPECT_EQ(out, jsonText(nlohmann::json(s))) << "bytes of " << out;
  }
}

TEST(JsonWriter, DoublesShortestAndNonFiniteIsNull) {
  std::string out;
  JsonWriter w(out);
  w.beginArray().value(0.1).value(1e12).value(2.5).value(std::nan("")).value(
      std::numeric_limits<double>::infinity());
  w.endArray();
  auto j = nlohmann::json::parse(out);
  EXPECT_DOUBLE_EQ(j[0].get<double>(), 0.1);
  EXPECT_DOUBLE_EQ(j[1].get<double>(), 1e12);
  EXPECT_DOUBLE_EQ(j[2].get<double>(), 2.5);
  EXPECT_TRUE(j[3].is_null());
  EXPECT_TRUE(j[4].is_null());
}

} // namespace
} // namespace sf
