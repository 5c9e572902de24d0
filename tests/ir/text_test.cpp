// The text form: exact printed text of typical graphs, round trips (print(parse(print(g))) ==
// print(g)) of many graphs, graphs built in code, and parse errors with line:column.
#include "shapeflow/dim/parse.h"
#include "shapeflow/ir/text.h"

#include "ir_test_util.h"

namespace sf {
namespace {

/// Parses, prints, parses the print and prints again: the two prints must be equal. Returns the
/// first print.
std::string roundTrip(std::string_view text, PrintOptions options = {}) {
  Graph g = GET(parseGraph(text));
  std::string once = printGraph(g, options);
  auto again = parseGraph(once);
  if (!again.ok()) {
    ADD_FAILURE() << "reparse failed: " << again.error().message << "\n" << once;
    return once;
  }
  std::string twice = printGraph(*again, options);
  EXPECT_EQ(once, twice);
  return once;
}

std::string parseError(std::string_view text) {
  auto g = parseGraph(text);
  if (g.ok()) return "<parsed>";
  return g.error().message;
}

TEST(Text, CanonicalPrint) {
  const char *text = R"(# a comment
symbol N 1..64          # a symbol with a range
opset 17
graph main(x: f32[N,3,H,W], w: f32[16,3,3,3]) {
  c = Constant() {value = i64[2] [1, -1]}
  y = Conv(x, w) {kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1]}
  a, b = Split(y) {axis = 1} @split0   # a node name after @
  z = Add(a, )                          # an absent optional input
  r = Reshape(z, c)
  return y, r
}
)";
  EXPECT_EQ(roundTrip(text), R"(symbol N 1..64
opset 17
graph main(x: f32[N,3,H,W], w: f32[16,3,3,3]) {
  c = Constant() {value = i64[2] [1, -1]}
  y = Conv(x, w) {kernel_shape = [3, 3], strides = [2, 2], pads = [1, 1, 1, 1]}
  a, b = Split(y) {axis = 1} @split0
  z = Add(a, )
  r = Reshape(z, c)
  return y, r
}
)");
  Graph g = GET(parseGraph(text));
  CHECK_OK(g.verify());
  EXPECT_EQ(g.inputs.size(), 2u);
  EXPECT_EQ(g.outputs.size(), 2u);
  auto split = g.findOutlet("b");
  ASSERT_TRUE(split);
  const Node &s = g.nodes[split->node];
  EXPECT_EQ(s.name, "split0");
  EXPECT_EQ(s.opType, "Split");
  EXPECT_EQ(s.opsetVersion, 17);
  EXPECT_EQ(GET(s.attrs.getInt("axis")), 1);
  const Node &add = g.nodes[g.findOutlet("z")->node];
  ASSERT_EQ(add.inputs.size(), 2u);
  EXPECT_FALSE(add.inputs[1].valid());
  const Node &c = g.nodes[g.findOutlet("c")->node];
  EXPECT_EQ(c.opsetVersion, 0); // constants carry no opset
  EXPECT_EQ(toString(c.outputs[0].fact), "i64[2] = [1,-1]");
  EXPECT_TRUE(c.outputs[0].fact.constant);
  ExprScope scope = g.enter(); // the graph's symbols live in its context
  auto n = g.symbols.find("N");
  ASSERT_TRUE(n);
  EXPECT_EQ(symbolInfo(*n).range, (Interval{1, 64}));
  EXPECT_EQ(g.nodes[g.inputs[0].node].outputs[0].fact.shape[0].interval(), (Interval{1, 64}));
}

