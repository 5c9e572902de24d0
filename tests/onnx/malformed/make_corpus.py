#!/usr/bin/python3
"""Writes the malformed ONNX corpus used by tests/onnx/malformed_test.cpp.

Each file has exactly one defect, written at the wire level with the small encoder below so that
the defect is precise (python3-onnx is used only to check that the valid base model is valid).
expected.txt lists, for each file, the stage that must fail and a substring of the message:
  read  readModelFile must fail
  data  readModelFile succeeds, tensorBytes/decode of some initializer must fail

Run from anywhere:  /usr/bin/python3 tests/onnx/malformed/make_corpus.py
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))

# ---- a minimal protobuf encoder ----


def varint(v):
    v &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def tag(field, wire):
    return varint(field << 3 | wire)


def f_varint(field, v):
    return tag(field, 0) + varint(v)


def f_bytes(field, b):
    if isinstance(b, str):
        b = b.encode()
    return tag(field, 2) + varint(len(b)) + b


def f_fixed32(field, v):
    return tag(field, 5) + struct.pack("<I", v)


def f_packed(field, values):
    return f_bytes(field, b"".join(varint(v) for v in values))


# ---- ONNX messages (field numbers from onnx.proto) ----

FLOAT, INT64, STRING = 1, 7, 8


def tensor(name=None, data_type=FLOAT, dims=(), raw=None, extra=b""):
    out = b"".join(f_varint(1, d) for d in dims)
    if data_type is not None:
        out += f_varint(2, data_type)
    if name is not None:
        out += f_bytes(8, name)
    if raw is not None:
        out += f_bytes(9, raw)
    return out + extra


def value_info(name, elem_type=FLOAT, dims=(1,)):
    shape = b"".join(f_bytes(1, f_varint(1, d)) for d in dims)
    tensor_type = f_varint(1, elem_type) + f_bytes(2, shape)
    return f_bytes(1, name) + f_bytes(2, f_bytes(1, tensor_type))


def attribute(name, body):
    return f_bytes(1, name) + body


def node(op, inputs, outputs, name=None, attrs=()):
    out = b"".join(f_bytes(1, i) for i in inputs) + b"".join(f_bytes(2, o) for o in outputs)
    if name is not None:
        out += f_bytes(3, name)
    out += f_bytes(4, op)
    return out + b"".join(f_bytes(5, a) for a in attrs)


def graph(nodes=(), inits=(), inputs=(), outputs=(), name="main", extra=b""):
    out = b"".join(f_bytes(1, n) for n in nodes)
    out += f_bytes(2, name)
    out += b"".join(f_bytes(5, t) for t in inits)
    out += b"".join(f_bytes(11, v) for v in inputs)
    out += b"".join(f_bytes(12, v) for v in outputs)
    return out + extra


def model(graph_bytes, prefix=b""):
    opset = f_bytes(8, f_bytes(1, "") + f_varint(2, 17))
    return prefix + f_varint(1, 8) + f_bytes(2, "make_corpus") + opset + f_bytes(7, graph_bytes)


def base_graph(inits=None, nodes=None, extra=b""):
    if inits is None:
        inits = [tensor("w", FLOAT, (2, 2), struct.pack("<4f", 1, 2, 3, 4))]
    if nodes is None:
        nodes = [node("Add", ["x", "w"], ["y"], name="add0")]
    return graph(nodes, inits, [value_info("x", FLOAT, (2, 2))], [value_info("y", FLOAT, (2, 2))],
                 extra=extra)


def if_node(depth):
    """An If node whose then_branch holds an If node ... `depth` levels down."""
    inner = graph([node("Identity", ["x"], ["y"], name="leaf")], name="g%d" % depth)
    for level in range(depth - 1, -1, -1):
        attr = attribute("then_branch", f_varint(20, 5) + f_bytes(6, inner))
        inner = graph([node("If", ["c"], ["y"], name="if%d" % level, attrs=[attr])],
                      name="g%d" % level)
    return inner


CASES = []  # (file name, bytes, stage, expected substring)


def case(name, data, stage, expected):
    CASES.append((name, data, stage, expected))


def build():
    valid = model(base_graph())
    try:  # the base must be a valid model, or the defects below prove nothing
        import onnx
        onnx.checker.check_model(onnx.load_from_string(valid))
    except ImportError:
        pass

    case("empty.onnx", b"", "read", "model has no graph")
    case("png_header.onnx", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "read", "")
    case("truncated_in_raw_data.onnx", valid[:-40], "read", "past the end of its message")
    case("truncated_varint.onnx", f_bytes(7, base_graph()) + tag(1, 0) + b"\x80\x80", "read",
         "truncated varint in field 'ir_version' (1)")
    case("overlong_varint.onnx", tag(1, 0) + b"\xff" * 11 + b"\x01", "read",
         "malformed varint (more than 10 bytes) in field 'ir_version' (1)")
    case("truncated_tag.onnx", valid + b"\x80", "read", "truncated field tag")
    case("graph_as_varint.onnx", f_varint(1, 8) + f_varint(7, 3), "read",
         "field 'graph' (7) has wire type 0 (varint), expected length-delimited")
    bad_node = f_bytes(1, "x") + f_fixed32(4, 0x41414141)
    case("op_type_as_fixed32.onnx", model(base_graph(nodes=[bad_node])), "read",
         "node 0: field 'op_type' (4) has wire type 5 (fixed32), expected length-delimited")
    case("node_length_past_end.onnx",
         f_varint(1, 8) + f_bytes(7, tag(1, 2) + varint(1000) + f_bytes(4, "Relu")), "read",
         "field 'node' (1) has length 1000, past the end of its message")
    case("huge_length.onnx", f_varint(1, 8) + tag(7, 2) + varint(0xFFFFFFFF) + b"\x00", "read",
         "field 'graph' (7) has length 4294967295, past the end")
    case("invalid_wire_type.onnx", valid + tag(9, 6) + b"\x00", "read",
         "invalid wire type 6 for field 9")
    case("field_number_zero.onnx", valid + b"\x00\x01", "read", "invalid field number 0")
    case("unclosed_group.onnx", valid + tag(30, 3) + f_varint(1, 1), "read",
         "group of field 30 is not closed")
    case("mismatched_end_group.onnx", valid + tag(30, 3) + f_varint(1, 1) + tag(31, 4), "read",
         "end-group tag of field 31 closes the group of field 30")
    case("stray_end_group.onnx", valid + tag(30, 4), "read",
         "end-group tag of field 30 without a group")
    case("deep_subgraphs.onnx", model(if_node(100)), "read", "subgraphs nested deeper than 64")
    seq = f_bytes(1, f_varint(1, FLOAT))
    for _ in range(1000):
        seq = f_bytes(4, f_bytes(1, seq))  # sequence_type { elem_type { ... } }
    deep_input = f_bytes(1, "s") + f_bytes(2, seq)
    case("deep_types.onnx",
         model(graph([node("Identity", ["s"], ["t"])], inputs=[deep_input])), "read",
         "messages nested deeper than 512 levels")
    case("negative_dim.onnx",
         model(base_graph(inits=[tensor("w", FLOAT, (2, (1 << 64) - 3), b"")])), "read",
         "initializer 'w': negative dim -3 in dims [2,-3]")
    case("unknown_data_type.onnx", model(base_graph(inits=[tensor("w", 99, (1,), b"\0")])),
         "read", "initializer 'w': unknown data_type 99")
    case("missing_data_type.onnx", model(base_graph(inits=[tensor("w", None, (1,), b"\0")])),
         "read", "data_type is missing (UNDEFINED)")
    case("data_type_not_int32.onnx", model(base_graph(inits=[tensor("w", 1 << 40, (1,))])),
         "read", "field 'data_type' (2): value 1099511627776 does not fit in int32")
    bad_input = graph([node("Relu", ["x"], ["y"])], inputs=[value_info("x", 77, (1,))])
    case("unknown_elem_type.onnx", model(bad_input), "read", "input 'x': unknown elem_type 77")
    case("raw_data_size.onnx",
         model(base_graph(inits=[tensor("w", FLOAT, (2, 2), b"\0" * 12)])), "read",
         "graph 'main': initializer 'w': raw_data has 12 bytes, expected 16 for FLOAT[2,2]")
    float_data = f_bytes(4, struct.pack("<2f", 1, 2))
    case("float_data_count.onnx",
         model(base_graph(inits=[tensor("w", FLOAT, (3,), extra=float_data)])), "read",
         "float_data has 2 values, expected 3 for FLOAT[3]")
    case("float_data_odd_length.onnx",
         model(base_graph(inits=[tensor("w", FLOAT, (1,), extra=f_bytes(4, b"\0" * 6))])),
         "read", "packed field 'float_data' (4) has 6 bytes, not a multiple of 4")
    case("float_data_as_varint.onnx",
         model(base_graph(inits=[tensor("w", FLOAT, (1,), extra=f_varint(4, 1))])), "read",
         "field 'float_data' (4) has wire type 0 (varint)")
    case("int64_data_for_float.onnx",
         model(base_graph(inits=[tensor("w", FLOAT, (1,), extra=f_packed(7, [1]))])), "read",
         "int64_data cannot hold values of a FLOAT tensor")
    case("raw_data_and_float_data.onnx",
         model(base_graph(inits=[tensor("w", FLOAT, (1,), b"\0" * 4, extra=float_data)])),
         "read", "more than one value field: raw_data and float_data")
    case("raw_data_on_string.onnx",
         model(base_graph(inits=[tensor("w", STRING, (1,), b"abc")])), "read",
         "raw_data is not allowed for STRING tensors")
    case("dims_overflow.onnx",
         model(base_graph(inits=[tensor("w", FLOAT, (1 << 62, 4), b"")])), "read",
         "dims [4611686018427387904,4] overflow int64")
    case("duplicate_initializer.onnx",
         model(base_graph(inits=[tensor("w", FLOAT, (1,), b"\0" * 4),
                                 tensor("v", FLOAT, (1,), b"\0" * 4),
                                 tensor("w", FLOAT, (1,), b"\0" * 4)])),
         "read", "graph 'main': duplicate initializer name 'w' (initializer 0 and initializer 2)")
    case("unnamed_initializer.onnx",
         model(base_graph(inits=[tensor(None, FLOAT, (1,), b"\0" * 4)])), "read",
         "initializer 0 has no name")
    pads = attribute("pads", f_varint(20, 7) + f_bytes(8, b"\x01\x02\x83"))
    case("packed_ints_truncated.onnx",
         model(base_graph(nodes=[node("Pad", ["x"], ["y"], name="pad0", attrs=[pads])])), "read",
         "graph 'main': node 0 'pad0' (Pad): attribute 'pads': truncated packed field 'ints' (8)")
    case("unknown_attribute_type.onnx",
         model(base_graph(nodes=[node("Relu", ["x"], ["y"],
                                      attrs=[attribute("a", f_varint(20, 99))])])),
         "read", "attribute 'a': unknown attribute type 99")
    ext = lambda entries, loc=1: f_varint(14, loc) + b"".join(
        f_bytes(13, f_bytes(1, k) + f_bytes(2, v)) for k, v in entries)
    case("external_without_location.onnx",
         model(base_graph(inits=[tensor("w", FLOAT, (2, 2), extra=ext([("offset", "0")]))])),
         "read", "data_location is EXTERNAL but external_data has no 'location'")
    case("external_bad_offset.onnx",
         model(base_graph(inits=[tensor("w", FLOAT, (2, 2),
                                        extra=ext([("location", "w.bin"), ("offset", "abc")]))])),
         "read", "external_data 'offset' is 'abc', not a non-negative integer")
    case("unknown_data_location.onnx",
         model(base_graph(inits=[tensor("w", FLOAT, (1,), b"\0" * 4, extra=f_varint(14, 7))])),
         "read", "unknown data_location 7")
    then_graph = graph([node("Identity", ["x"], ["y"], name="leaf")],
                       inits=[tensor("k", INT64, (3,), b"\0" * 8)], name="then")
    if_attr = attribute("then_branch", f_varint(20, 5) + f_bytes(6, then_graph))
    case("error_in_subgraph.onnx",
         model(base_graph(nodes=[node("If", ["c"], ["y"], name="if0", attrs=[if_attr])])), "read",
         "graph 'main': node 0 'if0' (If): attribute 'then_branch': graph 'then': "
         "initializer 'k': raw_data has 8 bytes, expected 24 for INT64[3]")
    case("no_graph.onnx", f_varint(1, 8) + f_bytes(2, "x"), "read", "model has no graph")

    # Readable models whose external data must be refused when asked for.
    def ext_model(location, offset=None, length=None, dims=(2, 2)):
        entries = [("location", location)]
        if offset is not None:
            entries.append(("offset", str(offset)))
        if length is not None:
            entries.append(("length", str(length)))
        return model(base_graph(inits=[tensor("w", FLOAT, dims, extra=ext(entries))]))

    case("external_absolute.onnx", ext_model("/etc/hostname"), "data", "is absolute")
    case("external_dotdot.onnx", ext_model("sub/../../outside.bin"), "data",
         "leaves the model's folder ('..')")
    case("external_missing.onnx", ext_model("does_not_exist.bin"), "data", "cannot be opened")
    case("external_past_end.onnx", ext_model("external_small.bin", 4, 16), "data",
         "external data offset 4 + length 16 is past the end")
    case("external_offset_past_end.onnx", ext_model("external_small.bin", 100), "data",
         "external data offset 100 is past the end")
    case("external_size_mismatch.onnx", ext_model("external_small.bin", 0, 12), "data",
         "external data has 12 bytes, expected 16 for FLOAT[2,2]")


def main():
    build()
    for name in os.listdir(HERE):
        if name.endswith(".onnx") or name.endswith(".bin"):
            os.remove(os.path.join(HERE, name))
    with open(os.path.join(HERE, "external_small.bin"), "wb") as f:
        f.write(b"\0" * 12)
    lines = ["# file | stage (read: readModelFile fails; data: tensorBytes fails) | message part"]
    for name, data, stage, expected in CASES:
        with open(os.path.join(HERE, name), "wb") as f:
            f.write(data)
        lines.append("%s | %s | %s" % (name, stage, expected))
    with open(os.path.join(HERE, "expected.txt"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("wrote %d files to %s" % (len(CASES), HERE))


if __name__ == "__main__":
    main()
