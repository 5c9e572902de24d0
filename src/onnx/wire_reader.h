// Internal: the protobuf wire-format walker under the ONNX reader. It wraps a CodedInputStream
// over a flat buffer, checks every tag, length and wire type against the message being read,
// and remembers the path of enclosing items (graph, node, attribute, ...) so that the first
// error can say where it is. Errors are sticky: the first failure formats the message and every
// method returns false from then on; the parser just unwinds. That keeps the hot path free of
// Result objects; the public API turns the outcome into a Result.
#pragma once

#include "shapeflow/onnx/wire.h"

#include <google/protobuf/io/coded_stream.h>

#include <cstring>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#define SF_LIKELY(x) __builtin_expect(!!(x), 1)
#define SF_UNLIKELY(x) __builtin_expect(!!(x), 0)

namespace sf::onnx::detail {

enum WireType : uint32_t {
  kVarint = 0,
  kFixed64 = 1,
  kLen = 2,
  kStartGroup = 3,
  kEndGroup = 4,
  kFixed32 = 5,
};

struct Field {
  uint32_t number = 0;
  uint32_t wireType = 0;
};

/// The kinds of item an error path is made of; each knows which field holds its name.
enum class Scope : uint8_t {
  Graph,
  Function,
  Node,
  Attribute,
  Initializer,
  SparseInitializer,
  Input,
  Output,
  ValueInfo,
  Tensor,
  OpsetImport,
};

class WireReader {
public:
  WireReader(std::string_view bytes, std::string_view label, const ReadLimits &limits);

  const ReadLimits &limits() const { return limits_; }
  bool failed() const { return failed_; }
  const std::string &error() const { return error_; }
  int position() const { return in_.CurrentPosition(); }
  std::string_view bytesBetween(int begin, int end) const {
    return {base_ + begin, static_cast<size_t>(end - begin)};
  }

  /// Reads the next tag of the current message. False at its end or on error (see failed()).
  bool next(Field &f) {
    fieldStart_ = in_.CurrentPosition();
    if (fieldStart_ >= end_) return false;
    uint32_t tag = in_.ReadTagNoLastTag();
    f.number = tag >> 3;
    f.wireType = tag & 7;
    if (SF_UNLIKELY(f.number == 0 || f.wireType == kEndGroup || f.wireType > kFixed32))
      return failTag(tag);
    return true;
  }

  // ---- Scalars of known fields: the wire type is checked, `name` goes into messages. ----
  bool varint(const Field &f, const char *name, uint64_t &v) {
    if (SF_UNLIKELY(f.wireType != kVarint)) return failWireType(f, name, "varint");
    return readVarint(name, f.number, v);
  }
  bool int64(const Field &f, const char *name, int64_t &v) {
    uint64_t u = 0;
    if (!varint(f, name, u)) return false;
    v = static_cast<int64_t>(u);
    return true;
  }
  /// int32 and enum fields: negative values come sign-extended to 64 bits.
  bool int32(const Field &f, const char *name, int32_t &v);
  bool float32(const Field &f, const char *name, float &v) {
    if (SF_UNLIKELY(f.wireType != kFixed32)) return failWireType(f, name, "fixed32");
    uint32_t bits;
    if (!in_.ReadLittleEndian32(&bits)) return failTruncated(name, f.number);
    std::memcpy(&v, &bits, 4);
    return true;
  }
  /// A string, bytes or (unparsed) message field, as a view into the buffer.
  bool bytes(const Field &f, const char *name, std::string_view &out) {
    if (SF_UNLIKELY(f.wireType != kLen)) return failWireType(f, name, "length-delimited");
    int len;
    if (!readLength(name, f.number, len)) return false;
    out = std::string_view(base_ + in_.CurrentPosition(), static_cast<size_t>(len));
    in_.Skip(len);
    return true;
  }
  /// A known field whose value is not needed: checks its wire type, then skips it.
  bool ignore(const Field &f, const char *name, uint32_t wireType) {
    if (SF_UNLIKELY(f.wireType != wireType)) return failWireType(f, name, wireTypeName(wireType));
    return skip(f);
  }
  /// An unknown field, of any wire type (groups included).
  bool skip(const Field &f);

