#!/usr/bin/env python3
"""Fits the npu model's vector cost lines (runtime/npu/CostTable.def, the block between
`BEGIN fit_costs.py` and `END fit_costs.py`) to the hardware points of hw-points.txt.

One line per (arch, op) -- per (arch, source dtype, destination dtype) for TCVT:

    cycles = fixed + perRepeat * repeats + perRow * rows

over the op's largest tile operand (valid rows x valid columns, element width of the widest
operand, 16-bit data counted as 32-bit where the line says `Wide16`). A repeat is 256 bytes. The
count is `Flat` (rows back to back -- valid columns = tile columns, or one row -- are one run of
bytes: repeats = ceil(bytes / 256), no per-row charge; otherwise row by row) or `Rows` (always
row by row: repeats = rows * ceil(row bytes / 256), rows charged). Runtime/npu/Cost.cpp computes
the same quantities (vecShape / vecCycles).

The fit uses the plausible points (no faster than 256 B/cycle) outside the held-out fifth (FNV-1a
of the point's line modulo 5 == 0, as tests/unit/NpuCalibrationTest.cpp splits them): weighted
least squares on relative error, all coefficients non-negative, the fixed part fitted or kept at
the hand-set line's (A5: + 31); the count, Wide16 and the coefficients fitted chosen by the
training error, then the fewest coefficients. A group of one training point gets a line through the origin (cycles
proportional to repeats); ops with no training point keep their hand-set line.

    /usr/bin/python3 fit_costs.py hw-points.txt ../../runtime/npu/CostTable.def > fitted.def

(numpy needed; the .def gives each op's hand-set head + tail, the fixed part a fit keeps when its
points cannot identify one; in-place variants are scored but not fitted, the model does not tell
them apart).
"""
import itertools
import math
import re
import sys

import numpy as np

BITS = {'f32': 32, 'i32': 32, 'u32': 32, 'f16': 16, 'bf16': 16, 'i16': 16, 'u16': 16,
        'i8': 8, 'u8': 8, 'float8e4m3': 8, 'float8e5m2': 8, 'hfloat8': 8, 'float4e1m2': 4,
        'float4e2m1': 4}
CPP_DT = {'f32': 'F32', 'f16': 'F16', 'bf16': 'BF16', 'i32': 'I32', 'i16': 'I16', 'i8': 'I8',
          'u8': 'U8', 'u16': 'U16', 'u32': 'U32', 'float8e4m3': 'F8E4M3', 'float8e5m2': 'F8E5M2',
          'hfloat8': 'HIF8', 'float4e1m2': 'F4E1M2X2', 'float4e2m1': 'F4E2M1X2'}
# Ops whose cost is not a vector line (transfers, the cube) or that the language cannot write.
NOT_LINES = {'TLOAD', 'TMATMUL', 'TMATMUL_ACC'}
# An op with too few training points of its own takes the line of its family's measured op, and
# ops with no points take their family's line too (the same pto-isa implementation).
FAMILY = {'TROWMIN': 'TROWMAX', 'TROWSUM': 'TROWMAX', 'TROWPROD': 'TROWMAX',
          'TCOLMIN': 'TCOLMAX', 'TCOLPROD': 'TCOLSUM', 'TSUBS': 'TADDS', 'TMAXS': 'TMINS',
          'TMAX': 'TADD', 'TMIN': 'TADD'}


# One-source elementwise ops (Cost.cpp's unaryElementwise): their hand-set lines count Flat, the
# others Rows; a fit that cannot tell the two counts apart keeps that one.
UNARY = {'TABS', 'TEXP', 'TLOG', 'TSQRT', 'TRSQRT', 'TRECIP', 'TNEG', 'TRELU', 'TNOT'}


def fnv1a(text):
    h = 2166136261
    for ch in text.encode():
        h = ((h ^ ch) * 16777619) & 0xFFFFFFFF
    return h


def read(path):
    pts = []
    for line in open(path):
        line = line.rstrip('\n')
        if not line or line.startswith('#'):
            continue
        a = line.split()
        p = dict(line=line, arch=a[0], op=a[1], dt=a[2], r=int(a[3]), c=int(a[4]), vr=int(a[5]),
                 vc=int(a[6]), var=a[7], cyc=float(a[8]))
        p['src'] = a[7][5:] if a[7].startswith('from=') else a[2]
        p['held'] = fnv1a(line) % 5 == 0
        pts.append(p)
    return pts


def op_of(p):
    if p['op'] == 'TDIVS' and p['var'] == 'scalar_tile':
        return 'TDIVS_SF'
    return p['op']


