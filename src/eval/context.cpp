// The executor's values and kernel context (eval/eval.h): what a kernel allocates, within the
// run's memory budget and at the arena's places; a value's kinds (tensor, sequence, empty
// optional).
#include "shapeflow/eval/eval.h"

#include "shapeflow/support/checked.h"
#include "shapeflow/support/format.h"

#include <cstdlib>
#include <cstring>

namespace sf {

namespace {

/// The elements of an output of this shape (an error past 2^63).
Result<int64_t> outputElements(const Shape &shape) {
  int64_t count = 1;
  for (int64_t d : shape) {
    auto c = d < 0 ? std::nullopt : checkedMul(count, d);
    if (!c) return errorf("an output of shape [{}] has more than 2^63 elements", fmt::join(shape, ","));
    count = *c;
  }
  return count;
}

} // namespace

Result<int64_t> EvalContext::reserve(ElementType t, const Shape &shape) {
  SF_ASSIGN(int64_t count, outputElements(shape));
  auto bytes = checkedMul(count, int64_t(elementSize(t)));
  if (!bytes || *liveBytes_ + *bytes > maxBytes_)
    return errorf("an output of {}[{}] ({} bytes) does not fit the memory budget ({} of {} bytes "
                  "in use; --max-memory)",
                  shortName(t), fmt::join(shape, ","), bytes ? std::to_string(*bytes) : "> 2^63",
                  *liveBytes_, maxBytes_);
  *liveBytes_ += *bytes;
  allocated_ += *bytes;
  return *bytes;
}

Result<OutputBytes> EvalContext::allocate(ElementType t, const Shape &shape, std::optional<size_t> output) {
  SF_ASSIGN(OutputBytes bytes, allocateUnzeroed(t, shape, output));
  std::memset(bytes.data(), 0, bytes.size());
  return bytes;
}

Result<OutputBytes> EvalContext::allocateUnzeroed(ElementType t, const Shape &shape, std::optional<size_t> output) {
  SF_ASSIGN(auto p, allocateForOverwrite(t, shape, false, output));
  return OutputBytes(std::move(p), size_t(outputElements(shape).value()) * elementSize(t));
}

Result<std::shared_ptr<std::byte[]>> EvalContext::allocateForOverwrite(ElementType t, const Shape &shape,
                                                                       bool inPlace,
                                                                       std::optional<size_t> output) {
  SF_ASSIGN(int64_t bytes, reserve(t, shape));
  if (placer_ && bytes > 0)
    if (auto placed = placer_->place(bytes, inPlace, output)) return placed;
  constexpr size_t kAlign = 64;
  size_t rounded = (size_t(bytes) + kAlign - 1) / kAlign * kAlign; // within the budget's checks
  auto *p = static_cast<std::byte *>(std::aligned_alloc(kAlign, std::max(rounded, kAlign)));
  if (!p) return errorf("out of memory for an output of {} bytes", bytes);
  return std::shared_ptr<std::byte[]>(p, [](std::byte *q) { std::free(q); });
}

Result<void> EvalContext::admit(ElementType t, const Shape &shape) const {
  SF_ASSIGN(int64_t count, outputElements(shape));
  auto bytes = checkedMul(count, int64_t(std::max<size_t>(elementSize(t), 8)));
  if (!bytes || *liveBytes_ + *bytes > maxBytes_)
    return errorf("an output of {}[{}] does not fit the memory budget ({} of {} bytes in use; "
                  "--max-memory)",
                  shortName(t), fmt::join(shape, ","), *liveBytes_, maxBytes_);
  return success();
}

Result<void> EvalContext::setOutput(size_t i, Tensor t) {
  return setOutput(i, Value(std::make_shared<const Tensor>(std::move(t))));
}

Result<void> EvalContext::setOutput(size_t i, Value v) {
  if (i >= outputs_.size())
    return errorf("the kernel set output {} of an op with {} outputs", i, outputs_.size());
  outputs_[i] = std::move(v);
  return success();
}

Value Value::sequence(ElementType elementType, std::vector<std::shared_ptr<const Tensor>> elements) {
  Value v;
  v.kind_ = Kind::Sequence;
  v.elementType_ = elementType;
  v.elements_ = std::make_shared<const std::vector<std::shared_ptr<const Tensor>>>(std::move(elements));
  return v;
}

Value Value::none(ElementType elementType) {
  Value v;
  v.kind_ = Kind::None;
  v.elementType_ = elementType;
  return v;
}

const std::vector<std::shared_ptr<const Tensor>> &Value::elements() const {
  static const std::vector<std::shared_ptr<const Tensor>> empty;
  return elements_ ? *elements_ : empty;
}

ElementType Value::elementType() const { return tensor_ ? tensor_->type() : elementType_; }

std::string Value::describe() const {
  switch (kind_) {
  case Kind::Absent: return "absent";
  case Kind::None: return "none";
  case Kind::Tensor: return fmt::format("{}[{}]", shortName(tensor_->type()), fmt::join(tensor_->shape(), ","));
  case Kind::Sequence: break;
  }
  return fmt::format("seq({})[{} elements]", shortName(elementType_), elements().size());
}

} // namespace sf
