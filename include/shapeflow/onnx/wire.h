// A reader of ONNX ModelProto files at the protobuf wire level, with no generated protobuf
// classes: it walks the bytes with google::protobuf::io::CodedInputStream over a memory mapping
// and produces a neutral *view* of the model. Every string (names, op types, raw weight bytes) is
// a std::string_view into the mapping, so reading a model never touches weight bytes; values are
// decoded only when asked (decodeInts, decodeFloats, tensorBytes), under an element budget.
//
// Translating a view to the graph IR is the importer's job; so are dangling names and cycles.
// The reader validates what is wrong at the byte level: truncation, bad varints, wrong wire
// types for known fields, lengths past the end, nesting depth, negative tensor dims, unknown
// element types, data sizes that disagree with dims, duplicate initializer names. Every error
// names the file and the path to the offending item, e.g.
//   model.onnx: graph 'main': node 12 'conv1' (Conv): attribute 'pads': truncated packed field
//   'ints' (8) (at byte 1234)
#pragma once

#include "shapeflow/support/result.h"
#include "shapeflow/support/small_vec.h"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace sf::onnx {

/// TensorProto.DataType, including the types newer than Debian's libonnx (17 and up).
enum class DataType : int32_t {
  Undefined = 0,
  Float = 1,
  UInt8 = 2,
  Int8 = 3,
  UInt16 = 4,
  Int16 = 5,
  Int32 = 6,
  Int64 = 7,
  String = 8,
  Bool = 9,
  Float16 = 10,
  Double = 11,
  UInt32 = 12,
  UInt64 = 13,
  Complex64 = 14,
  Complex128 = 15,
  BFloat16 = 16,
  Float8E4M3FN = 17,
  Float8E4M3FNUZ = 18,
  Float8E5M2 = 19,
  Float8E5M2FNUZ = 20,
  UInt4 = 21,
  Int4 = 22,
  Float4E2M1 = 23,
  Float8E8M0 = 24,
  UInt2 = 25,
  Int2 = 26,
};
inline constexpr int32_t kMaxDataType = 26;

/// True for 1..kMaxDataType (Undefined is not a type a tensor can have).
bool isKnownDataType(int32_t dataType);
/// "FLOAT", "INT64", ... as in the proto enum; "UNDEFINED"; "<unknown 99>".
std::string dataTypeName(int32_t dataType);
/// Storage bits of one element in raw_data: 32 for FLOAT, 8 for BOOL, 4 for INT4, 2 for INT2;
/// 0 for STRING, UNDEFINED and unknown types.
int dataTypeBits(int32_t dataType);

/// AttributeProto.AttributeType.
enum class AttributeType : int32_t {
  Undefined = 0,
  Float = 1,
  Int = 2,
  String = 3,
  Tensor = 4,
  Graph = 5,
  Floats = 6,
  Ints = 7,
  Strings = 8,
  Tensors = 9,
  Graphs = 10,
  SparseTensor = 11,
  SparseTensors = 12,
  TypeProto = 13,
  TypeProtos = 14,
};

/// One dimension of a TensorShapeProto: a number, a symbol, or (neither) unknown.
struct DimView {
  bool hasValue = false;
  int64_t value = 0;      // may be negative: the reader keeps what the file says
  std::string_view param; // dim_param
};

/// A TypeProto. `inner` is the element type of a sequence or optional, the value type of a map.
struct TypeView {
  enum Kind { Unknown, Tensor, Sequence, Optional, Map, SparseTensor, Opaque } kind = Unknown;
  int32_t elemType = 0;  // Tensor, SparseTensor: a DataType value, 0 if unknown
  int32_t keyType = 0;   // Map
  bool hasShape = false; // Tensor, SparseTensor: false means rank unknown
  std::vector<DimView> dims;
  std::shared_ptr<TypeView> inner;
};

struct ValueInfoView {
  std::string_view name;
  TypeView type;
  bool hasType = false;
};

struct StringPairView {
  std::string_view key, value;
};

/// TensorProto.external_data, with offset and length already parsed from their decimal strings.
struct ExternalDataView {
  std::string_view location;
  int64_t offset = 0;
  int64_t length = -1; // -1: up to the end of the file
};

/// A TensorProto. Values stay undecoded: rawData and the packed repeated fields are byte ranges
/// of the file. The typed fields (floatData ...) hold the payload of a field that came as one
/// packed run, the usual encoding; a writer may also emit a repeated field unpacked (one tag per
/// value) or split over several runs, and then `scattered` is set and the decoders re-scan
/// `encoded` (the whole TensorProto's bytes). Counts are of values, whatever the encoding.
struct TensorView {
  std::string_view name;
  int32_t dataType = 0;
  std::vector<int64_t> dims;
  bool hasRawData = false; // raw_data present (it may be empty for a tensor of zero elements)
  std::string_view rawData;
  std::string_view floatData, int32Data, int64Data, doubleData, uint64Data;
  int64_t floatCount = 0, int32Count = 0, int64Count = 0, doubleCount = 0, uint64Count = 0;
  std::vector<std::string_view> stringData;
  bool scattered = false;
  bool isExternal = false; // data_location == EXTERNAL
  ExternalDataView external;
  bool hasSegment = false;
  int64_t segmentBegin = 0, segmentEnd = 0;
  std::string_view encoded;
};