TEST(Text, FactsOption) {
  const char *text = R"(graph g(x: f32[N,3,H,W]) {
  s: i64[4] = [N,3,H,W] = Shape(x)
  i: i64[] = [(H - 1)//2 + 1] = Gather(s)
  m: i64[2] = [-1,-N + 1] = Foo(s)
  v: i64[3] = [?,?{1..8},?{-4..}] = Bar(s)
  k: i64[1] = [min(H, 4)] = Baz(s)
  y: f32[...] = Reshape(x, s)
  return y, i, m, v, k
}
)";
  PrintOptions withFacts;
  withFacts.facts = true;
  EXPECT_EQ(roundTrip(text, withFacts), text);
  Graph g = GET(parseGraph(text));
  // Facts written in the text are what the graph declares (Outlet::declared).
  const Fact &m = *g.outlet(*g.findOutlet("m")).declared;
  ASSERT_TRUE(m.value);
  EXPECT_EQ((*m.value)[0], Dimension::constantValue(-1));
  EXPECT_EQ((*m.value)[1].toString(), "-N + 1");
  EXPECT_EQ((*m.value)[1].maxLength(), 1); // not clamped to a tensor dim
  const Fact &v = *g.outlet(*g.findOutlet("v")).declared;
  EXPECT_EQ((*v.value)[2].interval(), (Interval{-4, kInf}));
  // Without the option the facts are left out.
  EXPECT_EQ(printGraph(g).find("i64[4]"), std::string::npos);
}

TEST(Text, Subgraphs) {
  const char *text = R"(opset 13
graph main(cond: bool[], x: f32[N], n: i64[]) {
  y = If(cond, x) {then_branch = graph then_b(x_in: f32[N] {captured = 1}) {
      r = Relu(x_in)
      return r
    }, else_branch = graph else_b(x_in: f32[N] {captured = 1}) {
      return x_in
    }}
  out, scan = Loop(n, , y, x) {body = graph body(i: i64[], c: bool[], acc: f32[N], outer: f32[N] {captured = 3}) {
      c2 = Identity(c)
      acc2 = Add(acc, outer)
      inner = If(c2, outer) {then_branch = graph t2(a: f32[N] {captured = 1}) {
          return a
        }, else_branch = graph e2(a: f32[N] {captured = 1}) {
          return a
        }} @inner_if
      return c2, acc2, inner
    }}
  return out, scan
}
)";
  EXPECT_EQ(roundTrip(text), text);
  Graph g = GET(parseGraph(text));
  CHECK_OK(g.verify());
  const Node &loop = g.nodes[g.findOutlet("out")->node];
  EXPECT_EQ(loop.inputs.size(), 4u);
  EXPECT_FALSE(loop.inputs[1].valid());
  GraphPtr body = GET(loop.attrs.getGraph("body"));
  EXPECT_EQ(body->name, "body");
  EXPECT_EQ(body->inputs.size(), 4u);
  EXPECT_EQ(body->formalInputCount(), 3u);
  const Node &outer = body->nodes[body->inputs[3].node];
  EXPECT_TRUE(outer.isCaptured());
  EXPECT_EQ(GET(outer.attrs.getInt("captured")), 3);
  EXPECT_EQ(body->nodes[body->findOutlet("acc2")->node].opsetVersion, 13);
  // Subgraph dims share the root graph's symbols.
  EXPECT_EQ(body->fact(body->inputs[2]).shape[0], g.fact(g.inputs[1]).shape[0]);
  // A bad capture index is caught when parsing.
  std::string bad = text;
  bad.replace(bad.find("captured = 3"), 12, "captured = 9");
  EXPECT_NE(parseError(bad).find("'outer' (Parameter) captures input 9 of its owner, which has 4 inputs"),
            std::string::npos)
      << parseError(bad);
}

TEST(Text, GraphListsAndEmptyGraphs) {
  roundTrip(R"(graph g() {
  a = Foo() {branches = [graph b0() {
      return
    }, graph b1(p: i64[]) {
      q = Neg(p)
      return q
    }]}
  return
}
)");
  EXPECT_EQ(roundTrip("graph empty() {}"), "graph empty() {\n  return\n}\n");
}

TEST(Text, AbsentInputs) {
  const char *text = R"(graph g(x: f32[2], r: f32[4]) {
  a = Resize(x, , r)
  b = Resize(x, , )
  c = Foo(, x)
  d = Foo("")
  e = Foo(, )
  f = Foo()
  return a, b, c, d, e, f
}
)";
  EXPECT_EQ(roundTrip(text), text);
  Graph g = GET(parseGraph(text));
  auto inputsOf = [&](const char *name) { return g.nodes[g.findOutlet(name)->node].inputs; };
  EXPECT_EQ(inputsOf("b").size(), 3u);
  EXPECT_FALSE(inputsOf("b")[2].valid());
  EXPECT_EQ(inputsOf("d").size(), 1u);
  EXPECT_FALSE(inputsOf("d")[0].valid());
  EXPECT_EQ(inputsOf("e").size(), 2u);
  EXPECT_EQ(inputsOf("f").size(), 0u);
}

