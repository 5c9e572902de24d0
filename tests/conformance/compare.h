// Judging a fact (what inference claims about a tensor) against the tensor a test produced:
//  - Exact: the element type is the actual one and the shape is static and equal;
//  - Imprecise: nothing claimed is false but something is not fully known (element type or rank
//    unknown; a dim symbolic or an interval that contains the actual size);
//  - Wrong: a claim is false (another element type or rank, a static dim of another size, bounds
//    that exclude the actual size, a propagated value or folded constant that differs).
#pragma once

#include "test_data.h"

#include "shapeflow/ir/fact.h"

#include <string>
#include <vector>

namespace sf::conformance {

enum class Precision { Exact = 0, Imprecise = 1, Wrong = 2 };

const char *toString(Precision p);

struct Check {
  Precision precision = Precision::Exact;
  std::vector<std::string> notes; // why it is not Exact
  bool looseTypeOrRank = false;     // imprecise beyond sizes: element type or rank unknown

  void add(Precision p, std::string note);
  void merge(const Check &o);
  std::string summary() const; // notes joined by "; "
};

struct CheckOptions {
  bool values = true; // also compare propagated values and folded constants with the data
  double rtol = 1e-3, atol = 1e-5;
};

/// `f32[2,?{1..8}]`: the type and shape of a fact (without its value).
std::string typeAndShape(const Fact &f);

/// The fact against one tensor.
Check checkTensor(const Fact &f, const DataTensor &actual, const CheckOptions &options = {});

/// The fact against an output value: a tensor; every element of a sequence (the fact describes
/// the elements: the IR has no sequence type); nothing for an empty optional.
Check checkValue(const Fact &f, const DataValue &actual, const CheckOptions &options = {});

} // namespace sf::conformance