def shape(p):
    """(valid rows, valid cols, tile cols, element bits) of the largest operand."""
    bits = max(BITS[p['dt']], BITS[p['src']])
    if p['op'] == 'TSORT32':  # dst: value/index pairs, 8 bytes an element; u32 indices
        cols = p['c'] * 8 * 8 // BITS[p['dt']]
        return p['vr'], cols, cols, 32
    return p['vr'], p['vc'], p['c'], bits


def plausible(p):
    return p['cyc'] >= p['vr'] * p['vc'] * BITS[p['dt']] / 8 / 256


def features(p, count, wide16):
    vr, vc, cols, bits = shape(p)
    if wide16 and bits == 16:
        bits = 32
    row_bytes = math.ceil(vc * bits / 8)
    flat = count == 'Flat' and (vc == cols or vr <= 1)
    if flat:
        return [1.0, math.ceil(vr * row_bytes / 256), 0.0]
    return [1.0, vr * math.ceil(row_bytes / 256), float(vr)]


def priors(def_path):
    """The hand-set fixed part (head + tail) of each op's NPU_VEC / NPU_DEFAULT line."""
    out = {}
    for line in open(def_path):
        m = re.match(r'NPU_VEC\((\w+), ([\d.]+), ([\d.]+)\)', line)
        if m:
            out[m.group(1)] = float(m.group(3))
        m = re.match(r'NPU_DEFAULT\((\w+)\)', line)
        if m:
            out[m.group(1)] = 6.0
    return out


def fit(group, count, wide16, prior_fixed):
    """The best line: the fixed part either fitted or pinned at the op's hand-set head + tail
    (`prior_fixed`), with each subset of (perRepeat, perRow). Ranked by the points beyond 10%,
    then the median error, then the fewest fitted coefficients -- so where the points cannot tell
    the fixed part from the slope (all of one size), the measured head + tail stays."""
    X = np.array([features(p, count, wide16) for p in group])
    y = np.array([p['cyc'] for p in group])
    w = 1 / y
    best = None
    for free_fixed in (False, True):
        for n in (1, 2):
            for cols in itertools.combinations((1, 2), n):
                use = ((0,) if free_fixed else ()) + cols
                if len(use) > len(group) or (2 in cols and not X[:, 2].any()):
                    continue
                base = 0.0 if free_fixed else prior_fixed
                s, *_ = np.linalg.lstsq(X[:, use] * w[:, None], (y - base) * w, rcond=None)
                if (s < 0).any():
                    continue
                sol = np.zeros(3)
                sol[list(use)] = s
                if not free_fixed:
                    sol[0] = prior_fixed
                err = np.abs(X @ sol - y) / y
                score = (round(float(np.mean(err > 0.10)), 6), round(float(np.median(err)), 4),
                         len(use))
                if best is None or score < best[0]:
                    best = (score, sol)
    return best


def main():
    prior = priors(sys.argv[2])
    pts = [p for p in read(sys.argv[1]) if plausible(p) and op_of(p) not in NOT_LINES
           and p['var'] not in ('hp', 'inplace')]
    groups = {}
    for p in pts:
        key = (p['arch'], op_of(p), p['src'] if p['op'] == 'TCVT' else '',
               p['dt'] if p['op'] == 'TCVT' else '')
        groups.setdefault(key, []).append(p)
    print('// BEGIN fit_costs.py (generated from samples/npu-calibration/hw-points.txt)')
    for arch in ('a2a3', 'a5'):
        for op, parent in FAMILY.items():
            own = [p for p in groups.get((arch, op, '', ''), []) if not p['held']]
            if len(own) < 2 and (arch, parent, '', '') in groups:
                groups[(arch, op, '', '')] = groups[(arch, parent, '', '')]
    for key in sorted(groups):
        train = [p for p in groups[key] if not p['held']]
        if not train:
            continue
        has16 = any(shape(p)[3] == 16 for p in train)
        counts = ('Flat', 'Rows') if key[1] in UNARY else ('Rows', 'Flat')
        pf = prior.get(key[1], 6.0) + (31 if key[0] == 'a5' else 0)
        best = min((fit(train, c, w, pf) + (c, w) for c, w in
                    itertools.product(counts, (False, True) if has16 else (False,))),
                   key=lambda t: t[0])
        _, sol, count, wide = best
        arch = 'A5' if key[0] == 'a5' else 'A2A3'
        nums = '%.4g, %.4g, %.4g' % tuple(sol)
        if key[1] == 'TCVT':
            print('NPU_FIT_CVT(%s, %s, %s, %s, %d, %s)' % (arch, CPP_DT[key[2]], CPP_DT[key[3]],
                                                          count, wide, nums))
        else:
            print('NPU_FIT(%s, %s, %s, %d, %s)' % (arch, key[1], count, wide, nums))
    print('// END fit_costs.py')


if __name__ == '__main__':
    main()