TEST(Text, Tensors) {
  const char *text = R"(graph g() {
  a = Constant() {value = f32[] 0.5}
  b = Constant() {value = i64[] -3}
  c = Constant() {value = bool[3] [true, false, true]}
  d = Constant() {value = str[2] ["a b", "q\"\\\n\x01"]}
  e = Constant() {value = f16[3] [0.099975586, 65504.0, -inf]}
  f = Constant() {value = bf16[1] [3.140625]}
  g = Constant() {value = f64[2] [0.1, 1e+300]}
  h = Constant() {value = u8[0] []}
  i = Constant() {value = c64[] [1.0, -2.0]}
  j = Constant() {value = u64[1] [18446744073709551615]}
  k = Constant() {value = f32[2,2] [1.0, 2.0, 3.0, nan]}
  l = Constant() {value = f32[64,3,7,7] <9408 elements>}
  return a, b, c, d, e, f, g, h, i, j, k, l
}
)";
  EXPECT_EQ(roundTrip(text), text);
  Graph g = GET(parseGraph(text));
  auto tensorOf = [&](const char *name) {
    return GET(g.nodes[g.findOutlet(name)->node].attrs.getTensor("value"));
  };
  EXPECT_EQ(tensorOf("a")->rank(), 0u);
  EXPECT_EQ(GET(tensorOf("a")->toDoubles(1))[0], 0.5);
  EXPECT_EQ(tensorOf("d")->strings()[1], "q\"\\\n\x01");
  EXPECT_FALSE(tensorOf("l")->hasData());
  EXPECT_EQ(toString(g.fact(*g.findOutlet("l"))), "f32[64,3,7,7]");
  EXPECT_EQ(toString(g.fact(*g.findOutlet("b"))), "i64[] = [-3]");
  // Bare scalars and bracketed scalars both read.
  Graph s = GET(parseGraph("graph g() { a = Constant() {value = f32[] [2.0]} return a }"));
  EXPECT_EQ(printGraph(s), "graph g() {\n  a = Constant() {value = f32[] 2.0}\n  return a\n}\n");
}

TEST(Text, LargeTensorsAreElidedByOption) {
  Graph g;
  std::vector<int64_t> v(300);
  for (size_t i = 0; i < v.size(); ++i) v[i] = int64_t(i);
  OutletId c = GET(g.addConstant("c", Tensor::fromInt64s(v)));
  g.outputs.push_back(c);
  std::string shortForm = printGraph(g);
  EXPECT_NE(shortForm.find("i64[300] <300 elements>"), std::string::npos);
  PrintOptions all;
  all.maxTensorElements = SIZE_MAX;
  std::string full = printGraph(g, all);
  EXPECT_NE(full.find("298, 299]"), std::string::npos);
  Graph back = GET(parseGraph(full));
  EXPECT_EQ(*GET(back.nodes[0].attrs.getTensor("value")), Tensor::fromInt64s(v));
  EXPECT_EQ(printGraph(back, all), full);
}

TEST(Text, AttributeValues) {
  const char *text = R"(graph g(x: f32[1]) {
  y = Foo(x) {i = -7, f = 0.1, g = 1e-05, h = -inf, k = 2.0, big = 1e+300, tiny = 1.0000000000000002, s = "SAME_UPPER", esc = "a\tb\x7f", ints = [1, -2], floats = [0.5, 1.0], strs = ["a", ""], empty = [], t = i32[2] [1, 2], ts = [i64[] 1, f32[1] [0.5]], g2 = graph sub() {
      return
    }}
  return y
}
)";
  EXPECT_EQ(roundTrip(text), text);
  Graph g = GET(parseGraph(text));
  const Attributes &a = g.nodes[g.findOutlet("y")->node].attrs;
  EXPECT_EQ(a.find("i")->kind(), AttributeKind::Int);
  EXPECT_EQ(a.find("k")->kind(), AttributeKind::Float);
  EXPECT_EQ(GET(a.getFloat("f")), 0.1);
  EXPECT_EQ(GET(a.getFloat("tiny")), 1.0000000000000002);
  EXPECT_EQ(a.find("floats")->kind(), AttributeKind::Floats);
  EXPECT_EQ(a.find("empty")->kind(), AttributeKind::Ints);
  EXPECT_EQ(a.find("ts")->kind(), AttributeKind::Tensors);
  EXPECT_EQ(GET(a.getString("esc")), "a\tb\x7f");
  // Mixed int/float lists read as floats; floats always print with a '.' or an exponent.
  Graph m = GET(parseGraph("graph g() { y = Foo() {v = [1, 0.5], w = 3.0} return y }"));
  EXPECT_EQ(printGraph(m), "graph g() {\n  y = Foo() {v = [1.0, 0.5], w = 3.0}\n  return y\n}\n");
}

