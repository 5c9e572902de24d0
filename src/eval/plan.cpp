// prepare(): a graph made ready to run (eval/plan.h).
#include "shapeflow/eval/plan.h"

#include "shapeflow/eval/arena.h"
#include "shapeflow/ops/fused.h"

#include "dnnl.h"

#include <algorithm>

namespace sf::eval {
namespace {

/// A 2-D convolution (Conv, FusedConv, ConvTranspose), pooling (MaxPool without indices,
/// AveragePool) or Resize of rank-4 f32 X whose kernel can keep its input and output in channel
/// blocks.
bool isConv2d(const Graph &g, const Node &n, const OpDef *def) {
  if (!def || !def->kernelTakesBlocked || n.inputs.empty() || n.outputs.size() != 1 || !g.contains(n.inputs[0]))
    return false;
  const Fact &x = g.fact(n.inputs[0]);
  if (x.type != ElementType::F32 || !x.shape.rankIsStatic() || x.shape.size() != 4) return false;
  if (n.domain.empty() && (n.opType == "MaxPool" || n.opType == "AveragePool" || n.opType == "Resize")) return true;
  if (!(n.domain.empty() && (n.opType == "Conv" || n.opType == "ConvTranspose")) &&
      !(n.domain == kShapeflowDomain && n.opType == kFusedConv))
    return false;
  if (n.inputs.size() < 2 || !g.contains(n.inputs[1])) return false;
  const Fact &w = g.fact(n.inputs[1]);
  return w.shape.rankIsStatic() && w.shape.size() == 4;
}

/// An elementwise op (unary or broadcasting, the in-place trait) whose every input has its
/// output's exact shape or one element: it computes element i of the output from element i of
/// the inputs whatever order the elements are stored in.
bool isLayoutFree(const Graph &g, const Node &n, const OpDef *def) {
  if (!def || !def->traits.inPlace || !n.domain.empty() || n.outputs.size() != 1) return false;
  const PartialShape &out = n.outputs[0].fact.shape;
  bool full = false;
  for (OutletId in : n.inputs) {
    if (!in.valid()) continue;
    if (!g.contains(in)) return false;
    const PartialShape &s = g.fact(in).shape;
    if (s.equalEverywhere(out)) {
      full = true;
      continue;
    }
    if (!s.isStatic()) return false;
    for (const Dimension &d : s.dims())
      if (d.length() != 1) return false;
  }
  return full;
}

/// A kernel that reads X kept in channel blocks and writes a plain output (GlobalAveragePool:
/// its [N, C, 1, 1] output is the same bytes in either layout).
bool readsBlocked(const Graph &g, const Node &n, const OpDef *def) {
  if (!def || !def->kernelTakesBlocked || !n.domain.empty() || n.opType != "GlobalAveragePool") return false;
  if (n.inputs.size() != 1 || !g.contains(n.inputs[0])) return false;
  const Fact &x = g.fact(n.inputs[0]);
  return x.type == ElementType::F32 && x.shape.rankIsStatic() && x.shape.size() == 4;
}

/// Which input of a per-channel op has the output's shape: a broadcasting binary op (Add, Sub,
/// Mul, Div) whose other input is one value per channel ([1 or N, C, 1, 1]: a squeeze-excite
/// block's scale), or BatchNormalization in inference (X, input 0); -1 if the node is neither.
/// Its kernel takes that input and the output in channel blocks.
int channelBroadcastFull(const Graph &g, const Node &n, const OpDef *def) {
  if (!def || !def->kernelTakesBlocked || !n.domain.empty() || n.outputs.size() != 1) return -1;
  // BatchNormalization in inference: X [N, C, H, W], a factor and a shift per channel.
  if (n.opType == "BatchNormalization") {
    auto training = n.attrs.getInt("training_mode", 0);
    auto spatial = n.attrs.getInt("spatial", 1); // 0 (before opset 9): parameters per element
    if (!training.ok() || *training != 0 || !spatial.ok() || *spatial == 0 || n.inputs.size() != 5 ||
        !n.inputs[0].valid() || !g.contains(n.inputs[0]))
      return -1;
    const Fact &x = g.fact(n.inputs[0]);
    return x.type == ElementType::F32 && x.shape.rankIsStatic() && x.shape.size() == 4 && x.shape[1].isStatic() ? 0 : -1;
  }
  if (n.inputs.size() != 2) return -1;
  if (n.opType != "Add" && n.opType != "Sub" && n.opType != "Mul" && n.opType != "Div") return -1;
  const PartialShape &out = n.outputs[0].fact.shape;
  if (!out.rankIsStatic() || out.size() != 4 || !out[1].isStatic()) return -1;
  for (int full = 0; full < 2; ++full) {
    const OutletId a = n.inputs[size_t(full)], b = n.inputs[size_t(1 - full)];
    if (!a.valid() || !b.valid() || !g.contains(a) || !g.contains(b)) return -1;
    if (!g.fact(a).shape.equalEverywhere(out)) continue;
    const PartialShape &c = g.fact(b).shape;
    if (!c.isStatic() || c.size() != 4 || c[1].length() != out[1].length() || c[2].length() != 1 || c[3].length() != 1)
      continue;
    if (c[0].length() == 1 || (out[0].isStatic() && c[0].length() == out[0].length())) return full;
  }
  return -1;
}

/// Shape and Size read a tensor's shape, never its elements: the layout its bytes are kept in is
/// nothing to them (a U-Net's Resize to its skip tensor's sizes reads them so).
bool readsShapeOnly(const Node &n) { return n.domain.empty() && (n.opType == "Shape" || n.opType == "Size"); }

/// A Concat along the channels of rank-4 f32 tensors whose channel counts are whole blocks of
/// `block`: in nChw16c (nChw8c) each image's channels are consecutive blocks, so the plain
/// kernel's copies (each part's image after the last) join blocked parts into a blocked whole.
bool isChannelConcat(const Graph &g, const Node &n, const OpDef *def, int64_t block) {
  if (!def || !n.domain.empty() || n.opType != "Concat" || n.outputs.size() != 1 || n.inputs.empty()) return false;
  auto axis = n.attrs.getInt("axis");
  if (!axis.ok() || (*axis != 1 && *axis != -3)) return false;
  for (OutletId in : n.inputs) {
    if (!in.valid() || !g.contains(in)) return false;
    const Fact &f = g.fact(in);
    if (f.type != ElementType::F32 || !f.shape.rankIsStatic() || f.shape.size() != 4 || !f.shape[1].isStatic() ||
        f.shape[1].length() <= 0 || f.shape[1].length() % block != 0)
      return false;
  }
  return true;
}

/// The layout each node's output 0 is kept in (Layout): in oneDNN's channel blocks of `block`
/// (channels a multiple of it) or channels last (the others) from the Conv that makes it (or the layout-free
/// elementwise op, e.g. a Relu or a residual Add, whose inputs are so kept) to the Convs and
/// layout-free ops that read it: no reorder between two convolutions. f32, rank 4, channels
/// static, not a graph output, every reader a Shape or Size, a Conv, ConvTranspose, pooling or Resize (its input X; a FusedConv's Z
/// where its output is kept so too: a FusedConv whose Z is not so keeps its output plain), a layout-free op
/// whose output is kept so too, a GlobalAveragePool, a binary op with a value per channel (a
/// squeeze-excite block's scale: its full input) or a BatchNormalization whose output is kept so
/// too, or (channel blocks only) a Concat along the channels. Per node `role`: 1 conv or
/// pooling, 2 layout-free, 3 GlobalAveragePool, 4 channel broadcast, 5 channel Concat, 0 other.
std::vector<Layout> channelLayouts(const Graph &g, const std::vector<const OpDef *> &defs,
                                   const std::vector<bool> &isOutput0, int64_t block, std::vector<int8_t> &role) {
  const Layout blocked = blockedLayout(block);
  std::vector<Layout> layout(g.nodes.size(), Layout::Plain);
  std::vector<int> fullSlot(g.nodes.size(), -1);
  role.assign(g.nodes.size(), 0);
  for (const Node &n : g.nodes) {
    if (n.removed) continue;
    if (isConv2d(g, n, defs[n.id])) role[n.id] = 1;
    else if (isLayoutFree(g, n, defs[n.id])) role[n.id] = 2;
    else if (readsBlocked(g, n, defs[n.id])) role[n.id] = 3;
    else if ((fullSlot[n.id] = channelBroadcastFull(g, n, defs[n.id])) >= 0) role[n.id] = 4;
    else if (isChannelConcat(g, n, defs[n.id], block)) role[n.id] = 5;
    if (!role[n.id] || role[n.id] == 3) continue;
    const Fact &f = n.outputs[0].fact;
    if (isOutput0[n.id] || f.type != ElementType::F32 || !f.shape.rankIsStatic() || f.shape.size() != 4 ||
        !f.shape[1].isStatic() || f.shape[1].length() <= 0)
      continue;
    layout[n.id] = f.shape[1].length() % block == 0 ? blocked : Layout::ChannelsLast;
    if (role[n.id] == 5 && layout[n.id] != blocked) layout[n.id] = Layout::Plain;
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (const Node &n : g.nodes) {
      if (n.removed || n.outputs.empty() || layout[n.id] == Layout::Plain) continue;
      const Layout mine = layout[n.id];
      auto same = [&](OutletId in) { return in.slot == 0 && layout[in.node] == mine; };
      bool ok = true;
      if (role[n.id] == 2)
        for (OutletId in : n.inputs)
          if (in.valid() && g.fact(in).shape.equalEverywhere(n.outputs[0].fact.shape)) ok = ok && same(in);
      if (role[n.id] == 4) ok = ok && same(n.inputs[size_t(fullSlot[n.id])]);
      // A FusedConv's Z is added element by element to its output: in the output's layout.
      if (role[n.id] == 1 && n.domain == kShapeflowDomain && n.inputs.size() > 3 && n.inputs[3].valid())
        ok = ok && same(n.inputs[3]);
      if (role[n.id] == 5)
        for (OutletId in : n.inputs) ok = ok && same(in);
      for (InletId r : n.outputs[0].successors)
        ok = ok && (readsShapeOnly(g.nodes[r.node]) || (role[r.node] == 1 && r.slot == 0) || (role[r.node] == 1 && r.slot == 3 && g.nodes[r.node].domain == kShapeflowDomain && layout[r.node] == mine) ||
                    (role[r.node] == 2 && layout[r.node] == mine) ||
                    role[r.node] == 3 || (role[r.node] == 4 && layout[r.node] == mine && int(r.slot) == fullSlot[r.node]) ||
                    (role[r.node] == 5 && layout[r.node] == mine));
      if (!ok) layout[n.id] = Layout::Plain, changed = true;
    }
  }
  return layout;
}

/// A constant whose elements lie at an address their type cannot be read from (a view of a
/// model file's bytes at an odd offset) as an aligned copy, made once with the plan: otherwise
/// every kernel reading it copies it on every run. Aligned constants come back as they are.
std::shared_ptr<const Tensor> alignedConstant(const std::shared_ptr<const Tensor> &t) {
  if (!t || !t->hasData() || t->type() == ElementType::String) return t;
  size_t align = std::min<size_t>(elementSize(t->type()), alignof(std::max_align_t));
  if (align <= 1 || reinterpret_cast<uintptr_t>(t->bytes().data()) % align == 0) return t;
  auto bytes = t->bytes();
  auto copy = Tensor::fromBytes(t->type(), t->shape(), std::vector<std::byte>(bytes.begin(), bytes.end()));
  if (!copy.ok()) return t;
  return std::make_shared<const Tensor>(std::move(*copy));
}

/// A layout made for this graph: a place per output, every node once in an order that runs
/// each after the nodes it reads, offsets aligned and inside the arena.
Result<void> checkLayout(const Graph &g, const ArenaLayout &layout) {
  auto other = [&](const std::string &why) {
    return errorf("the arena layout was not made for this graph: {}", why);
  };
  if (layout.places.size() != g.nodes.size())
    return other(fmt::format("{} nodes, this one has {}", layout.places.size(), g.nodes.size()));
  std::vector<size_t> position(g.nodes.size(), SIZE_MAX);
  for (size_t i = 0; i < layout.order.size(); ++i) {
    uint32_t id = layout.order[i];
    if (id >= g.nodes.size() || position[id] != SIZE_MAX || g.nodes[id].removed)
      return other(fmt::format("its order names node {} twice, removed or out of range", id));
    position[id] = i;
  }
  for (const Node &n : g.nodes) {
    if (n.removed) continue;
    if (position[n.id] == SIZE_MAX) return other(fmt::format("its order leaves out '{}'", n.name));
    if (layout.places[n.id].size() != n.outputs.size())
      return other(fmt::format("'{}' has {} outputs, the layout {}", n.name, n.outputs.size(), layout.places[n.id].size()));
    for (OutletId in : n.inputs)
      if (in.valid() && position[in.node] > position[n.id])
        return other(fmt::format("it runs '{}' before '{}', which it reads", n.name, g.nodes[in.node].name));
    for (const auto &p : layout.places[n.id])
      if (p && (p->offset < 0 || p->bytes < 0 || p->offset % 64 != 0 || p->bytes > layout.bytes - p->offset))
        return other(fmt::format("an output of '{}' is placed at {} ({} bytes) in an arena of {}", n.name,
                                 p->offset, p->bytes, layout.bytes));
  }
  return success();
}

/// The graphs held by a node's attributes (If's branches, a Loop's body, ...).
std::vector<const Graph *> bodiesOf(const Node &n) {
  std::vector<const Graph *> out;
  for (const auto &[name, attr] : n.attrs) {
    if (const GraphPtr *p = attr.get<GraphPtr>(); p && *p) out.push_back(p->get());
    if (const auto *ps = attr.get<std::vector<GraphPtr>>())
      for (const auto &p : *ps)
        if (p) out.push_back(p.get());
  }
  return out;
}

/// Whether the op reads only its inputs' shapes (Shape, Size).
bool readsShapeOnly(const OpDef *def) { return def && def->traits.metadataOnly; }

/// Per graph input's node: the formal it takes (SIZE_MAX for other nodes and captured inputs).
std::vector<size_t> formalIndices(const Graph &g) {
  size_t formals = 0;
  std::vector<size_t> formalOf(g.nodes.size(), SIZE_MAX);
  for (OutletId o : g.inputs)
    if (g.contains(o) && !g.nodes[o.node].isCaptured()) formalOf[o.node] = formals++;
  return formalOf;
}

/// How a node runs: a graph input, a constant or an op (`role` and `layout` as channelLayouts
/// made them, `role` empty without channel layouts). The bodies it runs are prepared apart.
Result<Step> stepOf(const Node &n, uint32_t id, const std::vector<const OpDef *> &defs,
                    const std::vector<size_t> &formalOf, const std::vector<int8_t> &role,
                    const std::vector<Layout> &layout) {
  Step s;
  s.node = id;
  s.kind = n.kind;
  if (n.isParameter()) {
    if (n.isCaptured()) {
      SF_ASSIGN(s.captured, n.attrs.getInt("captured"));
    } else {
      s.formal = formalOf[id];
      s.constant = alignedConstant(n.outputs[0].fact.constant);
    }
    return s;
  }
  if (n.isConstant()) {
    const Fact &fact = n.outputs[0].fact;
    if (!fact.constant || !fact.constant->hasData())
      return errorf("node '{}': the constant '{}' ({}) has no data to run with", n.name, n.outputs[0].name, fact);
    s.constant = alignedConstant(fact.constant);
    return s;
  }
  s.def = defs[id];
  s.op = n.domain.empty() ? n.opType : n.domain + "." + n.opType;
  if (!s.def || !s.def->kernel) return errorf("node '{}' ({}): no kernel for op '{}'", n.name, s.op, s.op);
  // A graph that does not say which opset it imports (the text form without `opset`) gets the
  // newest one's semantics, as the rules do.
  s.opset = n.opsetVersion ? n.opsetVersion : kNewestOpset;
  s.readsShapeOnly = readsShapeOnly(defs[id]);
  s.checksRule = s.def->infer && s.def->traits.bodies == BodyRuns::None;
  s.runsBodies = s.def->traits.bodies != BodyRuns::None || s.def->kernelTakesSequences;
  if (!role.empty() && (role[id] == 1 || role[id] == 3) && n.inputs[0].valid()) {
    s.layoutIn = n.inputs[0].slot == 0 ? layout[n.inputs[0].node] : Layout::Plain;
    s.layoutOut = layout[id];
  }
  // A channel broadcast kept in a channel layout reads its full input so (channelLayouts' rule).
  if (!role.empty() && role[id] == 4) s.layoutIn = s.layoutOut = layout[id];
  s.layoutFreeBlocked = !role.empty() && role[id] == 2 && layout[id] != Layout::Plain;
  return s;
}

} // namespace

Result<std::shared_ptr<const ExecPlan>> prepare(const Graph &g, const PrepareOptions &options) {
  ExprScope scope = g.enter();
  auto plan = std::make_shared<ExecPlan>();
  plan->graph_ = &g;
  plan->registry_ = options.registry ? options.registry : &evalRegistry();
  plan->arena_ = options.arena;
  std::vector<uint32_t> order;
  if (options.arena) {
    SF_TRY(checkLayout(g, *options.arena));
    order = options.arena->order;
  } else {
    SF_ASSIGN(order, g.topologicalOrder());
  }
  // Each node's record, its outlets' numbers, readers and readers of elements.
  const size_t count = g.nodes.size();
  std::vector<const OpDef *> defs(count, nullptr);
  plan->firstOutlet_.resize(count + 1, 0);
  for (const Node &n : g.nodes) {
    if (!n.removed && n.kind == NodeKind::Op) defs[n.id] = plan->registry_->find(n.domain, n.opType);
    plan->firstOutlet_[n.id + 1] = plan->firstOutlet_[n.id] + n.outputs.size();
  }
  const size_t outlets = plan->firstOutlet_[count];
  plan->readers_.assign(outlets, 0);
  plan->dataReaders_.assign(outlets, 0);
  plan->isOutput_.assign(outlets, false);
  for (const Node &n : g.nodes)
    for (size_t k = 0; k < n.outputs.size(); ++k) {
      size_t o = plan->firstOutlet_[n.id] + k;
      plan->readers_[o] = uint32_t(n.outputs[k].successors.size());
      for (InletId in : n.outputs[k].successors) plan->dataReaders_[o] += !readsShapeOnly(defs[in.node]);
    }
  for (OutletId o : g.outputs)
    if (g.contains(o)) plan->isOutput_[plan->outlet(o)] = true;
  // Tensors kept in a channel layout between convolutions (not while every tensor is observed
  // in the plain layout, nor with a caller's registry, nor without oneDNN).
  std::vector<Layout> layout(count, Layout::Plain);
  std::vector<int8_t> role;
  if (!options.observed && !options.registry && detail::dnnlAvailable()) {
    std::vector<bool> output0(count, false);
    for (const Node &n : g.nodes)
      if (!n.outputs.empty()) output0[n.id] = plan->isOutput_[plan->firstOutlet_[n.id]];
    const int64_t block = options.channelBlock ? options.channelBlock : detail::dnnlChannelBlock();
    if (block != 8 && block != 16) return errorf("a channel block of {}: 8 or 16 expected", block);
    layout = channelLayouts(g, defs, output0, block, role);
    plan->channelsLastCount_ = size_t(std::count(layout.begin(), layout.end(), Layout::ChannelsLast));
    plan->blockedCount_ = count - size_t(std::count(layout.begin(), layout.end(), Layout::Plain));
  }
  const std::vector<size_t> formalOf = formalIndices(g);
  for (uint32_t id : order) {
    const Node &n = g.nodes[id];
    if (n.removed) continue;
    SF_ASSIGN(Step s, stepOf(n, id, defs, formalOf, role, layout));
    if (!n.isParameter() && !n.isConstant())
      for (const Graph *b : bodiesOf(n))
        if (!plan->bodies_.count(b)) {
          SF_ASSIGN(auto bp,
                    prepare(*b, PrepareOptions{options.registry, options.observed, nullptr, options.channelBlock}));
          plan->bodies_.emplace(b, std::move(bp));
        }
    plan->steps_.push_back(std::move(s));
  }
  return std::shared_ptr<const ExecPlan>(std::move(plan));
}

} // namespace sf::eval
