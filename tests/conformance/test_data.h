// The data of one ONNX backend test (Debian's libonnx-testdata): a folder with model.onnx and
// test_data_set_N/{input,output}_K.pb. Each .pb is a TensorProto, or a SequenceProto /
// OptionalProto when the model declares that graph input or output as a sequence / optional.
// TensorProtos are read with the project's wire reader (sf::onnx::readTensorBuffer); the two
// container messages are unwrapped here with a minimal field walker.
#pragma once

#include "shapeflow/ir/fact.h"
#include "shapeflow/ir/graph.h"
#include "shapeflow/ir/tensor.h"
#include "shapeflow/onnx/wire.h"
#include "shapeflow/support/result.h"

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace sf::conformance {

/// One TensorProto of the test data: its header, over bytes that it owns.
struct DataTensor {
  std::shared_ptr<const std::string> bytes;
  onnx::TensorView view;

  int32_t dataType() const { return view.dataType; }
  const std::vector<int64_t> &dims() const { return view.dims; }
  /// `FLOAT[2,3]`.
  std::string describe() const { return onnx::describeTensorType(view); }
};

/// One input_K.pb / output_K.pb.
struct DataValue {
  enum class Kind { Tensor, Sequence, EmptyOptional };
  Kind kind = Kind::Tensor;
  std::string name;                // the proto's name field ("" when absent)
  std::vector<DataTensor> tensors; // one for a Tensor; the elements of a Sequence
};

/// `dir/<prefix>_K.pb` for K = 0, 1, ... while they exist.
std::vector<std::filesystem::path> dataFiles(const std::filesystem::path &dir,
                                             const std::string &prefix);

/// Reads a .pb file as the kind of value `declared` describes (a TensorProto when null or when
/// the declared type is a tensor).
Result<DataValue> readDataValue(const std::filesystem::path &path, const onnx::TypeView *declared);

/// The element type of an ONNX data type number (Undefined for types the IR does not have).
ElementType elementTypeOf(int32_t dataType);

/// The values of a numeric, bool or string tensor as an IR tensor (for using a test input as a
/// constant); an error for types the IR does not have and above `maxElements`.
Result<Tensor> toTensor(const DataTensor &t, size_t maxElements);

/// Graph inputs that are not initializers (what test_data_set_N/input_K.pb feed), in order.
std::vector<const onnx::ValueInfoView *> formalInputs(const onnx::GraphView &gv);

/// The tensor element type (a DataType value) of a declared type, through sequences and
/// optionals; 0 when there is none.
int32_t declaredElemType(const onnx::TypeView *t);

/// ONNX's test generator stores BFLOAT16 tensors as UINT16 (numpy has no bfloat16): where the
/// model declares BFLOAT16, read UINT16 data as the BFLOAT16 bits it is (a note says so).
void fixBfloat16(DataValue &v, const onnx::TypeView *declared, const std::string &what,
                 std::vector<std::string> &notes);

/// A declared static dim or rank that the test data contradicts: the data is what the test runs
/// with, so inference is fed the data's shape (ONNX's runner does not check either). The text
/// says both.
std::optional<std::string> contradictsDeclared(const onnx::TypeView *declared, const DataValue &v);

/// Named dims are assumed >= 1 (README, "Assumptions"); a test that feeds 0 for one runs as a
/// user would run it, with --dim NAME=0.. (a note says so).
void admitZeroDims(Graph &g, const std::string &name, const onnx::TypeView *declared, const DataValue &v,
                   std::vector<std::string> &notes);

/// The fact that describes the elements of a sequence: their common type; their shape where all
/// agree, dims that differ become intervals {min..max}; rank unknown when ranks differ.
Fact elementFact(const std::vector<DataTensor> &elements);

} // namespace sf::conformance