TEST(Text, FloatAttributesFromCode) {
  Graph g;
  GET(g.addNode("Foo", "y", {}, 1,
                Attributes{{"f32", double(0.1f)}, {"f64", 0.1}, {"third", 1.0 / 3}, {"whole", 4.0}}));
  std::string p = printGraph(g);
  EXPECT_NE(p.find("f32 = 0.1, f64 = 0.1, third = 0.3333333333333333, whole = 4.0"),
            std::string::npos)
      << p;
  Graph back = GET(parseGraph(p));
  EXPECT_EQ(printGraph(back), p);
}

TEST(Text, Names) {
  const char *text = R"(graph "main graph"(input.1: f32[1], "/model/x": f32[1]) {
  "onnx::Add_3" = Add(input.1, "/model/x") @"/model/Add"
  "return" = Neg("onnx::Add_3")
  "", second = Split("return")
  7 = Relu(second)
  "with space", x.y_z = Foo(7)
  Print(x.y_z) @printer
  return "onnx::Add_3", "return", 7
}
)";
  EXPECT_EQ(roundTrip(text), text);
  Graph g = GET(parseGraph(text));
  EXPECT_EQ(g.name, "main graph");
  EXPECT_EQ(g.nodes[g.findOutlet("onnx::Add_3")->node].name, "/model/Add");
  const Node &print = g.nodes.back();
  EXPECT_EQ(print.opType, "Print");
  EXPECT_TRUE(print.outputs.empty());
  EXPECT_EQ(print.name, "printer");
}

TEST(Text, OpsetsAndDomains) {
  const char *text = R"(opset 13
opset com.microsoft 1
graph g(x: f32[1]) {
  a = Relu(x)
  b = Relu:11(a)
  c = com.microsoft.FusedGemm(b)
  d = com.microsoft.FusedGemm:2(c)
  d2 = com.microsoft.FusedGemm(d)
  e = ai.onnx.ml.Scaler(d2)
  f = Constant:9() {value = f32[] 1.0}
  return e, f
}
)";
  EXPECT_EQ(roundTrip(text), text);
  Graph g = GET(parseGraph(text));
  auto node = [&](const char *n) -> const Node & { return g.nodes[g.findOutlet(n)->node]; };
  EXPECT_EQ(node("a").opsetVersion, 13);
  EXPECT_EQ(node("b").opsetVersion, 11);
  EXPECT_EQ(node("c").domain, "com.microsoft");
  EXPECT_EQ(node("c").opType, "FusedGemm");
  EXPECT_EQ(node("c").opsetVersion, 1);
  EXPECT_EQ(node("d").opsetVersion, 2);
  EXPECT_EQ(node("e").domain, "ai.onnx.ml");
  EXPECT_EQ(node("e").opsetVersion, 0);
  EXPECT_EQ(node("f").opsetVersion, 9);
}

TEST(Text, ForwardReferencesAndCycles) {
  const char *text = R"(graph g(x: f32[1]) {
  b = Neg(a)
  a = Relu(x)
  c = Add(c, b)
  return c
}
)";
  EXPECT_EQ(roundTrip(text), text);
  Graph g = GET(parseGraph(text));
  CHECK_OK(g.verify());
  EXPECT_EQ(irtest::errorOf(g.topologicalOrder()), "cycle: c -> c");
  Graph h = GET(parseGraph("graph g() { a = Neg(c) b = Neg(a) c = Neg(b) return c }"));
  EXPECT_EQ(irtest::errorOf(h.topologicalOrder()), "cycle: a -> b -> c -> a");
}

