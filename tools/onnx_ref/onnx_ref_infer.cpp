// Reference for shapeflow's precision and speed: ONNX's own C++ shape inference (Debian's
// libonnx) run on a model, printing per node output the same JSON as scripts/onnx_infer_shapes.py
//   {"tensor": {"dtype": "float32", "shape": [1, "N", null], "producer": "node", "op": "Conv",
//               "value": [2, "S"]}, ...}
// (dim: int, string for a dim_param, null when unknown; shape null when the rank is unknown;
// "value" when data propagation computed the tensor's contents as a shape).
// Test-only: it is a yardstick, not part of shapeflow.
//
// usage: onnx_ref_infer MODEL [--input NAME=D0,D1,..]... [--dim SYM=N]... [--all]
//                             [--no-data-prop] [--strict] [--time N]
//   --time N  runs InferShapes N times (after one untimed warm-up) on fresh copies of the parsed
//             model and prints milliseconds per run (parsing and copying excluded) as JSON.
#include <onnx/defs/schema.h>
#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace {

struct Options {
  std::string ModelPath;
  std::map<std::string, std::vector<int64_t>> Inputs;
  std::map<std::string, int64_t> Dims;
  bool IncludeInputs = false;
  bool DataProp = true;
  bool Strict = false;
  int TimeRuns = 0;
};

[[noreturn]] void fail(const std::string &Msg, int Code = 2) {
  std::cerr << "onnx_ref_infer: " << Msg << "\n";
  std::exit(Code);
}

int64_t parseInt(const std::string &Text, const std::string &What) {
  size_t Used = 0;
  int64_t V = 0;
  try {
    V = std::stoll(Text, &Used);
  } catch (const std::exception &) {
    Used = 0;
  }
  if (Text.empty() || Used != Text.size())
    fail(What + ": '" + Text + "' is not an integer");
  return V;
}

std::pair<std::string, std::string> splitKeyValue(const std::string &Text, const std::string &Flag) {
  size_t Eq = Text.find('=');
  if (Eq == std::string::npos || Eq == 0)
    fail(Flag + " expects NAME=VALUE, got '" + Text + "'");
  return {Text.substr(0, Eq), Text.substr(Eq + 1)};
}

Options parseArgs(int Argc, char **Argv) {
  Options O;
  std::vector<std::string> Args(Argv + 1, Argv + Argc);
  auto next = [&](size_t &I) -> const std::string & {
    if (I + 1 >= Args.size())
      fail(Args[I] + " needs a value");
    return Args[++I];
  };
  for (size_t I = 0; I < Args.size(); ++I) {
    const std::string &A = Args[I];
    if (A == "--input") {
      auto [Name, Value] = splitKeyValue(next(I), A);
      std::vector<int64_t> Dims;
      std::stringstream SS(Value);
      for (std::string Item; std::getline(SS, Item, ',');)
        Dims.push_back(parseInt(Item, "--input " + Name));
      O.Inputs[Name] = Dims;
    } else if (A == "--dim") {
      auto [Name, Value] = splitKeyValue(next(I), A);
      O.Dims[Name] = parseInt(Value, "--dim " + Name);
    } else if (A == "--time") {
      O.TimeRuns = static_cast<int>(parseInt(next(I), "--time"));
      if (O.TimeRuns < 1)
        fail("--time needs a positive count");
    } else if (A == "--all") {
      O.IncludeInputs = true;
    } else if (A == "--no-data-prop") {
      O.DataProp = false;
    } else if (A == "--strict") {
      O.Strict = true;
    } else if (A == "-h" || A == "--help") {
      std::cout << "usage: onnx_ref_infer MODEL [--input NAME=D0,D1,..]... [--dim SYM=N]... [--all]\n"
                   "                      [--no-data-prop] [--strict] [--time N]\n";
      std::exit(0);
    } else if (!A.empty() && A[0] == '-') {
      fail("unknown option " + A);
    } else if (O.ModelPath.empty()) {
      O.ModelPath = A;
    } else {
      fail("unexpected argument " + A);
    }
  }
  if (O.ModelPath.empty())
    fail("no model given (see --help)");
  return O;
}

