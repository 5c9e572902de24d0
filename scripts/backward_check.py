#!/usr/bin/python3
"""How much of the graph inputs' facts backward inference recovers .

For every model: strip the graph inputs' shapes (rank unknown), every value_info and the graph
outputs' shapes (with --types, the inputs' and outputs' element types too), run
`shapeflow infer` on the stripped copy, and compare what it reports for each input with what
the original declares:
  - rank: recovered when shapeflow gives the declared rank;
  - static dims: a dim the original declares as a number, recovered when shapeflow gives it;
  - element type (with --types): recovered when shapeflow gives the declared one.
Anything shapeflow gives that contradicts the declaration (another rank, another number,
another type) is WRONG and makes the exit status 1, as does an error on the stripped model that
the original does not have.

  /usr/bin/python3 scripts/backward_check.py [--types] [--models-dir dev_models ...]
"""
import argparse
import glob
import os
import re
import subprocess
import sys
import tempfile

import onnx

TYPES = {1: 'f32', 2: 'u8', 3: 'i8', 4: 'u16', 5: 'i16', 6: 'i32', 7: 'i64', 8: 'str', 9: 'bool',
         10: 'f16', 11: 'f64', 12: 'u32', 13: 'u64', 16: 'bf16'}


def declared_inputs(model):
    inits = {i.name for i in model.graph.initializer}
    out = []
    for i in model.graph.input:
        if i.name in inits or not i.type.HasField('tensor_type'):
            continue
        tt = i.type.tensor_type
        dims = None
        if tt.HasField('shape'):
            dims = [d.dim_value if d.HasField('dim_value') else None for d in tt.shape.dim]
        out.append((i.name, TYPES.get(tt.elem_type, '?'), dims))
    return out


def strip(model, types):
    inits = {i.name for i in model.graph.initializer}
    for i in model.graph.input:
        if i.name in inits or not i.type.HasField('tensor_type'):
            continue
        i.type.tensor_type.ClearField('shape')
        if types:
            i.type.tensor_type.elem_type = 0
    del model.graph.value_info[:]
    for o in model.graph.output:
        if o.type.HasField('tensor_type'):
            o.type.tensor_type.ClearField('shape')
            if types:
                o.type.tensor_type.elem_type = 0


def split_dims(text):
    """`x_d0,3,(H - 1)//2 + 1,?{1..8}` -> top-level comma-separated items."""
    items, depth, cur = [], 0, ''
    for ch in text:
        if ch in '([{':
            depth += 1
        elif ch in ')]}':
            depth -= 1
        if ch == ',' and depth == 0:
            items.append(cur)
            cur = ''
        else:
            cur += ch
    if cur:
        items.append(cur)
    return items


def run_infer(shapeflow, path):
    p = subprocess.run([shapeflow, 'infer', path], capture_output=True, text=True, timeout=600)
    text = p.stdout
    facts, section = {}, None
    for line in text.splitlines():
        if not line.startswith(' '):
            section = line.rstrip(':')
            continue
        if section == 'inputs':
            m = re.match(r'\s+(\S+): (\S+?)\[(.*)\]', line)
            if m:
                name, ty, dims = m.groups()
                facts[name] = (ty, None if dims == '...' else split_dims(dims))
    m = re.search(r'(\d+) errors', text)
    errors = int(m.group(1)) if m else -1
    return facts, errors


def check_model(shapeflow, path, types, tmp):
    orig = onnx.load(path, load_external_data=False)
    declared = declared_inputs(orig)
    _, orig_errors = run_infer(shapeflow, path)
    strip(orig, types)
    stripped = os.path.join(tmp, os.path.basename(path))
    onnx.save(orig, stripped)
    got, errors = run_infer(shapeflow, stripped)
    row = {'model': os.path.splitext(os.path.basename(path))[0], 'inputs': len(declared),
           'ranks': 0, 'ranks_declared': 0, 'dims': 0, 'dims_declared': 0, 'types': 0,
           'wrong': [], 'missed': [], 'errors': errors, 'orig_errors': orig_errors}
    for name, ty, dims in declared:
        gty, gdims = got.get(name, ('?', None))
        if types:
            if gty == ty:
                row['types'] += 1
            elif gty != '?':
                row['wrong'].append(f'{name}: type {gty}, declared {ty}')
        if dims is None:
            continue
        row['ranks_declared'] += 1
        statics = [k for k, d in enumerate(dims) if d is not None]
        row['dims_declared'] += len(statics)
        if gdims is None:
            row['missed'].append(f'{name}: rank {len(dims)}')
            continue
        if len(gdims) != len(dims):
            row['wrong'].append(f'{name}: rank {len(gdims)}, declared {len(dims)}')
            continue
        row['ranks'] += 1
        for k, d in enumerate(dims):
            g = gdims[k].strip()
            if re.fullmatch(r'\d+', g):
                if d is None or int(g) != d:
                    # A number where the model declares a symbol may still be right (a dim the
                    # weights fix that the exporter left named); one that contradicts a number is not.
                    if d is not None:
                        row['wrong'].append(f'{name}[{k}]: {g}, declared {d}')
                elif d is not None:
                    row['dims'] += 1
            elif d is not None:
                row['missed'].append(f'{name}[{k}] = {d}')
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--models-dir', action='append')
    ap.add_argument('--shapeflow', default='build/src/cli/shapeflow')
    ap.add_argument('--types', action='store_true', help='strip element types as well')
    ap.add_argument('--verbose', action='store_true', help='list what was not recovered')
    args = ap.parse_args()
    dirs = args.models_dir or ['dev_models']
    paths = sorted(p for d in dirs for p in glob.glob(os.path.join(d, '*.onnx')))
    if not paths:
        sys.exit('no models found in ' + ', '.join(dirs))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for p in paths:
            rows.append(check_model(args.shapeflow, p, args.types, tmp))
    cols = '| model | inputs | ranks | static dims |' + (' types |' if args.types else '') + \
        ' errors (stripped / original) |'
    print(cols)
    print('|' + '---|' * (cols.count('|') - 1))
    tot = {k: 0 for k in ('inputs', 'ranks', 'ranks_declared', 'dims', 'dims_declared', 'types')}
    bad = False
    for r in rows:
        for k in tot:
            tot[k] += r[k]
        line = f"| {r['model']} | {r['inputs']} | {r['ranks']}/{r['ranks_declared']} | " \
               f"{r['dims']}/{r['dims_declared']} |"
        if args.types:
            line += f" {r['types']}/{r['inputs']} |"
        line += f" {r['errors']} / {r['orig_errors']} |"
        print(line)
        if r['wrong'] or r['errors'] > r['orig_errors']:
            bad = True
            print(f"  WRONG {r['model']}: {'; '.join(r['wrong']) or 'errors on the stripped model'}")
        if args.verbose and r['missed']:
            print(f"  not recovered: {'; '.join(r['missed'])}")
    line = f"| total | {tot['inputs']} | {tot['ranks']}/{tot['ranks_declared']} | " \
           f"{tot['dims']}/{tot['dims_declared']} |"
    if args.types:
        line += f" {tot['types']}/{tot['inputs']} |"
    print(line + ' |')
    sys.exit(1 if bad else 0)


if __name__ == '__main__':
    main()