TEST(Text, SymbolsAndRanges) {
  const char *text = R"(symbol B 1..8
symbol S 1..
symbol T 0..512
graph g(x: f32[B,S,T], y: f32[?{1..8},?,2*S + 1], z: f32[(S - 1)//2 + 1,min(T, 512)], u: f32[...]) {
  return x
}
)";
  roundTrip(text);
  Graph g = GET(parseGraph(text));
  EXPECT_EQ(g.fact(g.inputs[0]).shape[0].interval(), (Interval{1, 8}));
  EXPECT_EQ(g.fact(g.inputs[0]).shape[1].interval(), (Interval{1, kInf}));
  EXPECT_FALSE(g.fact(g.inputs[3]).shape.rankIsStatic());
  // A point range makes the symbol a constant.
  Graph p = GET(parseGraph("symbol K 4\ngraph g(x: f32[K]) { return x }"));
  EXPECT_EQ(printGraph(p), "symbol K 4..4\ngraph g(x: f32[4]) {\n  return x\n}\n");
  // An unknown-rank shape.
  Graph u = GET(parseGraph("graph g(x: ?[...]) { return x }"));
  EXPECT_TRUE(u.fact(u.inputs[0]).isUnknown());
}

TEST(Text, SymbolOrderIsKept) {
  // Terms print in the order of their symbols' ids. Symbols made in code in another order
  // than the text mentions them must be declared so that a reparse orders terms the same way.
  Graph g;
  SymbolId w = g.symbols.named("W"); // made first: lower id
  SymbolId h = g.symbols.named("H");
  Expr sum = GET(add(symbol(h), symbol(w)));
  Expr prod = GET(mul(symbol(h), symbol(w)));
  GET(g.addParameter("x", Fact::known(ElementType::F32, PartialShape{Dimension::symbol(h),
                                                                    Dimension(sum)})));
  GET(g.addParameter("y", Fact::known(ElementType::F32, PartialShape{Dimension(prod)})));
  std::string p = printGraph(g);
  EXPECT_EQ(p.substr(0, 18), "symbol W\nsymbol H\n");
  Graph back = GET(parseGraph(p));
  EXPECT_EQ(printGraph(back), p);
  // In the usual case (text order = id order) nothing needs declaring.
  Graph q = GET(parseGraph("graph g(x: f32[H,W,H + W]) { return x }"));
  EXPECT_EQ(printGraph(q).substr(0, 5), "graph");
}

TEST(Text, BuiltInCode) {
  Graph g;
  g.name = "built";
  OutletId x = GET(g.addParameter("x", Fact::known(ElementType::F32, PartialShape{2, 3})));
  OutletId c = GET(g.addConstant("axes", Tensor::fromInt64s({0})));
  uint32_t anon = GET(g.addNode("Unsqueeze", "", {x, c}, 1)); // unnamed but read: gets a name
  uint32_t s = GET(g.addNode("Split", "split", {OutletId{anon, 0}}, 2));
  uint32_t dead = GET(g.addNode("Neg", "dead", {OutletId{s, 1}}, 1));
  CHECK_OK(g.removeNode(dead));
  g.outputs = {{s, 0}, {anon, 0}};
  g.nodes[s].opsetVersion = 18;
  std::string p = printGraph(g);
  EXPECT_EQ(p, R"(opset 18
graph built(x: f32[2,3]) {
  axes = Constant() {value = i64[1] [0]}
  "%2.0" = Unsqueeze:0(x, axes) @""
  split.0, split.1 = Split("%2.0") @split
  return split.0, "%2.0"
}
)");
  Graph back = GET(parseGraph(p));
  EXPECT_EQ(printGraph(back), p);
}