  // ---- Repeated scalars: each occurrence is either packed (wire type 2) or one value. ----
  template <class Fn> bool repeatedVarint(const Field &f, const char *name, Fn &&each) {
    if (f.wireType == kVarint) {
      uint64_t v;
      if (!readVarint(name, f.number, v)) return false;
      each(v);
      return true;
    }
    if (SF_UNLIKELY(f.wireType != kLen)) return failWireType(f, name, "varint or packed");
    int len;
    if (!readLength(name, f.number, len)) return false;
    int end = in_.CurrentPosition() + len;
    auto saved = in_.PushLimit(len);
    int savedEnd = end_;
    end_ = end;
    while (in_.CurrentPosition() < end) {
      uint64_t v;
      int start = in_.CurrentPosition();
      if (SF_UNLIKELY(!in_.ReadVarint64(&v))) return failPacked(start, name, f.number);
      each(v);
    }
    end_ = savedEnd;
    in_.PopLimit(saved);
    return true;
  }
  /// Fixed-width repeated fields (float: 4 bytes, double: 8). `each` gets the raw bits.
  template <class Fn> bool repeatedFixed32(const Field &f, const char *name, Fn &&each) {
    return repeatedFixed<uint32_t, kFixed32>(f, name, each);
  }
  template <class Fn> bool repeatedFixed64(const Field &f, const char *name, Fn &&each) {
    return repeatedFixed<uint64_t, kFixed64>(f, name, each);
  }
  /// A packed run kept as a view (tensor data): its length must be a multiple of `width`.
  bool packedFixedView(const Field &f, const char *name, int width, std::string_view &out);
  /// A packed varint run kept as a view; every varint in it is validated and counted.
  bool packedVarintView(const Field &f, const char *name, std::string_view &out, int64_t &count);

  /// Fails with "more than `limit` values in 'name'".
  bool failList(const char *name, size_t limit);

  /// Values of a repeated int64 field (packed or not) appended to `out`, reserving exactly for a
  /// packed run. Fails past `limit` values.
  bool appendInts(const Field &f, const char *name, std::vector<int64_t> &out, size_t limit);
  bool appendFloats(const Field &f, const char *name, std::vector<float> &out, size_t limit);

  /// How many fields, from the current one on, carry the same tag as f: the length of the run
  /// of a repeated field, found by walking tags and lengths only (no value read, no weight byte
  /// touched). At least 1; tolerant: it stops quietly at anything malformed.
  size_t runLength(const Field &f) const;

  // ---- Nested messages. ----
  /// Runs body() over the payload of message field f; fails if body() does not consume it all.
  template <class Body> bool message(const Field &f, const char *name, Body &&body) {
    if (SF_UNLIKELY(f.wireType != kLen))
      return failWireType(f, name, "length-delimited (a message)");
    int len;
    if (!readLength(name, f.number, len)) return false;
    if (SF_UNLIKELY(++depth_ > limits_.maxNestingDepth)) return failDepth();
    int savedEnd = end_;
    end_ = in_.CurrentPosition() + len;
    auto saved = in_.PushLimit(len);
    if (!body() || SF_UNLIKELY(failed_)) return false;
    if (SF_UNLIKELY(in_.CurrentPosition() != end_))
      return fail("internal error: message not read to its end");
    in_.PopLimit(saved);
    end_ = savedEnd;
    --depth_;
    return true;
  }
  /// Like message(), and the payload is an item of the error path (a node, an attribute...).
  template <class Body>
  bool item(const Field &f, const char *name, Scope scope, int64_t index, Body &&body) {
    return message(f, name, [&] {
      frames_.push_back({scope, index, in_.CurrentPosition(), end_});
      bool ok = body();
      if (ok) frames_.pop_back();
      return ok;
    });
  }
  /// Marks the whole buffer as an item of the error path (a lone TensorProto).
  void pushTopFrame(Scope scope) { frames_.push_back({scope, -1, 0, end_}); }

