// Kernels of the control-flow ops (src/ops/control_flow.cpp): If, Loop, Scan.
// If runs the branch its condition picks; Loop, its trip count and condition, carried values, scan
// outputs stacked along a new first axis; Scan (opset 9+: scan inputs sliced along their axes,
// forward or reverse, scan outputs stacked; opset 8: the same per element of a batch axis).
// Bodies run through the executor, so every tensor inside them is checked against its rule as
// in the main graph.
#include "../kernel_util.h"

#include <algorithm>
#include <tuple>

namespace sf::eval::detail {
namespace {

using TensorRef = std::shared_ptr<const Tensor>;

/// The body's formal inputs (the values it captures from outside are the node's extra inputs,
/// after the declared ones).
size_t formalsOf(const Graph &body) {
  size_t n = 0;
  for (OutletId o : body.inputs)
    n += !body.nodes[o.node].isCaptured();
  return n;
}

Result<bool> truth(const Tensor &t) {
  if (t.elementCount() != 1) return errorf("the condition has {} elements, not 1", t.elementCount());
  SF_ASSIGN(auto v, doubles(t));
  return v[0] != 0;
}

Result<void> ifKernel(EvalContext &ctx) {
  SF_ASSIGN(bool c, truth(ctx.input(0)));
  SF_ASSIGN(GraphPtr body, ctx.attrs().getGraph(c ? "then_branch" : "else_branch"));
  SF_ASSIGN(auto outs, ctx.runBody(*body, {}));
  if (outs.size() != ctx.numOutputs())
    return errorf("the {} branch has {} outputs, the node {}", c ? "then" : "else", outs.size(), ctx.numOutputs());
  for (size_t k = 0; k < outs.size(); ++k) {
    if (!outs[k]) return errorf("the branch did not compute output {}", k);
    SF_TRY(ctx.setOutput(k, outs[k]));
  }
  return success();
}

/// Stacks tensors of one shape along a new axis `axis` (0 .. rank).
Result<Tensor> stack(EvalContext &ctx, const std::vector<TensorRef> &parts, size_t axis, ElementType type,
                     const Shape &elementShape) {
  Shape out = elementShape;
  out.insert(out.begin() + long(axis), int64_t(parts.size()));
  size_t elem = elementSize(type);
  int64_t outer = 1, inner = 1;
  outer = dimsProduct(elementShape, 0, axis);
  inner = dimsProduct(elementShape, axis, elementShape.size());
  SF_ASSIGN(auto bytes, ctx.allocate(type, out));
  for (size_t k = 0; k < parts.size(); ++k) {
    if (parts[k]->type() != type || parts[k]->shape() != elementShape)
      return errorf("iteration {} made {}{}, earlier ones {}{}", k, shortName(parts[k]->type()),
                    shapeText(parts[k]->shape()), shortName(type), shapeText(elementShape));
    for (int64_t o = 0; o < outer; ++o)
      copyBytes(bytes.data() + size_t((o * int64_t(parts.size()) + int64_t(k)) * inner) * elem,
                  parts[k]->bytes().data() + size_t(o * inner) * elem, size_t(inner) * elem);
  }
  return std::move(bytes).tensor(type, out);
}

Result<void> loopKernel(EvalContext &ctx) {
  SF_ASSIGN(GraphPtr body, ctx.attrs().getGraph("body"));
  std::optional<int64_t> trips;
  if (ctx.hasInput(0)) {
    SF_ASSIGN(auto m, ints(ctx.input(0)));
    if (m.size() != 1) return errorf("M has {} elements", m.size());
    trips = m[0];
  }
  bool cond = true;
  if (ctx.hasInput(1)) {
    SF_ASSIGN(cond, truth(ctx.input(1)));
  }
  size_t formals0 = formalsOf(*body);
  if (formals0 < 2) return errorf("the body has {} inputs, at least 2 expected", formals0);
  size_t carried = formals0 - 2;
  std::vector<Value> state;
  for (size_t i = 0; i < carried; ++i) {
    if (!ctx.value(2 + i)) return errorf("carried value {} is not given", i);
    state.push_back(ctx.value(2 + i));
  }
  size_t scans = ctx.numOutputs() > carried ? ctx.numOutputs() - carried : 0;
  std::vector<std::vector<TensorRef>> scanParts(scans);
  const int64_t kMaxTrips = int64_t(1) << 24;
  int64_t i = 0;
  for (; (!trips || i < *trips) && cond; ++i) {
    if (i >= kMaxTrips) return errorf("more than {} iterations", kMaxTrips);
    std::vector<Value> formals;
    formals.push_back(Value(std::make_shared<const Tensor>(Tensor::fromInt64s({}, {i}).value())));
    SF_ASSIGN(Tensor c, Tensor::fromInt64s({}, {cond ? 1 : 0}, ElementType::Bool));
    formals.push_back(Value(std::make_shared<const Tensor>(std::move(c))));
    for (const auto &s : state) formals.push_back(s);
    SF_ASSIGN(auto outs, ctx.runBody(*body, formals));
    if (outs.size() != 1 + carried + scans)
      return errorf("the body has {} outputs, expected {}", outs.size(), 1 + carried + scans);
    for (const auto &o : outs)
      if (!o) return errorf("the body did not compute an output");
    if (!outs[0].isTensor()) return errorf("the body's condition is {}", outs[0].describe());
    SF_ASSIGN(cond, truth(*outs[0]));
    for (size_t k = 0; k < carried; ++k) state[k] = outs[1 + k];
    for (size_t k = 0; k < scans; ++k) {
      if (!outs[1 + carried + k].isTensor())
        return errorf("scan output {} is {}", k, outs[1 + carried + k].describe());
      scanParts[k].push_back(outs[1 + carried + k].tensor());
    }
  }
  for (size_t k = 0; k < carried; ++k) SF_TRY(ctx.setOutput(k, state[k]));
  for (size_t k = 0; k < scans; ++k) {
    if (scanParts[k].empty()) {
      // No iteration: an empty stack of the inferred element type and of one round's inferred
      // rank, its dims where they are numbers and 0 where not (as onnxruntime makes it from the
      // body's shape: [0, 4], and [0, 0] where the 4 is a size only the body would know); [0]
      // where the rank is unknown.
      const Fact &f = ctx.node().outputs[carried + k].fact;
      ElementType t = f.type == ElementType::Undefined ? ElementType::F32 : f.type;
      Shape empty{0};
      if (f.shape.rankIsStatic() && f.shape.size() >= 1)
        for (size_t d = 1; d < f.shape.size(); ++d) empty.push_back(f.shape[d].isStatic() ? f.shape[d].length() : 0);
      SF_ASSIGN(Tensor e, Tensor::fromDoubles(t, empty, {}));
      SF_TRY(ctx.setOutput(carried + k, std::move(e)));
      continue;
    }
    SF_ASSIGN(Tensor t, stack(ctx, scanParts[k], 0, scanParts[k][0]->type(), scanParts[k][0]->shape()));
    SF_TRY(ctx.setOutput(carried + k, std::move(t)));
  }
  return success();
}

/// Slice `k` of `t` along `axis` (the axis removed).
Result<Tensor> sliceAt(EvalContext &ctx, const Tensor &t, size_t axis, int64_t k) {
  Shape out = t.shape();
  out.erase(out.begin() + long(axis));
  int64_t outer = 1, inner = 1, len = t.shape()[axis];
  outer = dimsProduct(t.shape(), 0, axis);
  inner = dimsProduct(t.shape(), axis + 1, t.shape().size());
  size_t elem = elementSize(t.type());
  SF_ASSIGN(auto bytes, ctx.allocate(t.type(), out));
  for (int64_t o = 0; o < outer; ++o)
    copyBytes(bytes.data() + size_t(o * inner) * elem, t.bytes().data() + size_t((o * len + k) * inner) * elem,
                size_t(inner) * elem);
  return std::move(bytes).tensor(t.type(), out);
}

/// Scan before opset 9: input 0 is the optional sequence_lens, every state and scan input has a
/// batch axis first, and each batch element is scanned along axis 1 on its own (`directions`
/// per scan input); outputs are stacked back along the batch axis.
Result<void> scan8Kernel(EvalContext &ctx) {
  SF_ASSIGN(GraphPtr body, ctx.attrs().getGraph("body"));
  SF_ASSIGN(int64_t m, ctx.attrs().getInt("num_scan_inputs"));
  size_t nIn = formalsOf(*body);
  if (m < 0 || size_t(m) > nIn) return errorf("num_scan_inputs {} for {} inputs", m, nIn);
  size_t states = nIn - size_t(m);
  if (ctx.numOutputs() < states) return errorf("{} outputs for {} states", ctx.numOutputs(), states);
  size_t scansOut = ctx.numOutputs() - states;
  SF_ASSIGN(auto dirs, ctx.attrs().getInts("directions", std::vector<int64_t>(size_t(m), 0)));
  if (dirs.size() != size_t(m)) return errorf("{} directions for {} scan inputs", dirs.size(), m);
  for (size_t i = 1; i < 1 + nIn; ++i)
    if (!ctx.hasInput(i) || ctx.input(i).rank() < 1) return errorf("input {} must be a tensor with a batch axis", i);
  int64_t batch = ctx.input(1).shape()[0];
  for (size_t i = 1; i < 1 + nIn; ++i)
    if (ctx.input(i).shape()[0] != batch) return errorf("input {} has batch {}, input 1 {}", i, ctx.input(i).shape()[0], batch);
  std::vector<std::vector<TensorRef>> finalStates(states), scanned(scansOut);
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<Value> state;
    for (size_t i = 0; i < states; ++i) {
      SF_ASSIGN(Tensor t, sliceAt(ctx, ctx.input(1 + i), 0, b));
      state.push_back(Value(std::make_shared<const Tensor>(std::move(t))));
    }
    std::vector<Tensor> seqs;
    int64_t len = -1;
    for (size_t j = 0; j < size_t(m); ++j) {
      SF_ASSIGN(Tensor t, sliceAt(ctx, ctx.input(1 + states + j), 0, b));
      if (t.rank() < 1) return errorf("scan input {} has no sequence axis", j);
      if (len >= 0 && t.shape()[0] != len) return errorf("scan inputs of lengths {} and {}", len, t.shape()[0]);
      len = t.shape()[0];
      seqs.push_back(std::move(t));
    }
    if (len < 0) len = 0;
    if (ctx.hasInput(0)) {
      SF_ASSIGN(auto lens, ints(ctx.input(0)));
      if (size_t(b) >= lens.size() || lens[size_t(b)] != len)
        return errorf("sequence_lens shorter than the sequence ({}) are not supported", len);
    }
    std::vector<std::vector<TensorRef>> parts(scansOut);
    for (int64_t it = 0; it < len; ++it) {
      std::vector<Value> formals = state;
      for (size_t j = 0; j < size_t(m); ++j) {
        SF_ASSIGN(Tensor s, sliceAt(ctx, seqs[j], 0, dirs[j] ? len - 1 - it : it));
        formals.push_back(Value(std::make_shared<const Tensor>(std::move(s))));
      }
      SF_ASSIGN(auto outs, ctx.runBody(*body, formals));
      if (outs.size() != states + scansOut) return errorf("the body has {} outputs", outs.size());
      for (const auto &o : outs)
        if (!o.isTensor()) return errorf("the body made {}", o.describe());
      for (size_t k = 0; k < states; ++k) state[k] = outs[k];
      for (size_t k = 0; k < scansOut; ++k) parts[k].push_back(outs[states + k].tensor());
    }
    for (size_t k = 0; k < states; ++k) finalStates[k].push_back(state[k].tensor());
    for (size_t k = 0; k < scansOut; ++k) {
      if (parts[k].empty()) return errorf("a scan of length 0");
      SF_ASSIGN(Tensor t, stack(ctx, parts[k], 0, parts[k][0]->type(), parts[k][0]->shape()));
      scanned[k].push_back(std::make_shared<const Tensor>(std::move(t)));
    }
  }
  auto stackBatch = [&](const std::vector<TensorRef> &v, size_t out) -> Result<void> {
    if (v.empty()) return errorf("a batch of 0");
    SF_ASSIGN(Tensor t, stack(ctx, v, 0, v[0]->type(), v[0]->shape()));
    return ctx.setOutput(out, std::move(t));
  };
  for (size_t k = 0; k < states; ++k) SF_TRY(stackBatch(finalStates[k], k));
  for (size_t k = 0; k < scansOut; ++k) SF_TRY(stackBatch(scanned[k], states + k));
  return success();
}

Result<void> scanKernel(EvalContext &ctx) {
  if (ctx.opset() < 9) return scan8Kernel(ctx);
  SF_ASSIGN(GraphPtr body, ctx.attrs().getGraph("body"));
  SF_ASSIGN(int64_t m, ctx.attrs().getInt("num_scan_inputs"));
  size_t nIn = formalsOf(*body);
  if (m < 0 || size_t(m) > nIn) return errorf("num_scan_inputs {} for {} inputs", m, nIn);
  size_t states = nIn - size_t(m);
  if (ctx.numOutputs() < states) return errorf("{} outputs for {} states", ctx.numOutputs(), states);
  size_t scansOut = ctx.numOutputs() - states;
  SF_ASSIGN(auto inAxes, ctx.attrs().getInts("scan_input_axes", std::vector<int64_t>(size_t(m), 0)));
  SF_ASSIGN(auto inDirs, ctx.attrs().getInts("scan_input_directions", std::vector<int64_t>(size_t(m), 0)));
  SF_ASSIGN(auto outAxes, ctx.attrs().getInts("scan_output_axes", std::vector<int64_t>(scansOut, 0)));
  SF_ASSIGN(auto outDirs, ctx.attrs().getInts("scan_output_directions", std::vector<int64_t>(scansOut, 0)));
  // Each list, where given, has an entry per scan input or per scan output (as onnxruntime checks).
  for (auto [name, list, want] : {std::tuple{"scan_input_axes", &inAxes, size_t(m)},
                                  std::tuple{"scan_input_directions", &inDirs, size_t(m)},
                                  std::tuple{"scan_output_axes", &outAxes, scansOut},
                                  std::tuple{"scan_output_directions", &outDirs, scansOut}})
    if (list->size() != want) return errorf("{} has {} entries, expected {}", name, list->size(), want);
  int64_t len = -1;
  std::vector<size_t> axes;
  for (size_t j = 0; j < size_t(m); ++j) {
    if (!ctx.hasInput(states + j)) return errorf("scan input {} is {}", j, ctx.value(states + j).describe());
    const Tensor &t = ctx.input(states + j);
    SF_ASSIGN(size_t a, normAxis(inAxes[j], t.shape().size()));
    axes.push_back(a);
    if (len >= 0 && t.shape()[a] != len) return errorf("scan inputs of lengths {} and {}", len, t.shape()[a]);
    len = t.shape()[a];
  }
  if (len < 0) len = 0;
  std::vector<Value> state;
  for (size_t i = 0; i < states; ++i) state.push_back(ctx.value(i));
  std::vector<std::vector<TensorRef>> parts(scansOut);
  for (int64_t it = 0; it < len; ++it) {
    std::vector<Value> formals = state;
    for (size_t j = 0; j < size_t(m); ++j) {
      int64_t k = inDirs[j] ? len - 1 - it : it;
      SF_ASSIGN(Tensor s, sliceAt(ctx, ctx.input(states + j), axes[j], k));
      formals.push_back(Value(std::make_shared<const Tensor>(std::move(s))));
    }
    SF_ASSIGN(auto outs, ctx.runBody(*body, formals));
    if (outs.size() != states + scansOut) return errorf("the body has {} outputs", outs.size());
    for (size_t k = 0; k < states; ++k) state[k] = outs[k];
    for (size_t k = 0; k < scansOut; ++k) {
      if (!outs[states + k].isTensor()) return errorf("scan output {} is {}", k, outs[states + k].describe());
      parts[k].push_back(outs[states + k].tensor());
    }
  }
  for (size_t k = 0; k < states; ++k) SF_TRY(ctx.setOutput(k, state[k]));
  for (size_t k = 0; k < scansOut; ++k) {
    if (parts[k].empty()) return errorf("a scan of length 0");
    if (outDirs[k]) std::reverse(parts[k].begin(), parts[k].end());
    SF_ASSIGN(size_t a, normAxis(outAxes[k], parts[k][0]->shape().size() + 1));
    SF_ASSIGN(Tensor t, stack(ctx, parts[k], a, parts[k][0]->type(), parts[k][0]->shape()));
    SF_TRY(ctx.setOutput(states + k, std::move(t)));
  }
  return success();
}

} // namespace

Result<void> registerControlFlowKernels(OpRegistry &r) {
  SF_TRY(setSequenceKernel(r, "If", ifKernel));
  SF_TRY(setSequenceKernel(r, "Loop", loopKernel));
  SF_TRY(setSequenceKernel(r, "Scan", scanKernel));
  return success();
}

} // namespace sf::eval::detail