TEST(Text, ManyGraphsRoundTrip) {
  const char *graphs[] = {
      "graph a() {}",
      "graph a(x: f32[]) { return x }",
      "graph a(x: ?[2]) { y, z = TopK(x, x) {axis = -1, largest = 1} return z, y }",
      "graph a(x: i64[?{0..5}]) { y = Shape(x) {start = 0} return y }",
      "graph a(x: u8[N,N,N]) { y = Mul(x, x) return y }",
      "graph a(x: f32[N]) { y = Foo(x) {g = graph b(z: f32[N]) { return z }} return y }",
      "graph a(x: bf16[1,2,3,4,5,6,7,8,9,10]) { return x, x, x }",
      "graph a(x: c128[3]) { y = Foo(x) {v = c128[1] [0.0, -0.0]} return y }",
      "graph a(x: str[2]) { y = Foo(x) {v = str[] \"\"} return y }",
      "graph a(x: f32[2] @xnode) { return x }",
      "graph a(x: f32[2] {note = \"hello\"} @xnode) { return x }",
      "symbol N 2..2\ngraph a(x: f32[N]) { return x }",
      "graph a(x: f32[N*H*W, (N + 1)*(H + 1)]) { return x }",
      "graph a(x: f32[N]) { y = Foo(x) {t = i64[3,0] []} return y }",
  };
  for (const char *text : graphs) {
    SCOPED_TRACE(text);
    roundTrip(text);
    PrintOptions f;
    f.facts = true;
    roundTrip(text, f);
  }
}

TEST(Text, Errors) {
  struct Case {
    const char *text;
    const char *error;
  } cases[] = {
      {"graph g(x: f32[2]) {\n  y = Relu(q)\n  return y\n}", "2:12: unknown name 'q' in graph 'g'"},
      {"graph g(x: f32[2]) {\n  return q\n}", "2:10: unknown name 'q' in graph 'g'"},
      {"graph g(x: f32[N,,3]) {}", "1:18: in '[N,,3]': unexpected ','"},
      {"graph g(x: f33[2]) {}", "1:12: unknown element type 'f33'"},
      {"graph g(x f32[2]) {}", "1:11: expected ':', found 'f'"},
      {"graph g(x: f32[2]) {\n  y = Relu(x\n}", "3:1: expected ')', found '}'"},
      {"graph g(x: f32[2]) {\n  y = Relu(x)\n  y = Neg(x)\n  return y\n}",
       "3:3: name 'y' is already used by an output of 'y' (Relu)"},
      {"graph g(x: f32[2], x: f32[3]) {}", "1:20: name 'x' is already used by an output of 'x' (Parameter)"},
      {"graph g() {\n  y = Foo() {a = 1, a = 2}\n}", "2:21: attribute 'a' is given twice"},
      {"graph g() {\n  y = Foo() {s = \"abc}\n}", "2:18: unterminated string"},
      {"graph g() {\n  y = Foo() {t = i64[3] [1, 2]}\n}",
       "2:25: tensor i64[3] has 3 elements but 2 elements were given"},
      {"graph g() {\n  y = Foo() {t = i8[1] [300]}\n}", "2:24: value 300 does not fit i8"},
      {"graph g() {\n  y = Foo() {t = f32[2] <3 elements>}\n}",
       "2:25: tensor of shape [2] has 2 elements, not 3"},
      {"graph g() {\n  y = Foo() {t = [[1]]}\n}", "2:19: lists of lists are not attribute values"},
      {"graph g() {\n  y = Foo() {t = [1, \"a\"]}\n}", "2:18: a list mixes kinds of values"},
      {"graph g() {\n  y = Foo() {t = str[1] [abc]}\n}", "2:25: string elements must be quoted"},
      {"graph g() {\n  y = Foo() {t = @}\n}", "2:18: expected an attribute value, found '@'"},
      {"graph g() {\n  p = Parameter()\n}", "2:7: a Parameter is declared in the graph's parameter list"},
      {"graph g() {}\ngraph h() {}", "2:1: unexpected text after the graph"},
      {"graph g() {", "1:12: expected '}' (end of graph 'g')"},
      {"symbol N 1..64\nsymbol N 2..3\ngraph g() {}", "2:8: symbol N is declared twice"},
      {"symbol N 9..3\ngraph g() {}", "1:10: empty range"},
      {"opset 1\nopset 2\ngraph g() {}", "2:1: opset of domain '' is declared twice"},
      {"grph g() {}", "1:1: expected 'graph'"},
      {"graph g(x: i64[2] = [N,,3]) {}", "1:24: expected a value element"},
      {"graph g(x: f32[2]) { y = Relu(x) {a = \"\\q\"} }", "1:40: unknown escape '\\q'"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.text);
    EXPECT_EQ(parseError(c.text), c.error);
  }
}