  /// An item of the error path: its kind, its index in its list (-1: none), its payload's
  /// offsets in the buffer.
  struct ItemFrame {
    Scope scope;
    int64_t index;
    int begin, end;
  };
  /// The payload of message field f, unread (the same checks, in the same order, and messages
  /// as message()): an item left for a later pass, which resumes inside it.
  bool messageBytes(const Field &f, const char *name, std::string_view &out) {
    if (SF_UNLIKELY(f.wireType != kLen))
      return failWireType(f, name, "length-delimited (a message)");
    int len;
    if (!readLength(name, f.number, len)) return false;
    if (SF_UNLIKELY(depth_ + 1 > limits_.maxNestingDepth)) return failDepth();
    out = std::string_view(base_ + in_.CurrentPosition(), static_cast<size_t>(len));
    in_.Skip(len);
    return true;
  }
  /// Starts over inside an item found by an earlier pass (messageBytes): `path` are the items
  /// enclosing it and the item itself, outermost first, `depth` the messages it is nested in
  /// (itself included). Errors then read as they would have in the earlier pass.
  void resume(std::span<const ItemFrame> path, int depth);
  /// The end offset of the innermost item.
  int itemEnd() const { return frames_.empty() ? end_ : frames_.back().end; }

  // ---- Errors. ----
  /// Fails with `message`, prefixed by the label and the item path, at the current field.
  bool fail(std::string_view message) { return failAt(fieldStart_, message); }
  bool failAt(int position, std::string_view message);
  /// The begin offset of the innermost item (for errors found after reading it whole).
  int itemBegin() const { return frames_.empty() ? 0 : frames_.back().begin; }

  static const char *wireTypeName(uint32_t wireType);

private:
  using Frame = ItemFrame;

  bool readVarint(const char *name, uint32_t number, uint64_t &v) {
    int start = in_.CurrentPosition();
    if (SF_LIKELY(in_.ReadVarint64(&v))) return true;
    return failVarint(start, name, number);
  }
  bool readLength(const char *name, uint32_t number, int &len) {
    int start = in_.CurrentPosition();
    if (SF_UNLIKELY(!in_.ReadVarintSizeAsInt(&len))) return failLength(start, name, number);
    if (SF_UNLIKELY(len > end_ - in_.CurrentPosition())) return failPastEnd(name, number, len);
    return true;
  }
  template <class T, uint32_t kWire, class Fn>
  bool repeatedFixed(const Field &f, const char *name, Fn &&each) {
    if (f.wireType == kWire) {
      T v;
      bool ok = sizeof(T) == 4 ? in_.ReadLittleEndian32(reinterpret_cast<uint32_t *>(&v))
                               : in_.ReadLittleEndian64(reinterpret_cast<uint64_t *>(&v));
      if (!ok) return failTruncated(name, f.number);
      each(v);
      return true;
    }
    std::string_view run;
    if (!packedFixedView(f, name, sizeof(T), run)) return false;
    for (size_t i = 0; i < run.size(); i += sizeof(T)) {
      T v;
      std::memcpy(&v, run.data() + i, sizeof(T));
      each(v);
    }
    return true;
  }

  bool failTag(uint32_t tag);
  bool failWireType(const Field &f, const char *name, const char *expected);
  bool failVarint(int start, const char *name, uint32_t number);
  bool failLength(int start, const char *name, uint32_t number);
  bool failPastEnd(const char *name, uint32_t number, int len);
  bool failTruncated(const char *name, uint32_t number);
  bool failPacked(int start, const char *name, uint32_t number);
  bool failDepth();
  bool skipGroup(uint32_t number);
  std::string describeFrame(const Frame &frame) const;

  const char *base_;
  int size_; // of the whole buffer
  google::protobuf::io::CodedInputStream in_;
  std::string_view label_;
  ReadLimits limits_;
  int end_;            // end offset of the message being read
  int fieldStart_ = 0; // offset of the current field's tag
  int depth_ = 0;
  bool failed_ = false;
  std::string error_;
  std::vector<Frame> frames_;
};

/// "field 'ints' (8)": how messages name a field.
std::string fieldLabel(const char *name, uint32_t number);

/// Walks the top-level fields of a protobuf message without reading what they hold: `visit`
/// gets each field's number and its whole bytes, tag included. False when the bytes are not a
/// sequence of well-formed fields.
bool forEachTopLevelField(std::string_view bytes,
                          const std::function<void(uint32_t field, std::string_view whole)> &visit);

} // namespace sf::onnx::detail
