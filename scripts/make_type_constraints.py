#!/usr/bin/env python3
"""Writes src/ops/type_constraints.inc: for every operator of ONNX's default domain, each version's
formal inputs and the tensor element types each accepts (its type constraint's tensor types), as
bit masks over TensorProto's data type numbers. shapeflow's inference reports an input whose
element type its op's schema does not accept at the node's opset (onnxruntime refuses to load
such a model).

The source is the ONNX repository's docs/Changelog.md (every version of every operator, with its
inputs and type constraints), read from a checkout (`fetch github:onnx/onnx`, then
`git show HEAD:docs/Changelog.md > Changelog.md`). With --schemas instead, the installed onnx
package's schemas (python3-onnx; 1.12 covers opsets 1-17): the two must agree on the versions both
have, and --with-schemas merges them (the looser of the two where they differ).

usage: /usr/bin/python3 scripts/make_type_constraints.py --changelog Changelog.md [--with-schemas] [OUT]
       /usr/bin/python3 scripts/make_type_constraints.py --schemas [OUT]
"""
import argparse
import html
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(os.path.dirname(HERE), "src", "ops", "type_constraints.inc")
ALL = 0xFFFFFFFF  # not checked (sequences, optionals, maps only)

# TensorProto.DataType numbers (onnx.proto).
DATA_TYPES = {
    "float": 1, "uint8": 2, "int8": 3, "uint16": 4, "int16": 5, "int32": 6, "int64": 7, "string": 8,
    "bool": 9, "float16": 10, "double": 11, "uint32": 12, "uint64": 13, "complex64": 14,
    "complex128": 15, "bfloat16": 16, "float8e4m3fn": 17, "float8e4m3fnuz": 18, "float8e5m2": 19,
    "float8e5m2fnuz": 20, "uint4": 21, "int4": 22, "float4e2m1": 23, "float8e8m0": 24, "uint2": 25,
    "int2": 26,
}


def mask_of(allowed):
    """The mask of a list of type strings: the tensor types' bits; ALL where none is a tensor."""
    m = 0
    for t in allowed:
        t = t.strip()
        if t.startswith("tensor(") and t.endswith(")"):
            name = t[len("tensor("):-1]
            if name not in DATA_TYPES:
                raise SystemExit(f"unknown tensor type {t}")
            m |= 1 << DATA_TYPES[name]
    return m if m else ALL


def from_schemas():
    import onnx.defs as defs
    rows = []
    for s in defs.get_all_schemas_with_history():
        if s.domain != "":
            continue
        constraints = {c.type_param_str: list(c.allowed_type_strs) for c in s.type_constraints}
        masks = [mask_of(constraints.get(p.typeStr, [p.typeStr])) for p in s.inputs]
        variadic = bool(s.inputs) and s.inputs[-1].option == defs.OpSchema.FormalParameterOption.Variadic
        rows.append((s.name, s.since_version, variadic, masks))
    import onnx
    return rows, f"the operator schemas of onnx {onnx.__version__}"


SECTION = re.compile(r'^### <a name="([A-Za-z0-9_]+)-(\d+)"></a>')
ENTRY = re.compile(r"<dt><tt>([^<]*)</tt>([^:]*):\s*(.*?)</dt>")


def from_changelog(path):
    text = open(path, encoding="utf-8").read()
    # The default domain's part only.
    start = text.index("# ai.onnx (default)")
    end = text.find("\n# ai.onnx.", start + 1)
    part = text[start:end if end > 0 else len(text)]
    rows = []
    sections = [(m.start(), m.group(1), int(m.group(2))) for m in
                re.finditer(r'^### <a name="([A-Za-z0-9_]+)-(\d+)"></a>', part, re.M)]
    for k, (pos, name, since) in enumerate(sections):
        body = part[pos:sections[k + 1][0] if k + 1 < len(sections) else len(part)]
        def block(title):
            m = re.search(r"^#### " + title + r"[^\n]*\n+<dl>(.*?)</dl>", body, re.M | re.S)
            return m.group(1) if m else ""
        inputs = [(html.unescape(n).strip(), opts, html.unescape(t).strip())
                  for n, opts, t in ENTRY.findall(block("Inputs"))]
        constraints = {html.unescape(n).strip(): [x for x in html.unescape(t).split(",")]
                       for n, _, t in ENTRY.findall(block("Type Constraints"))}
        masks = []
        for _, _, t in inputs:
            masks.append(mask_of(constraints.get(t, [t])))
        variadic = bool(inputs) and "variadic" in inputs[-1][1]
        rows.append((name, since, variadic, masks))
    return rows, "the ONNX repository's docs/Changelog.md"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--changelog")
    ap.add_argument("--schemas", action="store_true")
    ap.add_argument("--with-schemas", action="store_true",
                    help="with --changelog: merged with the installed onnx package's schemas")
    ap.add_argument("out", nargs="?", default=OUT)
    a = ap.parse_args()
    if a.changelog:
        rows, source = from_changelog(a.changelog)
    elif a.schemas:
        rows, source = from_schemas()
    else:
        ap.error("--changelog FILE or --schemas")
    rows.sort(key=lambda r: (r[0], r[1]))
    if a.with_schemas and a.changelog:
        # Where both have a version, the looser of the two (a document and a package of
        # different dates disagree on a few: Erf-13 takes integers in onnx 1.12's schema and not
        # in today's document); a version whose inputs the document does not list (deprecated
        # operators) takes the schema's.
        theirs = {(r[0], r[1]): r for r in from_schemas()[0]}
        merged = []
        for r in rows:
            t = theirs.get((r[0], r[1]))
            if t and t != r:
                print(f"merged: {r} and the schema's {t}", file=sys.stderr)
                if not r[3]:
                    r = t
                elif len(t[3]) == len(r[3]):
                    r = (r[0], r[1], r[2] or t[2], [x | y for x, y in zip(r[3], t[3])])
            merged.append(r)
        rows = merged
        source += " and " + from_schemas()[1]
    newest = max(r[1] for r in rows)
    with open(a.out, "w") as f:
        f.write(f"// Generated by scripts/make_type_constraints.py from {source} (opsets 1-{newest}): "
                "do not edit.\n")
        f.write("// {op, since version, last input variadic, {each formal input's accepted tensor element types: "
                "bit k = TensorProto data type k; all bits where not checked}}\n")
        f.write(f"#define SF_TYPE_CONSTRAINTS_NEWEST_OPSET {newest}\n")
        for name, since, variadic, masks in rows:
            f.write('{"%s", %d, %s, {%s}},\n' % (name, since, "true" if variadic else "false",
                                                 ", ".join("0x%xu" % m for m in masks)))
    print(f"{len(rows)} versions of {len(set(r[0] for r in rows))} ops, opsets 1-{newest}, from {source} -> {a.out}")


if __name__ == "__main__":
    main()