void overrideInputs(onnx::ModelProto &Model, const Options &O) {
  onnx::GraphProto *G = Model.mutable_graph();
  std::unordered_set<std::string> Initializers;
  for (const auto &Init : G->initializer())
    Initializers.insert(Init.name());
  std::unordered_set<std::string> Seen;
  for (auto &In : *G->mutable_input()) {
    if (Initializers.count(In.name()) || !In.type().has_tensor_type())
      continue;
    onnx::TensorShapeProto *Shape = In.mutable_type()->mutable_tensor_type()->mutable_shape();
    auto It = O.Inputs.find(In.name());
    if (It != O.Inputs.end()) {
      Seen.insert(In.name());
      if (Shape->dim_size() && Shape->dim_size() != static_cast<int>(It->second.size()))
        fail("--input " + In.name() + ": model says rank " + std::to_string(Shape->dim_size()) +
             ", got " + std::to_string(It->second.size()));
      Shape->clear_dim();
      for (int64_t D : It->second)
        Shape->add_dim()->set_dim_value(D);
      continue;
    }
    for (auto &D : *Shape->mutable_dim()) {
      if (!D.has_dim_param())
        continue;
      auto DimIt = O.Dims.find(D.dim_param());
      if (DimIt != O.Dims.end())
        D.set_dim_value(DimIt->second);
    }
  }
  for (const auto &[Name, Dims] : O.Inputs)
    if (!Seen.count(Name))
      fail("--input " + Name + ": the model has no such input");
}

std::string jsonString(const std::string &S) {
  std::string Out = "\"";
  for (unsigned char C : S) {
    switch (C) {
    case '"': Out += "\\\""; break;
    case '\\': Out += "\\\\"; break;
    case '\n': Out += "\\n"; break;
    case '\t': Out += "\\t"; break;
    case '\r': Out += "\\r"; break;
    default:
      if (C < 0x20) {
        char Buf[8];
        std::snprintf(Buf, sizeof Buf, "\\u%04x", C);
        Out += Buf;
      } else {
        Out += static_cast<char>(C);
      }
    }
  }
  return Out + "\"";
}

std::string dtypeName(int32_t ElemType) {
  switch (ElemType) {
  case onnx::TensorProto::FLOAT: return "float32";
  case onnx::TensorProto::DOUBLE: return "float64";
  case onnx::TensorProto::FLOAT16: return "float16";
  case onnx::TensorProto::BFLOAT16: return "bfloat16";
  case onnx::TensorProto::UNDEFINED: return "";
  default: {
    std::string Name = onnx::TensorProto::DataType_Name(
        static_cast<onnx::TensorProto::DataType>(ElemType));
    std::transform(Name.begin(), Name.end(), Name.begin(), ::tolower);
    return Name;
  }
  }
}

std::string dimsJson(const onnx::TensorShapeProto &Shape) {
  std::string Out = "[";
  for (int I = 0; I < Shape.dim_size(); ++I) {
    const auto &D = Shape.dim(I);
    if (I)
      Out += ", ";
    if (D.has_dim_value())
      Out += std::to_string(D.dim_value());
    else if (D.has_dim_param())
      Out += jsonString(D.dim_param());
    else
      Out += "null";
  }
  return Out + "]";
}

// "dtype": ..., "shape": ... of one value info (or both null when there is none).
std::string typeJson(const onnx::ValueInfoProto *VI) {
  if (!VI || VI->type().value_case() == onnx::TypeProto::VALUE_NOT_SET)
    return "\"dtype\": null, \"shape\": null";
  const onnx::TypeProto &T = VI->type();
  if (!T.has_tensor_type()) {
    const char *Kind = T.has_sequence_type() ? "sequence" : T.has_map_type() ? "map"
                     : T.has_optional_type() ? "optional" : "sparse_tensor";
    return std::string("\"dtype\": \"") + Kind + "\", \"shape\": null";
  }
  std::string DType = dtypeName(T.tensor_type().elem_type());
  std::string Out = "\"dtype\": " + (DType.empty() ? std::string("null") : jsonString(DType));
  Out += ", \"shape\": ";
  Out += T.tensor_type().has_shape() ? dimsJson(T.tensor_type().shape()) : "null";
  return Out;
}

onnx::ShapeInferenceOptions inferenceOptions(const Options &O) {
  // check_type off, node-level errors not thrown (error_mode 0), data propagation on:
  // the settings of onnx.shape_inference.infer_shapes(model, data_prop=True).
  return onnx::ShapeInferenceOptions(false, O.Strict ? 1 : 0, O.DataProp);
}

