// One node's kernel on constant inputs (evaluator.h).
#include "shapeflow/eval/evaluator.h"

#include "shapeflow/eval/eval.h"

namespace sf::eval {

Result<std::vector<TensorPtr>> KernelEvaluator::evaluate(const Graph &g, const Node &n,
                                                         const std::vector<TensorPtr> &inputs) const {
  const OpDef *def = evalRegistry().find(n.domain, n.opType);
  if (!def || !def->kernel) return errorf("{}: no kernel", g.nodeLabel(n.id));
  if (def->kernelTakesSequences) return errorf("{}: its kernel reads sequences", g.nodeLabel(n.id));
  std::vector<Value> values;
  for (const TensorPtr &t : inputs) values.push_back(Value(t));
  int64_t live = 0;
  EvalContext ctx(n, std::move(values), n.opsetVersion ? n.opsetVersion : kNewestOpset, &live, maxBytes_);
  ctx.setGraph(g);
  Result<void> r = success();
  try {
    r = def->kernel(ctx);
  } catch (const EvalContext::MissingInput &m) {
    r = errorf("input {} is required and not given", m.index);
  } catch (const EvalContext::UnreadableInput &u) {
    r = makeError(u.why);
  }
  if (!r.ok()) return errorf("{}: {}", g.nodeLabel(n.id), r.error().message);
  std::vector<TensorPtr> out;
  for (const Value &v : ctx.outputs()) {
    if (!v.isTensor()) return errorf("{}: an output is not a tensor", g.nodeLabel(n.id));
    out.push_back(v.tensor());
  }
  return out;
}

} // namespace sf::eval