/// A SparseTensorProto: values [NNZ], indices [NNZ, rank] or [NNZ], dims of the dense tensor.
struct SparseTensorView {
  TensorView values, indices;
  std::vector<int64_t> dims;
};

struct GraphView;

/// The values of the attribute kinds a graph holds few of (tensors, graphs, types, sparse
/// tensors, float and string lists), kept out of AttributeView's line: a large graph's
/// attributes are ints and single values, and its reader views stay a third of the size.
struct AttributeExtra {
  std::shared_ptr<TensorView> t;
  std::shared_ptr<GraphView> g;
  std::shared_ptr<SparseTensorView> sparseTensor;
  std::shared_ptr<TypeView> tp;
  std::vector<float> floats;
  std::vector<std::string_view> strings;
  std::vector<TensorView> tensors;
  std::vector<std::shared_ptr<GraphView>> graphs;
  std::vector<SparseTensorView> sparseTensors;
  std::vector<TypeView> typeProtos;
};

struct AttributeView {
  std::string_view name;
  int32_t type = 0; // AttributeType; when the file leaves it 0 the reader infers it from the
                    // one value field present (IR version 1 files)
  float f = 0;
  int64_t i = 0;
  std::string_view s;
  std::vector<int64_t> ints;
  std::string_view refAttrName; // inside functions: refers to the caller's attribute

  /// The other kinds' values (empty when the attribute has none of them).
  const AttributeExtra &extra() const {
    static const AttributeExtra kNone;
    return extra_ ? *extra_ : kNone;
  }
  /// For writing them: made on first use; a copy of this view that shared them gets its own.
  AttributeExtra &editExtra() {
    if (!extra_) extra_ = std::make_shared<AttributeExtra>();
    else if (extra_.use_count() > 1) extra_ = std::make_shared<AttributeExtra>(*extra_);
    return *extra_;
  }

private:
  std::shared_ptr<AttributeExtra> extra_;
};

struct NodeView {
  std::string_view name, opType, domain, overload;
  // "" marks an omitted optional input/output. Kept inline up to the usual counts: a large
  // graph's nodes then cost no allocation for their names, and the importer reads them in order.
  SmallVec<std::string_view, 3> inputs;
  SmallVec<std::string_view, 1> outputs;
  std::vector<AttributeView> attributes;
};

/// Where a node the reader left encoded lies: its NodeProto's bytes, as offsets in the model.
struct EncodedNode {
  int begin = 0, end = 0;
};

struct GraphView {
  std::string_view name;
  std::vector<NodeView> nodes;
  std::vector<TensorView> initializers;
  std::vector<SparseTensorView> sparseInitializers;
  std::vector<ValueInfoView> inputs, outputs, valueInfo;
  /// Read with ReadOptions::deferNodes (the model's main graph only): its nodes, still encoded,
  /// for NodeDecoder; `nodes` is then empty. The graph message's own offsets name it in errors.
  std::vector<EncodedNode> encodedNodes;
  int wireBegin = 0, wireEnd = 0;
};

struct OpsetImport {
  std::string_view domain;
  int64_t version = 0;
};

/// A model-local function (FunctionProto), called by nodes whose (domain, opType, overload)
/// match its (domain, name, overload).
struct FunctionView {
  std::string_view name, domain, overload;
  std::vector<std::string_view> inputs, outputs;
  std::vector<std::string_view> attributes;     // attribute names without defaults
  std::vector<AttributeView> attributeDefaults; // attribute_proto: attributes with defaults
  std::vector<NodeView> nodes;
  std::vector<OpsetImport> opsets;
  std::vector<ValueInfoView> valueInfo;
};

/// Backing storage of a ModelView: the model's mapping and the external data files mapped so
/// far (defined in wire.cpp; shared between copies of a ModelView, safe to use from threads).
struct ModelStorage;

struct ModelView {
  int64_t irVersion = 0;
  std::vector<OpsetImport> opsets;
  std::string_view producerName, producerVersion, domain;
  int64_t modelVersion = 0;
  std::vector<StringPairView> metadata;
  GraphView graph;
  std::vector<FunctionView> functions;
  /// Folder of the model file (absolute), against which external data locations resolve.
  /// Empty for readModelBuffer; a caller may set it to allow external data.
  std::string directory;
  /// Keeps the mapping alive for as long as any copy of the view (or a string_view from it)
  /// is used; caches the mappings of external data files.
  std::shared_ptr<ModelStorage> storage;
};

