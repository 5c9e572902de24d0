// Internal: slow paths of the wire walker: skipping unknown fields and groups, and the error
// messages, which name the item path (found again by a tolerant re-scan of the bytes of each
// enclosing item, so that the hot path never has to remember names).
#include "wire_reader.h"

#include <algorithm>
#include <climits>

namespace sf::onnx::detail {

namespace {

// Decodes a varint at p (below end) without trusting it: returns the number of bytes it took,
// 0 if it runs into `end`, -1 if it is longer than 10 bytes.
int peekVarint(const unsigned char *p, const unsigned char *end, uint64_t &value) {
  value = 0;
  for (int i = 0; i < 10; ++i) {
    if (p + i >= end) return 0;
    value |= static_cast<uint64_t>(p[i] & 0x7f) << (7 * i);
    if (!(p[i] & 0x80)) return i + 1;
  }
  return -1;
}

// The last value of length-delimited field `number` among the top-level fields of `msg`.
// Tolerant: it stops quietly at the first thing it cannot parse. Only used for error messages.
std::string_view scanString(std::string_view msg, uint32_t number) {
  auto p = reinterpret_cast<const unsigned char *>(msg.data());
  auto end = p + msg.size();
  std::string_view found;
  while (p < end) {
    uint64_t tag, v;
    int n = peekVarint(p, end, tag);
    if (n <= 0) break;
    p += n;
    uint32_t wt = tag & 7;
    if (wt == kVarint) {
      if ((n = peekVarint(p, end, v)) <= 0) break;
      p += n;
    } else if (wt == kFixed64) {
      p += 8;
    } else if (wt == kFixed32) {
      p += 4;
    } else if (wt == kLen) {
      if ((n = peekVarint(p, end, v)) <= 0) break;
      p += n;
      if (v > static_cast<uint64_t>(end - p)) break;
      if ((tag >> 3) == number)
        found = std::string_view(reinterpret_cast<const char *>(p), static_cast<size_t>(v));
      p += v;
    } else {
      break; // groups and garbage: give up
    }
  }
  return found;
}

// Names from a hostile file go into messages: keep them short and printable.
std::string printable(std::string_view s) {
  std::string out;
  size_t n = std::min<size_t>(s.size(), 80);
  for (size_t i = 0; i < n; ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    out += (c >= 0x20 && c < 0x7f) || c >= 0x80 ? static_cast<char>(c) : '?';
  }
  if (s.size() > n) out += "...";
  return out;
}

std::string quoted(std::string_view s) { return "'" + printable(s) + "'"; }

} // namespace

std::string fieldLabel(const char *name, uint32_t number) {
  return std::string("field '") + name + "' (" + std::to_string(number) + ")";
}

WireReader::WireReader(std::string_view bytes, std::string_view label, const ReadLimits &limits)
    : base_(bytes.data()), size_(static_cast<int>(bytes.size())),
      in_(reinterpret_cast<const uint8_t *>(bytes.data()), static_cast<int>(bytes.size())),
      label_(label), limits_(limits), end_(static_cast<int>(bytes.size())) {
  frames_.reserve(16);
}

void WireReader::resume(std::span<const ItemFrame> path, int depth) {
  // A CodedInputStream cannot be moved back: a new one over the buffer up to the item's end,
  // skipped to its start (positions stay offsets in the whole buffer).
  int begin = path.empty() ? 0 : path.back().begin;
  int end = path.empty() ? size_ : path.back().end;
  in_.~CodedInputStream();
  new (&in_) google::protobuf::io::CodedInputStream(reinterpret_cast<const uint8_t *>(base_), end);
  in_.Skip(begin);
  end_ = end;
  fieldStart_ = begin;
  depth_ = depth;
  failed_ = false;
  error_.clear();
  frames_.assign(path.begin(), path.end());
}

const char *WireReader::wireTypeName(uint32_t wireType) {
  switch (wireType) {
  case kVarint: return "varint";
  case kFixed64: return "fixed64";
  case kLen: return "length-delimited";
  case kStartGroup: return "start-group";
  case kEndGroup: return "end-group";
  case kFixed32: return "fixed32";
  }
  return "invalid";
}

bool WireReader::int32(const Field &f, const char *name, int32_t &v) {
  uint64_t u = 0;
  if (!varint(f, name, u)) return false;
  auto s = static_cast<int64_t>(u);
  if (s < INT32_MIN || s > INT32_MAX)
    return fail(fieldLabel(name, f.number) + ": value " + std::to_string(s) +
                " does not fit in int32");
  v = static_cast<int32_t>(s);
  return true;
}

bool WireReader::skip(const Field &f) {
  switch (f.wireType) {
  case kVarint: {
    uint64_t v;
    return readVarint("unknown", f.number, v);
  }
  case kFixed64: {
    uint64_t v;
    return in_.ReadLittleEndian64(&v) || failTruncated("unknown", f.number);
  }
  case kFixed32: {
    uint32_t v;
    return in_.ReadLittleEndian32(&v) || failTruncated("unknown", f.number);
  }
  case kLen: {
    int len;
    if (!readLength("unknown", f.number, len)) return false;
    in_.Skip(len);
    return true;
  }
  case kStartGroup: return skipGroup(f.number);
  }
  return failTag(f.number << 3 | f.wireType);
}

bool WireReader::skipGroup(uint32_t number) {
  if (++depth_ > limits_.maxNestingDepth) return failDepth();
  for (;;) {
    fieldStart_ = in_.CurrentPosition();
    if (fieldStart_ >= end_)
      return fail("group of field " + std::to_string(number) +
                  " is not closed before the end of its message");
    uint32_t tag = in_.ReadTagNoLastTag();
    Field g{tag >> 3, tag & 7};
    if (g.wireType == kEndGroup && g.number != 0) {
      if (g.number != number)
        return fail("end-group tag of field " + std::to_string(g.number) +
                    " closes the group of field " + std::to_string(number));
      --depth_;
      return true;
    }
    if (g.number == 0 || g.wireType > kFixed32) return failTag(tag);
    if (!skip(g)) return false;
  }
}

bool WireReader::packedFixedView(const Field &f, const char *name, int width,
                                 std::string_view &out) {
  if (!bytes(f, name, out)) return false;
  if (out.size() % width != 0)
    return fail("packed " + fieldLabel(name, f.number) + " has " + std::to_string(out.size()) +
                " bytes, not a multiple of " + std::to_string(width));
  return true;
}

bool WireReader::packedVarintView(const Field &f, const char *name, std::string_view &out,
                                  int64_t &count) {
  if (SF_UNLIKELY(f.wireType != kLen)) return failWireType(f, name, "packed");
  int len;
  if (!readLength(name, f.number, len)) return false;
  int begin = in_.CurrentPosition();
  auto saved = in_.PushLimit(len);
  int savedEnd = end_;
  end_ = begin + len;
  while (in_.CurrentPosition() < end_) {
    uint64_t v;
    int start = in_.CurrentPosition();
    if (!in_.ReadVarint64(&v)) return failPacked(start, name, f.number);
    ++count;
  }
  end_ = savedEnd;
  in_.PopLimit(saved);
  out = bytesBetween(begin, begin + len);
  return true;
}

bool WireReader::appendInts(const Field &f, const char *name, std::vector<int64_t> &out,
                            size_t limit) {
  if (f.wireType != kLen) {
    if (out.size() == out.capacity())
      out.reserve(std::max(out.size() + runLength(f), 2 * out.size()));
    if (!repeatedVarint(f, name, [&](uint64_t v) { out.push_back(static_cast<int64_t>(v)); }))
      return false;
    return out.size() <= limit || failList(name, limit);
  }
  // A packed run: its varints have one terminator byte each, so reserve exactly first.
  int len;
  if (!readLength(name, f.number, len)) return false;
  int begin = in_.CurrentPosition();
  auto p = reinterpret_cast<const unsigned char *>(base_) + begin;
  size_t count = 0;
  for (int i = 0; i < len; ++i)
    count += p[i] < 0x80;
  if (out.size() + count > limit) return failList(name, limit);
  out.reserve(out.size() + count);
  int savedEnd = end_;
  end_ = begin + len;
  auto saved = in_.PushLimit(len);
  while (in_.CurrentPosition() < end_) {
    uint64_t v;
    int at = in_.CurrentPosition();
    if (!in_.ReadVarint64(&v)) return failPacked(at, name, f.number);
    out.push_back(static_cast<int64_t>(v));
  }
  end_ = savedEnd;
  in_.PopLimit(saved);
  return true;
}

bool WireReader::appendFloats(const Field &f, const char *name, std::vector<float> &out,
                              size_t limit) {
  if (f.wireType == kLen) {
    std::string_view run;
    if (!packedFixedView(f, name, 4, run)) return false;
    if (out.size() + run.size() / 4 > limit) return failList(name, limit);
    if (run.empty()) return true; // memcpy wants non-null pointers even for 0 bytes
    size_t at = out.size();
    out.resize(at + run.size() / 4);
    std::memcpy(out.data() + at, run.data(), run.size());
    return true;
  }
  if (out.size() == out.capacity())
    out.reserve(std::max(out.size() + runLength(f), 2 * out.size()));
  if (!repeatedFixed32(f, name, [&](uint32_t bits) {
        float v;
        std::memcpy(&v, &bits, 4);
        out.push_back(v);
      }))
    return false;
  return out.size() <= limit || failList(name, limit);
}

bool WireReader::failList(const char *name, size_t limit) {
  return fail(std::string("more than ") + std::to_string(limit) + " values in '" + name + "'");
}

size_t WireReader::runLength(const Field &f) const {
  auto p = reinterpret_cast<const unsigned char *>(base_) + fieldStart_;
  auto end = reinterpret_cast<const unsigned char *>(base_) + end_;
  const uint64_t tag = uint64_t(f.number) << 3 | f.wireType;
  size_t count = 0;
  while (p < end) {
    uint64_t t, v;
    int n;
    if (*p < 0x80) {
      t = *p;
      n = 1;
    } else if ((n = peekVarint(p, end, t)) <= 0) {
      break;
    }
    if (t != tag) break;
    p += n;
    ++count;
    switch (f.wireType) {
    case kVarint:
      while (p < end && (*p & 0x80))
        ++p;
      ++p;
      break;
    case kFixed64: p += 8; break;
    case kFixed32: p += 4; break;
    case kLen:
      if ((n = peekVarint(p, end, v)) <= 0 || v > static_cast<uint64_t>(end - p - n))
        return std::max<size_t>(count, 1);
      p += n + v;
      break;
    default: return std::max<size_t>(count, 1);
    }
  }
  return std::max<size_t>(count, 1);
}

// ---- Errors ----

bool WireReader::failAt(int position, std::string_view message) {
  if (failed_) return false;
  failed_ = true;
  error_.assign(label_);
  bool first = label_.empty(); // no label (a later pass's reader): the path starts the message
  // A path through dozens of nested subgraphs says no more than its two ends.
  constexpr size_t kHead = 4, kTail = 4;
  size_t n = frames_.size();
  for (size_t i = 0; i < n; ++i) {
    if (n > kHead + kTail + 1 && i == kHead) {
      error_ += ": ... (" + std::to_string(n - kHead - kTail) + " more levels)";
      i = n - kTail - 1;
      continue;
    }
    error_ += first ? describeFrame(frames_[i]) : ": " + describeFrame(frames_[i]);
    first = false;
  }
  if (!first) error_ += ": ";
  error_ += message;
  error_ += " (at byte " + std::to_string(position) + ")";
  return false;
}

std::string WireReader::describeFrame(const Frame &frame) const {
  std::string_view bytes = bytesBetween(frame.begin, frame.end);
  auto named = [&](const char *kind, uint32_t nameField) {
    std::string_view name = scanString(bytes, nameField);
    if (!name.empty()) return std::string(kind) + " " + quoted(name);
    if (frame.index >= 0) return std::string(kind) + " " + std::to_string(frame.index);
    return std::string(kind);
  };
  switch (frame.scope) {
  case Scope::Graph: return named("graph", 2);
  case Scope::Function: return named("function", 1);
  case Scope::Attribute: return named("attribute", 1);
  case Scope::Initializer: return named("initializer", 8);
  case Scope::Input: return named("input", 1);
  case Scope::Output: return named("output", 1);
  case Scope::ValueInfo: return named("value_info", 1);
  case Scope::Tensor: return named("tensor", 8);
  case Scope::OpsetImport: return "opset_import " + std::to_string(frame.index);
  case Scope::SparseInitializer: {
    std::string_view name = scanString(scanString(bytes, 1), 8);
    if (!name.empty()) return "sparse_initializer " + quoted(name);
    return "sparse_initializer " + std::to_string(frame.index);
  }
  case Scope::Node: {
    std::string out = "node " + std::to_string(frame.index);
    std::string_view name = scanString(bytes, 3), op = scanString(bytes, 4);
    if (!name.empty()) out += " " + quoted(name);
    if (!op.empty()) out += " (" + printable(op) + ")";
    return out;
  }
  }
  return "?";
}

bool WireReader::failTag(uint32_t tag) {
  auto p = reinterpret_cast<const unsigned char *>(base_) + fieldStart_;
  auto end = reinterpret_cast<const unsigned char *>(base_) + end_;
  uint64_t value;
  int n = peekVarint(p, end, value);
  if (n == 0) return fail("truncated field tag");
  if (n < 0 || n > 5) return fail("malformed field tag (varint of more than 5 bytes)");
  if (tag == 0 || (tag >> 3) == 0)
    return fail("invalid field number 0 (tag byte " + std::to_string(p[0]) + ")");
  uint32_t wt = tag & 7;
  if (wt == kEndGroup)
    return fail("end-group tag of field " + std::to_string(tag >> 3) + " without a group");
  return fail("invalid wire type " + std::to_string(wt) + " for field " + std::to_string(tag >> 3));
}

bool WireReader::failWireType(const Field &f, const char *name, const char *expected) {
  return fail(fieldLabel(name, f.number) + " has wire type " + std::to_string(f.wireType) + " (" +
              wireTypeName(f.wireType) + "), expected " + expected);
}

bool WireReader::failVarint(int start, const char *name, uint32_t number) {
  auto p = reinterpret_cast<const unsigned char *>(base_) + start;
  auto end = reinterpret_cast<const unsigned char *>(base_) + end_;
  uint64_t value;
  int n = peekVarint(p, end, value);
  if (n == 0) return failAt(start, "truncated varint in " + fieldLabel(name, number));
  return failAt(start, "malformed varint (more than 10 bytes) in " + fieldLabel(name, number));
}

bool WireReader::failLength(int start, const char *name, uint32_t number) {
  auto p = reinterpret_cast<const unsigned char *>(base_) + start;
  auto end = reinterpret_cast<const unsigned char *>(base_) + end_;
  uint64_t value;
  int n = peekVarint(p, end, value);
  if (n <= 0) return failVarint(start, name, number);
  return failAt(start, fieldLabel(name, number) + " has length " + std::to_string(value) +
                           ", past the end of its message (" + std::to_string(end_ - start - n) +
                           " bytes left)");
}

bool WireReader::failPastEnd(const char *name, uint32_t number, int len) {
  return fail(fieldLabel(name, number) + " has length " + std::to_string(len) +
              ", past the end of its message (" + std::to_string(end_ - in_.CurrentPosition()) +
              " bytes left)");
}

bool WireReader::failTruncated(const char *name, uint32_t number) {
  return fail("truncated fixed-width value in " + fieldLabel(name, number));
}

bool WireReader::failPacked(int start, const char *name, uint32_t number) {
  auto p = reinterpret_cast<const unsigned char *>(base_) + start;
  auto end = reinterpret_cast<const unsigned char *>(base_) + end_;
  uint64_t value;
  if (peekVarint(p, end, value) == 0)
    return failAt(start, "truncated packed " + fieldLabel(name, number));
  return failAt(start,
                "malformed varint (more than 10 bytes) in packed " + fieldLabel(name, number));
}

bool WireReader::failDepth() {
  return fail("messages nested deeper than " + std::to_string(limits_.maxNestingDepth) + " levels");
}

bool forEachTopLevelField(std::string_view bytes,
                          const std::function<void(uint32_t field, std::string_view whole)> &visit) {
  const auto *p = reinterpret_cast<const uint8_t *>(bytes.data()), *end = p + bytes.size();
  auto varint = [&](uint64_t &v) {
    v = 0;
    for (int shift = 0; shift < 64 && p < end; shift += 7) {
      uint8_t b = *p++;
      v |= uint64_t(b & 0x7f) << shift;
      if (!(b & 0x80)) return true;
    }
    return false;
  };
  while (p < end) {
    const uint8_t *start = p;
    uint64_t t, v;
    if (!varint(t)) return false;
    switch (t & 7) {
    case 0:
      if (!varint(v)) return false;
      break;
    case 1:
    case 5:
      if (uint64_t(end - p) < ((t & 7) == 1 ? 8u : 4u)) return false;
      p += (t & 7) == 1 ? 8 : 4;
      break;
    case 2:
      if (!varint(v) || v > uint64_t(end - p)) return false;
      p += v;
      break;
    default: return false;
    }
    visit(uint32_t(t >> 3), std::string_view(reinterpret_cast<const char *>(start), size_t(p - start)));
  }
  return true;
}

} // namespace sf::onnx::detail
