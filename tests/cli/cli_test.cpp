// The `shapeflow infer` contract (README "Using it"), checked on the built binary: exit status 0
// for a clean graph, 1 for a graph with errors (facts still printed), 2 for usage and I/O errors;
// --json output is JSON with the contract's keys; --input and --dim take effect.
#include <nlohmann/json.hpp>

#include <gtest/gtest.h>

#include <algorithm>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct Outcome {
  int status = -1; // exit status, or -1 when the process did not exit normally
  std::string out, err;
};

std::string quote(const std::string &s) {
  std::string q = "'";
  for (char c : s)
    q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string slurp(const fs::path &p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

fs::path scratchDir() {
  static fs::path dir = [] {
    std::string tmpl = (fs::temp_directory_path() / "sf_cli_test.XXXXXX").string();
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    const char *d = ::mkdtemp(buf.data());
    return fs::path(d ? d : fs::temp_directory_path().string());
  }();
  return dir;
}

/// Removes the scratch files when the tests are done.
class ScratchCleanup : public ::testing::Environment {
public:
  void TearDown() override {
    std::error_code ec;
    if (fs::path(scratchDir()).filename().string().rfind("sf_cli_test.", 0) == 0)
      fs::remove_all(scratchDir(), ec);
  }
};
[[maybe_unused]] const auto *kCleanup = ::testing::AddGlobalTestEnvironment(new ScratchCleanup);

/// Runs a command line through the shell, capturing stdout and stderr.
Outcome shell(const std::string &cmd, const std::string &stdinText = "") {
  static int counter = 0;
  fs::path base = scratchDir() / std::to_string(counter++);
  fs::path out = base.string() + ".out", err = base.string() + ".err", in = base.string() + ".in";
  std::ofstream(in) << stdinText;
  std::string full = "( " + cmd + " ) <" + quote(in.string()) + " >" + quote(out.string()) + " 2>" +
                     quote(err.string());
  int raw = std::system(full.c_str());
  Outcome r;
  if (raw != -1 && WIFEXITED(raw)) r.status = WEXITSTATUS(raw);
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

std::string sourceRoot() {
  if (const char *s = std::getenv("SF_SOURCE_DIR"); s && *s) return s;
  return SF_SOURCE_ROOT;
}
std::string data(const std::string &name) { return sourceRoot() + "/tests/cli/data/" + name; }

/// `shapeflow ARGS...`
Outcome shapeflow(const std::vector<std::string> &args) {
  std::string cmd = quote(SF_SHAPEFLOW_BIN);
  for (const auto &a : args)
    cmd += " " + quote(a);
  return shell(cmd);
}

std::string describe(const Outcome &r) {
  return "exit " + std::to_string(r.status) + "\n--- stdout\n" + r.out + "--- stderr\n" + r.err;
}

bool contains(const std::string &s, const std::string &part) {
  return s.find(part) != std::string::npos;
}

// ---------------------------------------------------------------- exit status

TEST(CliExit, CleanGraphIsZero) {
  Outcome r = shapeflow({"infer", data("clean.txt")});
  EXPECT_EQ(r.status, 0) << describe(r);
  EXPECT_TRUE(contains(r.out, "f32[N,16,(H - 1)//2 + 1,(W - 1)//2 + 1]")) << describe(r);
  EXPECT_TRUE(contains(r.out, "0 errors")) << describe(r);
}

TEST(CliExit, GraphWithAnErrorIsOneAndStillPrintsFacts) {
  Outcome r = shapeflow({"infer", data("error.txt")});
  EXPECT_EQ(r.status, 1) << describe(r);
  EXPECT_TRUE(contains(r.out, "error: node 'bad' (Concat): input 1 has rank 3, expected 4"))
      << describe(r);
  // Tensors before and beside the failed node keep their facts.
  EXPECT_TRUE(contains(r.out, "f32[N,2,3,4]")) << describe(r);
  EXPECT_TRUE(contains(r.out, "f32[4,3,2,N]")) << describe(r);
  EXPECT_TRUE(contains(r.out, "1 errors")) << describe(r);
}

// --timings adds the phases' milliseconds on stderr and changes nothing on stdout; a small model
// is loaded more than once (the sizes that may be 0 are probed).
TEST(CliInferTimings, PhasesOnStderrAndTheSameListing) {
  Outcome plain = shapeflow({"infer", data("kv_concat.onnx"), "--json"});
  Outcome timed = shapeflow({"infer", data("kv_concat.onnx"), "--json", "--timings"});
  EXPECT_EQ(timed.status, plain.status) << describe(timed);
  EXPECT_EQ(timed.out, plain.out);
  EXPECT_TRUE(contains(timed.err, "timings: load ")) << describe(timed);
  EXPECT_TRUE(contains(timed.err, " loads), inference ")) << describe(timed);
  EXPECT_TRUE(contains(timed.err, "report ")) << describe(timed);
  EXPECT_FALSE(contains(plain.err, "timings:")) << describe(plain);
}

TEST(CliExit, MissingFileIsTwo) {
  Outcome r = shapeflow({"infer", (scratchDir() / "no_such_model.txt").string()});
  EXPECT_EQ(r.status, 2) << describe(r);
  EXPECT_TRUE(contains(r.err, "cannot open")) << describe(r);
  Outcome o = shapeflow({"infer", (scratchDir() / "no_such_model.onnx").string()});
  EXPECT_EQ(o.status, 2) << describe(o);
}

TEST(CliExit, AFileThatIsNoModelIsNamedForWhatItLooksLike) {
  struct Case {
    std::string name, bytes, says;
  };
  const std::vector<Case> cases = {
      {"model.json", "{\"graph\": 1}\n", "(it looks like JSON): 1:1: expected 'graph'"},
      {"notes.txt", "hello\n", "(it looks like text (a text-form graph starts with 'graph NAME(...)'))"},
      {"image.onnx", std::string("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16), "(it looks like a PNG image)"},
      {"weights.onnx", std::string("PK\x03\x04\x14\0\0\0", 8), "(it looks like a zip archive"},
      {"empty.onnx", "", "(it looks like an empty file)"},
      {"noise.onnx", std::string("\xff\xff\xff\x0f\x01\x02\x03", 7),
       "(it looks like binary data that does not start like an ONNX model): "},
  };
  for (const Case &c : cases) {
    fs::path p = scratchDir() / c.name;
    std::ofstream(p, std::ios::binary) << c.bytes;
    Outcome r = shapeflow({"infer", p.string()});
    EXPECT_EQ(r.status, 2) << c.name << "\n" << describe(r);
    EXPECT_TRUE(contains(r.err, p.string() + ": neither an ONNX model nor a text-form graph " + c.says))
        << c.name << "\n" << describe(r);
  }
  Outcome dir = shapeflow({"infer", scratchDir().string()});
  EXPECT_EQ(dir.status, 2) << describe(dir);
  EXPECT_TRUE(contains(dir.err, "is a directory, not a model file")) << describe(dir);
  // A text-form graph is told by its content, whatever its name.
  fs::path named = scratchDir() / "graph_named.onnx";
  std::ofstream(named) << slurp(data("clean.txt"));
  EXPECT_EQ(shapeflow({"infer", named.string()}).status, 0);
}

TEST(CliExit, UnparsableTextIsTwoWithLineAndColumn) {
  Outcome r = shapeflow({"infer", data("parse_error.txt")});
  EXPECT_EQ(r.status, 2) << describe(r);
  EXPECT_TRUE(contains(r.err, "parse_error.txt: 3:3:")) << describe(r);
}

TEST(CliExit, BadInputIsTwo) {
  // An input the graph does not have.
  Outcome a = shapeflow({"infer", data("clean.txt"), "--input", "nope=1,3,64,64"});
  EXPECT_EQ(a.status, 2) << describe(a);
  EXPECT_TRUE(contains(a.err, "no input 'nope'")) << describe(a);
  // The wrong rank.
  Outcome b = shapeflow({"infer", data("clean.txt"), "--input", "x=1,3,64"});
  EXPECT_EQ(b.status, 2) << describe(b);
  EXPECT_TRUE(contains(b.err, "rank 4")) << describe(b);
  // Not NAME=DIMS, and dims that do not parse.
  Outcome c = shapeflow({"infer", data("clean.txt"), "--input", "x"});
  EXPECT_EQ(c.status, 2) << describe(c);
  Outcome d = shapeflow({"infer", data("clean.txt"), "--input", "x=1,3,@,64"});
  EXPECT_EQ(d.status, 2) << describe(d);
}

TEST(CliExit, BadDimIsTwo) {
  for (const char *spec : {"N", "N=a..b", "N=8..1", "N=-3..4"}) {
    Outcome r = shapeflow({"infer", data("clean.txt"), "--dim", spec});
    EXPECT_EQ(r.status, 2) << spec << "\n" << describe(r);
    EXPECT_FALSE(r.err.empty()) << spec;
  }
}

TEST(CliExit, UsageErrorsAreTwo) {
  EXPECT_EQ(shapeflow({}).status, 2);
  EXPECT_EQ(shapeflow({"infer"}).status, 2);
  EXPECT_EQ(shapeflow({"infer", data("clean.txt"), "--no-such-flag"}).status, 2);
  EXPECT_EQ(shapeflow({"frobnicate", data("clean.txt")}).status, 2);
  Outcome h = shapeflow({"infer", "--help"});
  EXPECT_EQ(h.status, 0) << describe(h);
  EXPECT_TRUE(contains(h.out, "--input")) << describe(h);
}

// ---------------------------------------------------------------- JSON

json parseJson(const Outcome &r) {
  try {
    return json::parse(r.out);
  } catch (const std::exception &e) {
    ADD_FAILURE() << "--json output does not parse: " << e.what() << "\n" << describe(r);
    return json();
  }
}

void expectContractKeys(const json &j) {
  ASSERT_TRUE(j.is_object());
  EXPECT_TRUE(j.contains("model") && j["model"].is_string());
  EXPECT_TRUE(j.contains("symbols") && j["symbols"].is_object());
  EXPECT_TRUE(j.contains("inputs") && j["inputs"].is_array());
  EXPECT_TRUE(j.contains("outputs") && j["outputs"].is_array());
  EXPECT_TRUE(j.contains("tensors") && j["tensors"].is_object());
  EXPECT_TRUE(j.contains("diagnostics") && j["diagnostics"].is_array());
  for (const auto &[name, t] : j["tensors"].items()) {
    EXPECT_TRUE(t.contains("dtype")) << name;
    EXPECT_TRUE(t.contains("shape")) << name;
    EXPECT_TRUE(t.contains("producer") && t["producer"].is_string()) << name;
    EXPECT_TRUE(t.contains("op") && t["op"].is_string()) << name;
    if (t["shape"].is_null()) continue;
    ASSERT_TRUE(t["shape"].is_array()) << name;
    for (const auto &d : t["shape"]) {
      // A dim is an integer or {"expr", "min", "max"}.
      if (d.is_number_integer()) continue;
      ASSERT_TRUE(d.is_object()) << name << ": " << d.dump();
      EXPECT_TRUE(d.contains("expr") && d["expr"].is_string()) << name << ": " << d.dump();
      EXPECT_TRUE(d.contains("min")) << name << ": " << d.dump();
      EXPECT_TRUE(d.contains("max")) << name << ": " << d.dump();
    }
  }
  for (const auto &d : j["diagnostics"]) {
    for (const char *k : {"severity", "node", "op", "message"})
      EXPECT_TRUE(d.contains(k) && d[k].is_string()) << d.dump();
  }
}

TEST(CliJson, CleanGraph) {
  Outcome r = shapeflow({"infer", data("clean.txt"), "--json"});
  EXPECT_EQ(r.status, 0) << describe(r);
  json j = parseJson(r);
  expectContractKeys(j);
  EXPECT_EQ(j["model"], data("clean.txt"));
  EXPECT_EQ(j["inputs"], json::array({"x", "w"}));
  EXPECT_EQ(j["outputs"], json::array({"g"}));
  EXPECT_TRUE(j["diagnostics"].empty()) << j["diagnostics"].dump();
  const json &y = j["tensors"]["y"];
  EXPECT_EQ(y["dtype"], "float32");
  EXPECT_EQ(y["op"], "Conv");
  ASSERT_EQ(y["shape"].size(), 4u) << y.dump();
  EXPECT_EQ(y["shape"][1], 16);
  EXPECT_EQ(y["shape"][0]["expr"], "N");
  EXPECT_EQ(y["shape"][2]["expr"], "(H - 1)//2 + 1");
  EXPECT_TRUE(j["symbols"].contains("N")) << j["symbols"].dump();
}

TEST(CliJson, GraphWithAnError) {
  Outcome r = shapeflow({"infer", data("error.txt"), "--json"});
  EXPECT_EQ(r.status, 1) << describe(r);
  json j = parseJson(r);
  expectContractKeys(j);
  ASSERT_EQ(j["diagnostics"].size(), 1u) << j["diagnostics"].dump();
  EXPECT_EQ(j["diagnostics"][0]["severity"], "error");
  EXPECT_EQ(j["diagnostics"][0]["node"], "bad");
  EXPECT_EQ(j["diagnostics"][0]["op"], "Concat");
  EXPECT_TRUE(j["tensors"]["bad"]["shape"].is_null()) << j["tensors"]["bad"].dump();
  EXPECT_EQ(j["tensors"]["t"]["shape"][0], 4) << j["tensors"]["t"].dump();
}

TEST(CliJson, ParsesWithPython) {
  if (shell("python3 -c 'pass'").status != 0) GTEST_SKIP() << "no python3";
  std::string script =
      "import json, sys\n"
      "d = json.load(sys.stdin)\n"
      "keys = {'model', 'symbols', 'inputs', 'outputs', 'tensors', 'diagnostics'}\n"
      "assert keys <= set(d), sorted(d)\n"
      "assert d['tensors']['y']['shape'][2]['expr'] == '(H - 1)//2 + 1', d['tensors']['y']\n"
      "print('ok')\n";
  std::ofstream(scratchDir() / "check.py") << script;
  Outcome r = shell(quote(SF_SHAPEFLOW_BIN) + " infer " + quote(data("clean.txt")) +
                    " --json | python3 " + quote((scratchDir() / "check.py").string()));
  EXPECT_EQ(r.status, 0) << describe(r);
  EXPECT_EQ(r.out, "ok\n") << describe(r);
}

// ---------------------------------------------------------------- --input, --dim

TEST(CliOptions, InputOverridesAShape) {
  Outcome r = shapeflow({"infer", data("clean.txt"), "--input", "x=1,3,64,64"});
  EXPECT_EQ(r.status, 0) << describe(r);
  EXPECT_TRUE(contains(r.out, "x: f32[1,3,64,64]")) << describe(r);
  EXPECT_TRUE(contains(r.out, "f32[1,16,32,32]")) << describe(r);
  EXPECT_TRUE(contains(r.out, "g: f32[1,16,1,1]")) << describe(r);
  EXPECT_TRUE(contains(r.out, "0 warnings")) << describe(r); // agrees with the declared f32[N,3,H,W]

  Outcome j = shapeflow({"infer", data("clean.txt"), "--input", "x=1,3,64,64", "--json"});
  EXPECT_EQ(j.status, 0) << describe(j);
  EXPECT_EQ(parseJson(j)["tensors"]["y"]["shape"], json::array({1, 16, 32, 32}));
}

TEST(CliOptions, InputWithSymbolsAndIntervals) {
  // An interval without a name is named after its input and axis (x_d0), listed with its range;
  // --no-names prints it as the interval.
  Outcome r = shapeflow({"infer", data("clean.txt"), "--input", "x=[1..8,3,S,S]"});
  EXPECT_EQ(r.status, 0) << describe(r);
  EXPECT_TRUE(contains(r.out, "x_d0{1..8}")) << describe(r);
  EXPECT_TRUE(contains(r.out, "f32[x_d0,16,(S - 1)//2 + 1,(S - 1)//2 + 1]")) << describe(r);
  Outcome plain = shapeflow({"infer", data("clean.txt"), "--input", "x=[1..8,3,S,S]", "--no-names"});
  EXPECT_TRUE(contains(plain.out, "f32[?{1..8},16,(S - 1)//2 + 1,(S - 1)//2 + 1]")) << describe(plain);
}

TEST(CliOptions, InputThatMakesAnErrorIsOne) {
  // Two input channels against the weight's three: the model has an error, not the command.
  Outcome r = shapeflow({"infer", data("clean.txt"), "--input", "x=1,2,64,64"});
  EXPECT_EQ(r.status, 1) << describe(r);
  EXPECT_TRUE(contains(r.out, "error: node 'y' (Conv)")) << describe(r);
  // The declared channel count is static: a runtime would reject the input itself; said so.
  EXPECT_TRUE(contains(r.out, "warning: --input x=1,2,64,64: input 'x' is declared f32[N,3,H,W]; the "
                              "given shape differs at axis 1 (3 declared, 2 given): runtimes such as "
                              "onnxruntime reject"))
      << describe(r);
}

TEST(CliOptions, BackwardInferenceRecoversAnUndeclaredInputAndCanBeTurnedOff) {
  // An input of unknown rank read by a Conv: the weight gives its rank, channels and type.
  Outcome r = shapeflow({"infer", data("undeclared.txt")});
  EXPECT_EQ(r.status, 0) << describe(r);
  EXPECT_TRUE(contains(r.out, "x: f32[x_d0,3,x_d2,x_d3]")) << describe(r);
  EXPECT_TRUE(contains(r.out, "note: input 'x' is declared ?[...]; the rules of the ops reading it "
                              "give f32[?,3,?,?] (backward inference)"))
      << describe(r);
  Outcome off = shapeflow({"infer", data("undeclared.txt"), "--backward", "off"});
  EXPECT_EQ(off.status, 0) << describe(off);
  EXPECT_TRUE(contains(off.out, "x: ?[...]")) << describe(off);
  EXPECT_FALSE(contains(off.out, "backward inference")) << describe(off);
  Outcome bad = shapeflow({"infer", data("undeclared.txt"), "--backward", "sometimes"});
  EXPECT_EQ(bad.status, 2) << describe(bad);
}

TEST(CliOptions, DimBoundsASymbol) {
  Outcome r = shapeflow({"infer", data("clean.txt"), "--dim", "N=1..8"});
  EXPECT_EQ(r.status, 0) << describe(r);
  EXPECT_TRUE(contains(r.out, "N{1..8}")) << describe(r);

  Outcome j =
      shapeflow({"infer", data("clean.txt"), "--dim", "N=1..8", "--dim", "H=32..64", "--json"});
  EXPECT_EQ(j.status, 0) << describe(j);
  json d = parseJson(j);
  EXPECT_EQ(d["symbols"]["N"], json({{"min", 1}, {"max", 8}})) << d["symbols"].dump();
  EXPECT_EQ(d["symbols"]["H"], json({{"min", 32}, {"max", 64}})) << d["symbols"].dump();
  const json &y = d["tensors"]["y"]["shape"];
  EXPECT_EQ(y[0], json({{"expr", "N"}, {"min", 1}, {"max", 8}})) << y.dump();
  // (H - 1)//2 + 1 for H in 32..64 is 16..32.
  EXPECT_EQ(y[2], json({{"expr", "(H - 1)//2 + 1"}, {"min", 16}, {"max", 32}})) << y.dump();
}

TEST(CliOptions, ValueOfAnInputIsUsedAndReported) {
  // A shape tensor fed at run time: its elements given with --value drive the Reshape, and the
  // JSON reports them under input_values (the streamed writer and the document agree).
  std::string path = ::testing::TempDir() + "/sf_value_input.txt";
  std::ofstream(path) << "graph main(x: f32[N,6], s: i64[2]) {\n  y = Reshape(x, s)\n  return y\n}\n";
  Outcome r = shapeflow({"infer", path, "--value", "s=3,-1"});
  EXPECT_EQ(r.status, 0) << describe(r);
  EXPECT_TRUE(contains(r.out, "s: i64[2] = [3,-1]")) << describe(r);
  EXPECT_TRUE(contains(r.out, "y  f32[3,2*N]")) << describe(r);
  Outcome j = shapeflow({"infer", path, "--value", "s=3,-1", "--json"});
  EXPECT_EQ(parseJson(j)["input_values"]["s"], json::array({3, -1})) << describe(j);
  Outcome none = shapeflow({"infer", path, "--json"});
  EXPECT_FALSE(parseJson(none).contains("input_values")) << describe(none);
}

TEST(CliOptions, AssumptionsAreListedAndStrictRefusesThem) {
  // An ONNX model's named dims are taken to be at least 1: listed as an assumption; --strict
  // makes it an error (exit 1) unless the user gives the ranges.
  std::string model = sourceRoot() + "/examples/tiny_cnn.onnx";
  Outcome r = shapeflow({"infer", model});
  EXPECT_EQ(r.status, 0) << describe(r);
  EXPECT_TRUE(contains(r.out, "assumption: the named input dims N, H, W are sizes of at least 1")) << describe(r);
  EXPECT_TRUE(contains(r.out, "0 errors, 0 warnings, 1 assumptions")) << describe(r);
  Outcome s = shapeflow({"infer", model, "--strict"});
  EXPECT_EQ(s.status, 1) << describe(s);
  EXPECT_TRUE(contains(s.out, "error: assumption refused (--strict): the named input dims")) << describe(s);
  Outcome given = shapeflow({"infer", model, "--strict", "--dim", "N=1..8", "--dim", "H=8..64", "--dim", "W=8..64"});
  EXPECT_EQ(given.status, 0) << describe(given);
  EXPECT_FALSE(contains(given.out, "assumption")) << describe(given);
  Outcome j = shapeflow({"infer", model, "--json"});
  json doc = parseJson(j);
  bool listed = false;
  for (const auto &d : doc["diagnostics"]) listed = listed || d["severity"] == "assumption";
  EXPECT_TRUE(listed) << describe(j);
}

TEST(CliOptions, OutMayNameTheModelItself) {
  // The annotation is written to a temporary file and renamed: the model it reads from is not
  // truncated under its own mapping.
  std::string model = ::testing::TempDir() + "/sf_out_self.onnx";
  std::filesystem::copy_file(sourceRoot() + "/examples/tiny_cnn.onnx", model,
                             std::filesystem::copy_options::overwrite_existing);
  auto before = std::filesystem::file_size(model);
  Outcome r = shapeflow({"infer", model, "--out", model});
  EXPECT_EQ(r.status, 0) << describe(r);
  EXPECT_GT(std::filesystem::file_size(model), before);
  EXPECT_FALSE(std::filesystem::exists(model + ".shapeflow-tmp"));
  Outcome again = shapeflow({"infer", model});
  EXPECT_EQ(again.status, 0) << describe(again);
}

TEST(CliOptions, DimWithOneValueFixesTheSymbol) {
  Outcome r = shapeflow({"infer", data("clean.txt"), "--dim", "N=4", "--json"});
  EXPECT_EQ(r.status, 0) << describe(r);
  json d = parseJson(r);
  EXPECT_EQ(d["symbols"]["N"], json({{"min", 4}, {"max", 4}})) << d["symbols"].dump();
  EXPECT_EQ(d["tensors"]["y"]["shape"][0], 4) << d["tensors"]["y"].dump();
}

// ---------------------------------------------------------------- the shipped example

TEST(CliExample, TransformerBlockIsSymbolicThroughout) {
  std::string path = sourceRoot() + "/examples/transformer_block.txt";
  Outcome r = shapeflow({"infer", path});
  EXPECT_EQ(r.status, 0) << describe(r);
  EXPECT_TRUE(contains(r.out, "split_shape  i64[4] = [B,S,4,64]")) << describe(r);
  EXPECT_TRUE(contains(r.out, "f32[B,4,S,S]")) << describe(r);
  EXPECT_TRUE(contains(r.out, "y: f32[B,S,256]")) << describe(r);
  EXPECT_TRUE(contains(r.out, "0 errors, 0 warnings")) << describe(r);
  // Nothing is left unknown.
  json j = parseJson(shapeflow({"infer", path, "--json"}));
  for (const auto &[name, t] : j["tensors"].items()) {
    ASSERT_TRUE(t["shape"].is_array()) << name;
    for (const auto &d : t["shape"]) {
      if (d.is_object()) { EXPECT_NE(d["expr"], "?") << name << ": " << t.dump(); }
    }
  }

  Outcome s = shapeflow({"infer", path, "--input", "x=2,128,256", "--input", "mask=2,1,1,128"});
  EXPECT_EQ(s.status, 0) << describe(s);
  EXPECT_TRUE(contains(s.out, "y: f32[2,128,256]")) << describe(s);
}

} // namespace

// ---------------------------------------------------------------- stats

TEST(CliStats, TextTableWithHumanUnitsAtABinding) {
  Outcome r = shapeflow({"stats", data("clean.txt"), "--at", "N=1", "--at", "H=224", "--at",
                         "W=224"});
  EXPECT_EQ(r.status, 0) << describe(r);
  EXPECT_TRUE(contains(r.out, "counts shown at: N=1, H=224, W=224 (N, H, W given)")) << describe(r);
  EXPECT_TRUE(contains(r.out, "MACs")) << describe(r);
  EXPECT_TRUE(contains(r.out, "top nodes by MACs")) << describe(r);
}

TEST(CliStats, JsonKeepsTheContractAndCountsAreExpressions) {
  Outcome r = shapeflow({"stats", data("clean.txt"), "--json"});
  ASSERT_EQ(r.status, 0) << describe(r);
  json j = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << describe(r);
  for (const char *k : {"model", "symbols", "total", "by_op_type", "nodes"})
    EXPECT_TRUE(j.contains(k)) << k;
  ASSERT_TRUE(j["total"]["macs"].is_object()) << j["total"].dump();
  EXPECT_TRUE(j["total"]["macs"].contains("expr"));
  EXPECT_TRUE(j["total"]["macs"].contains("min"));
  EXPECT_TRUE(j["total"]["macs"].contains("max"));
}

TEST(CliStats, ConcreteInputGivesNumbers) {
  Outcome r = shapeflow({"stats", data("clean.txt"), "--json", "--input", "x=1,3,32,32"});
  ASSERT_EQ(r.status, 0) << describe(r);
  json j = json::parse(r.out);
  EXPECT_TRUE(j["total"]["macs"].is_number_integer()) << j["total"].dump();
}

TEST(CliStats, CsvDeviceAndSvg) {
  fs::path dev = scratchDir() / "dev.json";
  std::ofstream(dev) << R"({"name": "d", "peak_flops": 1e12, "memory_bandwidth": 1e11})";
  fs::path svg = scratchDir() / "w.svg";
  Outcome r = shapeflow({"stats", data("clean.txt"), "--csv", "--device", dev.string(), "--svg",
                         svg.string()});
  ASSERT_EQ(r.status, 0) << describe(r);
  EXPECT_EQ(r.out.rfind("name,op,path,runs,macs", 0), 0u) << describe(r);
  EXPECT_TRUE(contains(r.out, ",time_ns,bound")) << describe(r);
  std::string picture = slurp(svg);
  EXPECT_EQ(picture.rfind("<svg", 0), 0u);
  EXPECT_TRUE(contains(picture, "total MACs as ")) << "a symbolic model draws its growth";
}

TEST(CliStats, BadOptionsAreTwo) {
  Outcome a = shapeflow({"stats", data("clean.txt"), "--at", "Q=3"});
  EXPECT_EQ(a.status, 2) << describe(a);
  EXPECT_TRUE(contains(a.err, "no size named 'Q'")) << describe(a);
  fs::path dev = scratchDir() / "bad_dev.json";
  std::ofstream(dev) << R"({"name": "d"})";
  Outcome b = shapeflow({"stats", data("clean.txt"), "--device", dev.string()});
  EXPECT_EQ(b.status, 2) << describe(b);
  EXPECT_TRUE(contains(b.err, "peak_flops")) << describe(b);
  Outcome c = shapeflow({"stats", data("clean.txt"), "--json", "--csv"});
  EXPECT_EQ(c.status, 2) << describe(c);
}

// ---------------------------------------------------------------- lower

TEST(CliLower, ShapesStageIsTheDefault) {
  Outcome r = shapeflow({"lower", data("clean.txt")});
  EXPECT_EQ(r.status, 0) << describe(r);
  EXPECT_TRUE(contains(r.out, "%x.shape = ActualShapeOf %x")) << describe(r);
  EXPECT_TRUE(contains(r.out, "%y.shape = compute [N, 16, (H - 1)//2 + 1, (W - 1)//2 + 1]"))
      << describe(r);
}

TEST(CliLower, BoundsJsonKeepsTheContract) {
  Outcome r = shapeflow({"lower", data("clean.txt"), "--stage", "bounds", "--json", "--dim",
                         "N=1..8", "--dim", "H=1..224", "--dim", "W=1..224"});
  ASSERT_EQ(r.status, 0) << describe(r);
  json j = json::parse(r.out);
  for (const char *k : {"model", "symbols", "tensors", "missing_bounds"})
    EXPECT_TRUE(j.contains(k)) << k;
  EXPECT_EQ(j["tensors"]["y"]["upper_shape"], json::parse("[8, 16, 112, 112]"));
  EXPECT_EQ(j["tensors"]["y"]["upper_bytes"], 8 * 16 * 112 * 112 * 4);
  EXPECT_TRUE(j["missing_bounds"].empty());
  Outcome u = shapeflow({"lower", data("clean.txt"), "--stage", "bounds", "--json"});
  json m = json::parse(u.out)["missing_bounds"];
  ASSERT_EQ(m.size(), 3u) << m.dump();
  EXPECT_EQ(m[0]["kind"], "input");
}

TEST(CliLower, BuffersStageAndABadStage) {
  Outcome r = shapeflow({"lower", data("clean.txt"), "--stage", "buffers", "--json"});
  ASSERT_EQ(r.status, 0) << describe(r);
  json j = json::parse(r.out);
  ASSERT_TRUE(j["plan"]["buffers"].is_array());
  ASSERT_TRUE(j["plan"]["steps"].is_array());
  Outcome t = shapeflow({"lower", data("clean.txt"), "--stage", "buffers"});
  EXPECT_TRUE(contains(t.out, "dealloc %y")) << describe(t);
  Outcome bad = shapeflow({"lower", data("clean.txt"), "--stage", "offsets"});
  EXPECT_EQ(bad.status, 2) << describe(bad);
}

TEST(CliPlan, JsonKeepsTheContractAndCheckPlanAcceptsIt) {
  Outcome r = shapeflow({"plan", data("clean.txt"), "--json", "--dim", "N=1..8", "--dim",
                         "H=1..224", "--dim", "W=1..224"});
  ASSERT_EQ(r.status, 0) << describe(r);
  json j = json::parse(r.out);
  for (const char *k : {"model", "symbols", "align", "order", "peak", "lower_bound",
                        "lower_bound_model_order", "buffers"})
    EXPECT_TRUE(j.contains(k)) << k;
  EXPECT_EQ(j["align"], 64);
  EXPECT_EQ(j["order"], json::parse(R"(["y", "g"])"));
  ASSERT_TRUE(j["peak"].is_object()) << j["peak"].dump();
  for (const auto &b : j["buffers"])
    for (const char *k : {"tensor", "size", "offset", "first", "last"})
      EXPECT_TRUE(b.contains(k)) << k << " in " << b.dump();
  fs::path plan = scratchDir() / "plan.json";
  std::ofstream(plan) << r.out;
  Outcome c = shapeflow({"check-plan", plan.string()});
  EXPECT_EQ(c.status, 0) << describe(c);
  EXPECT_TRUE(contains(c.out, "valid")) << describe(c);
  // A broken plan: every buffer at offset 0.
  for (auto &b : j["buffers"])
    b["offset"] = 0;
  std::ofstream(plan) << j.dump();
  Outcome bad = shapeflow({"check-plan", plan.string()});
  EXPECT_EQ(bad.status, 1) << describe(bad);
  EXPECT_TRUE(contains(bad.out, "overlap")) << describe(bad);
}

TEST(CliPlan, TextAtABindingVerifyAndSvg) {
  fs::path svg = scratchDir() / "plan.svg";
  Outcome r = shapeflow({"plan", data("clean.txt"), "--dim", "N=1..8", "--dim", "H=1..224",
                         "--dim", "W=1..224", "--at", "N=1", "--at", "H=32", "--at", "W=32",
                         "--verify", "--svg", svg.string()});
  ASSERT_EQ(r.status, 0) << describe(r);
  EXPECT_TRUE(contains(r.out, "numbers at N=1, H=32, W=32 (N, H, W given)")) << describe(r);
  EXPECT_TRUE(contains(r.err + r.out, "valid")) << describe(r);
  std::string picture = slurp(svg);
  EXPECT_EQ(picture.rfind("<svg", 0), 0u);
  EXPECT_TRUE(contains(picture, "peak")) << picture.substr(0, 400);
}

TEST(CliPlan, AnUnboundedSymbolIsAnErrorNamingIt) {
  Outcome r = shapeflow({"plan", data("clean.txt")});
  EXPECT_NE(r.status, 0) << describe(r);
  EXPECT_TRUE(contains(r.err, "--dim N=LO..HI")) << describe(r);
  Outcome a = shapeflow({"plan", data("clean.txt"), "--input", "x=1,3,64,64", "--align", "48"});
  EXPECT_EQ(a.status, 2) << describe(a);
  EXPECT_TRUE(contains(a.err, "power of two")) << describe(a);
}

TEST(CliPlan, ConcreteSizesGiveNumbersAndTheMemoryOrder) {
  Outcome r = shapeflow({"plan", data("clean.txt"), "--input", "x=1,3,64,64", "--order", "memory",
                         "--json"});
  ASSERT_EQ(r.status, 0) << describe(r);
  json j = json::parse(r.out);
  ASSERT_TRUE(j["peak"].is_number_integer()) << j["peak"].dump();
  EXPECT_GE(j["peak"].get<int64_t>(), j["lower_bound"].get<int64_t>());
  EXPECT_LE(j["lower_bound"].get<int64_t>(), j["lower_bound_model_order"].get<int64_t>());
}

TEST(CliRun, RandomInputsJsonAndNpyOutputs) {
  fs::path out = scratchDir() / "run_out";
  Outcome r = shapeflow({"run", data("clean.txt"), "--input", "x=random:1,3,16,16", "--input",
                         "w=random:16,3,3,3", "--out", out.string(), "--json"});
  ASSERT_EQ(r.status, 0) << describe(r);
  json j = json::parse(r.out);
  ASSERT_EQ(j["outputs"].size(), 1u);
  EXPECT_EQ(j["outputs"][0]["name"], "g");
  EXPECT_EQ(j["outputs"][0]["shape"], json::parse("[1, 16, 1, 1]"));
  EXPECT_EQ(j["outputs"][0]["dtype"], "f32");
  std::string npy = slurp(out / "g.npy");
  EXPECT_EQ(npy.rfind("\x93NUMPY", 0), 0u);
  // The written output fed back as an input of a graph that takes it.
  fs::path g2 = scratchDir() / "relu.txt";
  std::ofstream(g2) << "graph main(g: f32[1,16,1,1]) {\n  r = Relu(g)\n  return r\n}\n";
  Outcome back = shapeflow({"run", g2.string(), "--input", "g=" + (out / "g.npy").string()});
  EXPECT_EQ(back.status, 0) << describe(back);
  EXPECT_TRUE(contains(back.out, "r  f32[1,16,1,1]")) << describe(back);
}

TEST(CliRun, BadInputsAreErrorsNotCrashes) {
  Outcome missing = shapeflow({"run", data("clean.txt")});
  EXPECT_EQ(missing.status, 2) << describe(missing);
  EXPECT_TRUE(contains(missing.err, "input 'x' is f32[N,3,H,W]: give it")) << describe(missing);
  fs::path bad = scratchDir() / "bad.npy";
  std::ofstream(bad) << "not numpy";
  Outcome notNpy = shapeflow({"run", data("clean.txt"), "--input", "x=" + bad.string()});
  EXPECT_EQ(notNpy.status, 2) << describe(notNpy);
  EXPECT_TRUE(contains(notNpy.err, "not a .npy file")) << describe(notNpy);
  Outcome rank = shapeflow({"run", data("clean.txt"), "--input", "x=random:3,16,16", "--input",
                            "w=random:16,3,3,3"});
  EXPECT_EQ(rank.status, 1) << describe(rank);
  EXPECT_TRUE(contains(rank.err, "input 'x' has shape [3,16,16]")) << describe(rank);
  Outcome unknown = shapeflow({"run", data("clean.txt"), "--input", "q=random:1"});
  EXPECT_EQ(unknown.status, 2) << describe(unknown);
  EXPECT_TRUE(contains(unknown.err, "no input 'q'")) << describe(unknown);
}

TEST(CliPlan, AModelWithErrorsReportsThemNotTheStagesComplaint) {
  Outcome r = shapeflow({"plan", data("error.txt")});
  EXPECT_EQ(r.status, 1) << describe(r);
  EXPECT_EQ(r.err.rfind("error: node 'bad' (Concat): input 1 has rank 3", 0), 0u) << describe(r);
  EXPECT_TRUE(contains(r.err, "the model has errors (above), so no memory plan was made")) << describe(r);
}

TEST(CliCheck, SizesNoInputHasAreErrors) {
  Outcome dim = shapeflow({"plan", data("clean.txt"), "--dim", "Q=1..4"});
  EXPECT_EQ(dim.status, 2) << describe(dim);
  EXPECT_TRUE(contains(dim.err, "a range is given for 'Q' (1..4), but no input of the model has a size named "
                                "'Q' (the inputs' named sizes: N, H, W)"))
      << describe(dim);
  Outcome at = shapeflow({"check", data("clean.txt"), "--at", "N=2,Q=3"});
  EXPECT_EQ(at.status, 2) << describe(at);
  EXPECT_TRUE(contains(at.err, "no size named 'Q'")) << describe(at);
}

TEST(CliCheck, SamplesThatCannotRunFailTheCheck) {
  // Sizes the model refuses (a 3x3 window with padding 1 on an empty map): the sample does not
  // run, and the check fails.
  Outcome r = shapeflow({"check", data("clean.txt"), "--at", "N=1,H=0,W=4", "--at", "N=1,H=9,W=9"});
  EXPECT_EQ(r.status, 1) << describe(r);
  EXPECT_TRUE(contains(r.out, "the sizes break a requirement of the model: H = 0 is outside 1..")) << describe(r);
  EXPECT_TRUE(contains(r.out, "1 of 2 samples ran; 0 mismatches: FAILED")) << describe(r);
}

TEST(CliCheck, SamplesRunAndAgree) {
  Outcome r = shapeflow({"check", data("clean.txt"), "--at", "N=2,H=9,W=7", "--json"});
  ASSERT_EQ(r.status, 0) << describe(r);
  json j = json::parse(r.out);
  EXPECT_EQ(j["mismatches"], 0);
  ASSERT_EQ(j["samples"].size(), 1u);
  EXPECT_TRUE(j["samples"][0]["ran"].get<bool>());
  EXPECT_EQ(j["samples"][0]["tensors"], 2);
  Outcome text = shapeflow({"check", data("clean.txt"), "--samples", "3"});
  EXPECT_EQ(text.status, 0) << describe(text);
  EXPECT_TRUE(contains(text.out, "0 mismatches")) << describe(text);
}

TEST(CliCheck, DeclaredValuesAreWhatTheSamplesFeed) {
  // An Expand target shape as an integer input: with --value the samples feed it, else the
  // drawn elements (0: no shape x broadcasts to) make no sample run.
  Outcome given = shapeflow({"check", data("int_input.txt"), "--value", "s=2,N,8"});
  EXPECT_EQ(given.status, 0) << describe(given);
  EXPECT_TRUE(contains(given.out, "4 of 4 samples ran; 0 mismatches")) << describe(given);
  Outcome drawn = shapeflow({"check", data("int_input.txt")});
  EXPECT_EQ(drawn.status, 1) << describe(drawn);
  EXPECT_TRUE(contains(drawn.out, "0 of 4 samples ran")) << describe(drawn);
}

TEST(CliContract, ASizeIsNotAdmittedFromZeroWhereThatLeavesDimsUnknown) {
  // mask[:, -S:] (Slice from -S to the end) added to x [B, S]: min(S, T) from S = 1, all of T at
  // S = 0; a range from 0 covers both only as `?`, so S stays at least 1 (and B, which nothing
  // slices by, is admitted from 0).
  Outcome infer = shapeflow({"infer", data("slice_from_end.onnx")});
  EXPECT_EQ(infer.status, 0) << describe(infer);
  EXPECT_TRUE(contains(infer.out, "pos: i64[B,min(S, T)]")) << describe(infer);
  EXPECT_TRUE(contains(infer.out, "y: f32[B,S]")) << describe(infer);
  EXPECT_TRUE(contains(infer.err + infer.out, "B inferred from 0")) << describe(infer);
  Outcome contract = shapeflow({"contract", data("slice_from_end.onnx")});
  EXPECT_TRUE(contains(contract.out, "S >= 1")) << describe(contract);
  EXPECT_TRUE(contains(contract.out, "B >= 0")) << describe(contract);
}

TEST(CliRun, AnEmptyCacheRuns) {
  // P is 0 in the data: the model (named sizes at least 1 by default) is inferred again with P
  // from 0, and runs; a size the model cannot take still fails.
  Outcome r = shapeflow({"run", data("kv_concat.onnx"), "--feed", "past=random:2,0,4", "--feed", "new=random:2,3,4"});
  EXPECT_EQ(r.status, 0) << describe(r);
  EXPECT_TRUE(contains(r.err, "note: P is 0 in the data")) << describe(r);
  EXPECT_TRUE(contains(r.out, "f32[2,3,4]")) << describe(r);
  Outcome bad = shapeflow({"run", data("kv_concat.onnx"), "--feed", "past=random:2,0,4", "--feed", "new=random:3,3,4"});
  EXPECT_EQ(bad.status, 1) << describe(bad);
}

TEST(CliContract, AnEmptyCacheIsWithinTheContract) {
  // Named sizes are inferred from 1; the contract admits 0 where the model infers there (a
  // concatenated cache: P, and here B and S too), and `check` runs the model at P = 0.
  Outcome r = shapeflow({"contract", data("kv_concat.onnx")});
  EXPECT_EQ(r.status, 0) << describe(r);
  EXPECT_TRUE(contains(r.out, "P >= 0")) << describe(r);
  // A range the user gives is theirs: not lowered.
  Outcome given = shapeflow({"contract", data("kv_concat.onnx"), "--dim", "P=2..9"});
  EXPECT_TRUE(contains(given.out, "2 <= P <= 9")) << describe(given);
  Outcome check = shapeflow({"check", data("kv_concat.onnx"), "--at", "B=1,P=0,S=2", "--at", "B=2,P=3,S=1"});
  EXPECT_EQ(check.status, 0) << describe(check);
  EXPECT_TRUE(contains(check.out, "2 of 2 samples ran; 0 mismatches")) << describe(check);
}

TEST(CliMemory, PartsAtEachRowAndTheLargestCacheThatFits) {
  // present = Concat(past, new) along axis 1: the cache pair is past -> present (the new
  // positions come after the past ones), found from the graph.
  Outcome r = shapeflow({"memory", data("kv_concat.onnx"), "--at", "B=1,S=4,P=0", "--at", "B=2,S=1,P=7", "--fit",
                         "10KB", "--for", "P"});
  EXPECT_EQ(r.status, 0) << describe(r);
  EXPECT_TRUE(contains(r.out, "  past -> present  (axis 1)")) << describe(r);
  EXPECT_TRUE(contains(r.out, "| B | P | S | weights | kv cache | activations | io | total |")) << describe(r);
  // past 2x7x4 and present 2x8x4 floats; new 2x1x4 floats.
  EXPECT_TRUE(contains(r.out, "| 2 | 7 | 1 | 0 B | 480 B | 0 B | 32 B | 512 B |")) << describe(r);
  // At B = 1, S = 4 the total is 16*P (past) + 16*(P + 4) (present) + 64 (new) = 32*P + 128.
  EXPECT_TRUE(contains(r.out, "fit: the total within 9.77 KiB: P <= 308")) << describe(r);
  Outcome j = shapeflow({"memory", data("kv_concat.onnx"), "--at", "B=1,S=4,P=0", "--json"});
  EXPECT_EQ(j.status, 0) << describe(j);
  auto doc = nlohmann::json::parse(j.out);
  EXPECT_EQ(doc["kv_cache"][0]["input"], "past");
  EXPECT_EQ(doc["rows"][0]["total"], 128);
  for (const char *key : {"model", "symbols", "at", "weights", "kv_cache", "activations", "io", "total", "rows"})
    EXPECT_TRUE(doc.contains(key)) << key;
  // Misuse is named.
  Outcome alone = shapeflow({"memory", data("kv_concat.onnx"), "--fit", "1GiB"});
  EXPECT_EQ(alone.status, 2) << describe(alone);
  EXPECT_TRUE(contains(alone.err, "--fit BYTES and --for SYM go together")) << describe(alone);
  Outcome unit = shapeflow({"memory", data("kv_concat.onnx"), "--at", "B=1,S=1,P=1", "--fit", "3 bananas", "--for", "P"});
  EXPECT_EQ(unit.status, 2) << describe(unit);
  // A size an --at leaves out takes the rule of every report: P, which nothing bounds, at its
  // smallest (an empty cache), said under the table.
  Outcome partial = shapeflow({"memory", data("kv_concat.onnx"), "--at", "B=1,S=1"});
  EXPECT_EQ(partial.status, 0) << describe(partial);
  EXPECT_TRUE(contains(partial.out, "| 1 | 0 | 1 |")) << describe(partial);
  EXPECT_TRUE(contains(partial.out, "row 1 at B=1, P=0, S=1 (B, S given; P at the smallest size admitted"))
      << describe(partial);
  // Without --at, one row at the rule's sizes; with ranges, their upper ends.
  Outcome ranged = shapeflow({"memory", data("kv_concat.onnx"), "--dim", "B=1..4", "--dim", "S=1..16", "--dim", "P=0..100"});
  EXPECT_EQ(ranged.status, 0) << describe(ranged);
  EXPECT_TRUE(contains(ranged.out, "| 4 | 100 | 16 |")) << describe(ranged);
}

// The whole text report, golden: the parts, the table (a row with a size left to the rule, and
// its note), the fit. Regenerate from tests/cli/data with:
//   shapeflow memory kv_concat.onnx --at B=1,S=4,P=0 --at B=2,S=1,P=7 --at B=2,S=1 --fit 10KB --for P
TEST(CliMemory, TheTextReportIsTheGoldenOne) {
  Outcome r = shapeflow({"memory", data("kv_concat.onnx"), "--at", "B=1,S=4,P=0", "--at", "B=2,S=1,P=7", "--at",
                         "B=2,S=1", "--fit", "10KB", "--for", "P"});
  ASSERT_EQ(r.status, 0) << describe(r);
  std::string text = r.out;
  text.replace(text.find(data("kv_concat.onnx")), data("kv_concat.onnx").size(), "kv_concat.onnx");
  EXPECT_EQ(text, slurp(data("memory_table.golden")));
}

TEST(CliStats, SeveralBindingsAreRowsOfTheTotals) {
  // A decode step at two cache lengths: one row each; the JSON's rows carry the same numbers.
  Outcome r = shapeflow({"stats", data("kv_concat.onnx"), "--at", "B=1,S=1,P=0", "--at", "B=1,S=1,P=100"});
  EXPECT_EQ(r.status, 0) << describe(r);
  EXPECT_TRUE(contains(r.out, "per binding:\n| B | P | S | MACs | other FLOPs | bytes moved |")) << describe(r);
  Outcome j = shapeflow({"stats", data("kv_concat.onnx"), "--at", "B=1,S=1,P=0", "--at", "B=1,S=1,P=100", "--json"});
  ASSERT_EQ(j.status, 0) << describe(j);
  auto doc = nlohmann::json::parse(j.out);
  ASSERT_EQ(doc["rows"].size(), 2u);
  EXPECT_EQ(doc["rows"][1]["at"]["P"], 100);
  // Concat reads past and new and writes present: (100 + 1) * 4 floats each way, and more bytes
  // with the longer cache.
  EXPECT_GT(doc["rows"][1]["read_bytes"].get<int64_t>(), doc["rows"][0]["read_bytes"].get<int64_t>());
  EXPECT_EQ(doc["rows"][1]["write_bytes"], 101 * 4 * 4);
}

// Plans per range: slots whose one plan for S, T in 1..8 is 7% above the lower bound somewhere
// (tests/cli/data/slot_lifetimes.txt); the text is the golden one, every range's plan passes the
// verifier (--verify), and the JSON's ranges tile the domain, each plan judged at sizes inside its
// range and within the goal there.
TEST(CliPlan, MaxRatioPlansPerRangeOfTheSizes) {
  std::vector<std::string> args{"plan", data("slot_lifetimes.txt"), "--dim", "S=1..8", "--dim", "T=1..8",
                                "--caller-owned-io", "--max-ratio", "1.05"};
  Outcome r = shapeflow(args);
  ASSERT_EQ(r.status, 0) << describe(r);
  EXPECT_EQ(r.out, slurp(data("plan_ranges.golden")));
  args.push_back("--verify");
  Outcome v = shapeflow(args);
  ASSERT_EQ(v.status, 0) << describe(v);
  EXPECT_EQ(2, std::count(v.err.begin(), v.err.end(), '\n')) << v.err;
  EXPECT_TRUE(contains(v.err, "valid")) << v.err;
  EXPECT_FALSE(contains(v.err, "INVALID")) << v.err;
  args.back() = "--json";
  Outcome j = shapeflow(args);
  ASSERT_EQ(j.status, 0) << describe(j);
  auto doc = nlohmann::json::parse(j.out);
  EXPECT_GT(doc["whole_domain_worst"].get<double>(), 1.05);
  ASSERT_EQ(doc["ranges"].size(), 2u);
  int64_t volume = 0;
  for (const auto &range : doc["ranges"]) {
    int64_t v = 1;
    for (const auto &[name, lohi] : range["dims"].items()) v *= lohi[1].get<int64_t>() - lohi[0].get<int64_t>() + 1;
    volume += v;
    EXPECT_LE(range["worst_ratio"].get<double>(), 1.05);
    ASSERT_FALSE(range["judged_at"].empty());
    for (const auto &at : range["judged_at"])
      for (const auto &[name, value] : at["sizes"].items()) {
        EXPECT_GE(value.get<int64_t>(), range["dims"][name][0].get<int64_t>());
        EXPECT_LE(value.get<int64_t>(), range["dims"][name][1].get<int64_t>());
      }
    EXPECT_TRUE(range["plan"].contains("buffers"));
  }
  // S and T in 1..8: every size once.
  EXPECT_EQ(volume, 8 * 8);
  // Each range decides its own placement: one plan's options do not go with it.
  for (const char *one : {"--at", "--reference"}) {
    args.back() = one;
    args.push_back("S=3");
    Outcome bad = shapeflow(args);
    EXPECT_EQ(bad.status, 2) << describe(bad);
    EXPECT_TRUE(contains(bad.err, "--at, --reference and --svg go with one plan")) << bad.err;
    args.pop_back();
  }
}

TEST(CliPlan, AtAddsTheNumbersAndDerivedSizesComeInDefinitionOrder) {
  Outcome r = shapeflow({"plan", sourceRoot() + "/examples/tiny_cnn.onnx", "--dim", "N=1..4", "--dim",
                         "H=8..64", "--dim", "W=8..64", "--at", "N=2,H=32,W=40", "--json"});
  ASSERT_EQ(r.status, 0) << describe(r);
  auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["at"]["H"], 32);
  ASSERT_TRUE(doc["at_values"]["peak"].is_number_integer()) << r.out.substr(0, 400);
  EXPECT_GE(doc["at_values"]["peak"].get<int64_t>(), doc["at_values"]["lower_bound"].get<int64_t>());
  // Each derived size is defined before one that names it.
  std::vector<std::string> seen;
  for (auto &[name, d] : doc["derived"].items()) {
    std::string expr = d.is_object() ? d["expr"].get<std::string>() : d.dump();
    for (auto &[other, unused] : doc["derived"].items())
      if (other != name && expr.find(other + " ") != std::string::npos)
        EXPECT_NE(std::find(seen.begin(), seen.end(), other), seen.end()) << name << " uses " << other << " first";
    seen.push_back(name);
  }
  Outcome text = shapeflow({"plan", sourceRoot() + "/examples/tiny_cnn.onnx", "--dim", "N=1..4", "--dim", "H=8..64",
                            "--dim", "W=8..64"});
  EXPECT_TRUE(contains(text.out, "peak over every size     at most ")) << describe(text);
}

TEST(CliOps, TheOpTableIsCurrent) {
  // docs/OPS.md is `shapeflow ops --markdown`; regenerate it when ops or kernels change.
  Outcome r = shapeflow({"ops", "--markdown"});
  EXPECT_EQ(r.status, 0) << describe(r);
  EXPECT_TRUE(contains(r.out, "| ai.onnx | Attention | - | yes | yes |")) << describe(r);
  std::ifstream in(sourceRoot() + "/docs/OPS.md");
  std::stringstream doc;
  doc << in.rdbuf();
  EXPECT_EQ(doc.str(), r.out) << "docs/OPS.md is not `shapeflow ops --markdown`: regenerate it";
}