/// Limits that keep a hostile file from exhausting the stack or memory.
struct ReadLimits {
  int maxGraphDepth = 64;           // subgraphs nested in attributes (If inside Loop inside ...)
  int maxNestingDepth = 512;        // protobuf messages nested any way (graphs, types, groups)
  size_t maxNodes = 10'000'000;     // over all graphs, subgraphs and functions
  size_t maxListElements = 1 << 24; // values in one attribute list, dims in one tensor or shape
};

struct ReadOptions {
  /// Leave the main graph's nodes encoded (GraphView::encodedNodes): an importer decodes each
  /// with NodeDecoder just before it builds the node, so that a large graph's node views never
  /// exist all at once (the 100k-node graph: 24 MB of views, written and read back from memory).
  /// The reader still checks that each node is a well-framed message inside the graph; what is
  /// inside is checked when it is decoded, with the same messages.
  bool deferNodes = false;
};

/// Drops the pages of the model's file from the process's memory (not from the kernel's cache):
/// for a reader that has read what it needs from the weights' headers. Views stay valid (pages
/// fault back in when read). Nothing for a model read from a caller's buffer.
void releaseFilePages(const ModelView &model);

/// Reads a model file through a read-only mapping. Errors start with `path: `.
Result<ModelView> readModelFile(const std::string &path, const ReadLimits &limits = {},
                                const ReadOptions &options = {});
/// Reads a model already in memory; the caller keeps `bytes` alive while the view is used.
/// `label` starts error messages in place of a file name.
Result<ModelView> readModelBuffer(std::string_view bytes, const ReadLimits &limits = {},
                                  std::string_view label = "<memory>",
                                  const ReadOptions &options = {});

/// Decodes the nodes a reader left encoded (ReadOptions::deferNodes), one at a time, with the
/// reader's checks and limits (the node count goes on from the reader's).
class NodeDecoder {
public:
  explicit NodeDecoder(const ModelView &model);
  ~NodeDecoder();
  NodeDecoder(const NodeDecoder &) = delete;
  NodeDecoder &operator=(const NodeDecoder &) = delete;
  /// Node `index` of model.graph.encodedNodes into `out`, reusing its storage. An error reads
  /// as the reader's would have, without the file's name in front: `graph 'g': node 3 'n'
  /// (Conv): attribute 'axes': ... (at byte 120)`.
  Result<void> decode(size_t index, NodeView &out);
  /// Every node, in order; the first error as decode() gives it.
  Result<std::vector<NodeView>> decodeAll();

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};
/// Reads a lone TensorProto (the test_data_set_*/input_*.pb files of ONNX's backend tests).
/// Decode it with a default-constructed ModelView (no external data).
Result<TensorView> readTensorBuffer(std::string_view bytes, std::string_view label = "<memory>");

// ---- Value decoding: only when asked, under a budget, never trusting what the file claims. ----

/// Checked product of dims (1 for a scalar); an error on a negative dim or on overflow.
Result<int64_t> elementCount(const TensorView &t);
/// Bytes the values take in raw_data: count * bits / 8, rounded up for sub-byte types. An error
/// for STRING, UNDEFINED and unknown types and on overflow.
Result<int64_t> rawByteSize(const TensorView &t);
/// "FLOAT[2,2]": the type and dims as used in messages.
std::string describeTensorType(const TensorView &t);

/// Values of an integer or BOOL tensor (INT8..UINT64, INT4/UINT4, INT2/UINT2), from raw_data or
/// external data (little-endian) or from int32_data / int64_data / uint64_data, packed or not.
/// An error when the tensor has more than maxElements values, when the data does not hold
/// exactly as many values as the dims say, and for a UINT64 value above INT64_MAX.
Result<std::vector<int64_t>> decodeInts(const TensorView &t, const ModelView &model,
                                        size_t maxElements);
/// Values of a floating tensor (FLOAT, DOUBLE, FLOAT16, BFLOAT16, the FLOAT8 kinds, FLOAT4E2M1),
/// from raw_data, external data, float_data, double_data or int32_data (bit patterns); integer
/// and BOOL tensors are converted. Same budget and checks as decodeInts.
Result<std::vector<double>> decodeFloats(const TensorView &t, const ModelView &model,
                                         size_t maxElements);
/// The value bytes in raw layout: raw_data, a single packed float_data/double_data run (the
/// same bytes), or external data, mapped lazily. External locations are relative to the model's
/// directory; absolute paths, '..' components and symlinks leading out of the folder are
/// refused, so are offset/length past the end of the file. The size must match the dims.
Result<std::string_view> tensorBytes(const TensorView &t, const ModelView &model);

} // namespace sf::onnx