onnx::ModelProto loadModel(const std::string &Path) {
  std::ifstream In(Path, std::ios::binary);
  if (!In)
    fail("cannot open " + Path);
  onnx::ModelProto Model;
  if (!Model.ParseFromIstream(&In))
    fail("cannot parse " + Path + " as an ONNX model");
  return Model;
}

int timeRuns(const onnx::ModelProto &Parsed, const Options &O) {
  const auto Opts = inferenceOptions(O);
  std::vector<double> Ms;
  // Run 0 is a warm-up, not timed: the first call builds ONNX's schema registry (~2 ms).
  for (int I = 0; I <= O.TimeRuns; ++I) {
    onnx::ModelProto Model = Parsed; // inference writes value_info: start each run afresh
    auto T0 = std::chrono::steady_clock::now();
    try {
      onnx::shape_inference::InferShapes(Model, onnx::OpSchemaRegistry::Instance(), Opts);
    } catch (const std::exception &E) {
      fail(std::string("InferShapes raised: ") + E.what(), 1);
    }
    auto T1 = std::chrono::steady_clock::now();
    if (I > 0)
      Ms.push_back(std::chrono::duration<double, std::milli>(T1 - T0).count());
  }
  std::sort(Ms.begin(), Ms.end());
  double Sum = 0;
  for (double M : Ms)
    Sum += M;
  std::printf("{\"model\": %s, \"runs\": %d, \"nodes\": %d, \"ms_per_run\": %.3f, "
              "\"ms_min\": %.3f, \"ms_median\": %.3f}\n",
              jsonString(O.ModelPath).c_str(), O.TimeRuns, Parsed.graph().node_size(),
              Sum / Ms.size(), Ms.front(), Ms[Ms.size() / 2]);
  return 0;
}

} // namespace

int main(int Argc, char **Argv) {
  std::ios::sync_with_stdio(false);
  Options O = parseArgs(Argc, Argv);
  onnx::ModelProto Model = loadModel(O.ModelPath);
  overrideInputs(Model, O);
  if (O.TimeRuns)
    return timeRuns(Model, O);

  std::unordered_map<std::string, onnx::TensorShapeProto> ShapeData;
  std::string Error;
  try {
    onnx::shape_inference::InferShapes(Model, onnx::OpSchemaRegistry::Instance(),
                                       inferenceOptions(O), &ShapeData);
  } catch (const std::exception &E) {
    Error = E.what();
  }

  const onnx::GraphProto &G = Model.graph();
  std::unordered_map<std::string, const onnx::ValueInfoProto *> Info;
  for (const auto &VI : G.input())
    Info[VI.name()] = &VI;
  for (const auto &VI : G.value_info())
    Info[VI.name()] = &VI;
  for (const auto &VI : G.output())
    Info[VI.name()] = &VI;
  auto lookup = [&](const std::string &Name) -> const onnx::ValueInfoProto * {
    auto It = Info.find(Name);
    return It == Info.end() ? nullptr : It->second;
  };

  std::string Out = "{";
  bool First = true;
  auto emit = [&](const std::string &Name, const std::string &Body) {
    Out += First ? "\n" : ",\n";
    First = false;
    Out += jsonString(Name) + ": {" + Body + "}";
  };
  if (O.IncludeInputs) {
    std::unordered_set<std::string> Initializers;
    for (const auto &Init : G.initializer())
      Initializers.insert(Init.name());
    for (const auto &VI : G.input())
      if (!Initializers.count(VI.name()))
        emit(VI.name(), typeJson(&VI) + ", \"producer\": \"\", \"op\": \"\"");
  }
  for (int I = 0; I < G.node_size(); ++I) {
    const onnx::NodeProto &N = G.node(I);
    std::string Producer = N.name().empty() ? "#" + std::to_string(I) : N.name();
    for (const std::string &Name : N.output()) {
      if (Name.empty())
        continue;
      std::string Body = typeJson(lookup(Name));
      Body += ", \"producer\": " + jsonString(Producer) + ", \"op\": " + jsonString(N.op_type());
      auto It = ShapeData.find(Name);
      if (It != ShapeData.end())
        Body += ", \"value\": " + dimsJson(It->second);
      emit(Name, Body);
    }
  }
  Out += "\n}\n";
  std::fwrite(Out.data(), 1, Out.size(), stdout);
  if (!Error.empty())
    fail("InferShapes raised: " + Error, 1);
  return 0;
}