TEST(Text, DeepNestingIsAnError) {
  // Expressions: the dim parser is recursive, so the text parser bounds their nesting.
  std::string deep = "graph g(x: f32[" + std::string(100000, '(') + "N" + std::string(100000, ')') +
                     "]) { return x }";
  EXPECT_EQ(irtest::errorOf(parseGraph(deep)), "1:15: a dimension is nested too deeply");
  std::string deepValue = "graph g(x: i64[1] = [" + std::string(100000, '(') + "N" +
                          std::string(100000, ')') + "]) { return x }";
  EXPECT_EQ(irtest::errorOf(parseGraph(deepValue)), "1:22: a value element is nested too deeply");
  std::string ok = "graph g(x: f32[" + std::string(100, '(') + "N" + std::string(100, ')') +
                   "]) { return x }";
  EXPECT_EQ(printGraph(GET(parseGraph(ok))), "graph g(x: f32[N]) {\n  return x\n}\n");
  // Graphs.
  std::string text;
  for (int i = 0; i < 100; ++i) text += "graph g() { y = Foo() {b = ";
  auto r = parseGraph(text);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("graphs nested too deeply"), std::string::npos);
}

} // namespace
} // namespace sf

namespace sf {
namespace {

// Every prefix and many single-byte mutations of a rich text must parse or fail cleanly (the
// sanitizer build turns a crash or an out-of-bounds read into a failure).
TEST(TextRobustness, PrefixesAndMutations) {
  const std::string text = R"(symbol N 1..64
opset 17
graph main(x: f32[N,3,(H - 1)//2 + 1,?{1..8}], c: bool[]) {
  k = Constant() {value = i64[2] [1, -1]}
  s: i64[4] = [N,-1,min(H, 4),?{-2..}] = Shape(x)
  y = If(c, x) {then_branch = graph t(a: f32[N] {captured = 1}) {
      return a
    }, else_branch = graph e(a: f32[N] {captured = 1}) {
      b = Neg(a) {alpha = 1e-05, s = "q\x01\"", l = [1, 2.5], t = [str[1] ["z"], f16[] inf]}
      return b
    }} @"if node"
  z = com.ms.Foo:3(y, , k)
  return z, s
}
)";
  ASSERT_TRUE(parseGraph(text).ok());
  size_t parsed = 0;
  for (size_t n = 0; n < text.size(); ++n) parsed += parseGraph(text.substr(0, n)).ok();
  EXPECT_EQ(parsed, 1u); // only the text without its final line break
  const char replacements[] = {'\0', '"', '[', ']', '(', ')', '{', '}', ',', '=', ':', '@', '-',
                               '.', '?', '#', '\\', ' ', '\n', 'x', '9'};
  uint64_t state = 12345;
  for (int i = 0; i < 4000; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    std::string m = text;
    size_t at = size_t(state >> 33) % m.size();
    m[at] = replacements[(state >> 20) % sizeof replacements];
    auto g = parseGraph(m);
    if (g.ok()) {
      // What parses prints and reparses to the same text.
      std::string p = printGraph(*g);
      auto back = parseGraph(p);
      ASSERT_TRUE(back.ok()) << back.error().message << "\n" << p;
      ASSERT_EQ(printGraph(*back), p);
    }
  }
}

} // namespace
} // namespace sf

namespace sf {
namespace {

TEST(Text, AValueHasItsShapesElementCount) {
  // A value shorter or longer than its declared shape is refused where it is written.
  EXPECT_EQ(parseError("graph main(s: f32[4] = [1, 2, 3]) {\n  return s\n}\n"),
            "1:24: the value has 3 elements for a shape of 4");
  EXPECT_EQ(parseError("graph main(s: i64[] = [1, 2]) {\n  return s\n}\n"),
            "1:23: the value has 2 elements for a shape of 1");
}

} // namespace
} // namespace sf
