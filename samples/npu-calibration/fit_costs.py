#!/usr/bin/env python3
"""Fits the npu model's vector cost lines (runtime/npu/CostTable.def, the block between
`BEGIN fit_costs.py` and `END fit_costs.py`) to the hardware points of hw-points.txt.

One line per (arch, op) -- per (arch, source dtype, destination dtype) for TCVT:

    cycles = fixed + perRepeat * repeats + perRow * rows

over the op's largest tile operand (valid rows x valid columns, element width of the widest
operand, 16-bit data counted as 32-bit where the line says `Wide16`). A repeat is `Unit` bytes:
256 (a vector repeat) or 32 (a block, for copies through UB's MTE). The count is `Flat` (rows back
to back -- valid columns = tile columns, or one row -- are one run of bytes: repeats =
ceil(bytes / Unit), no per-row charge; otherwise row by row), `Rows` (always row by row: repeats =
rows * ceil(row bytes / Unit), rows charged), `ColReduce` (a column reduction: the first row
copied at one 32-byte block a cycle, then repeats and rows counted over the further rows) or
`Chunks` (A2/A3 tile-scalar ops: the instructions of pto-isa's TBinSOp charged in place of rows,
scalar_op_instructions). On A5 a
row-by-row run may go serial beyond `WideAbove` units a row, with a perRepeat and perRow of its own
(worth it only when it saves a point beyond 10% or 1% of median error). Runtime/npu/Cost.cpp
computes the same quantities (vecShape / vecCycles).

The fit uses the plausible points (no faster than 256 B/cycle) outside the held-out fifth (FNV-1a
of the point's line modulo 5 == 0, as tests/unit/NpuCalibrationTest.cpp splits them): weighted
least squares on relative error (refitted on the points it meets within 10%, so one outlier
does not pull a line off the rest), all coefficients non-negative, the fixed part fitted or kept at
the hand-set line's (A5: + 31); the count, unit, Wide16 and the coefficients fitted chosen by the
training error, then the fewest coefficients. Ops that share one pto-isa implementation are one
group (POOL); ops with no training point keep their hand-set line or take their family's (FAMILY).

    /usr/bin/python3 fit_costs.py hw-points.txt ../../runtime/npu/CostTable.def > fitted.def
    /usr/bin/python3 fit_costs.py hw-points.txt ../../runtime/npu/CostTable.def --score
      (the lines' own figures and the training points beyond 10%, on stderr)

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


# A2/A3 ops that run through pto-isa's tile-scalar template (TBinSOp.hpp): they may count
# `Chunks`, the instructions that template issues (runtime/npu/Cost.h).
TILE_SCALAR_A2A3 = {'TADDS', 'TSUBS', 'TMULS', 'TMINS', 'TMAXS', 'TDIVS', 'TDIVS_SF'}

# One-source elementwise ops (Cost.cpp's unaryElementwise): their hand-set lines count Flat, the
# others Rows; a fit that cannot tell the two counts apart keeps that one.
UNARY = {'TABS', 'TEXP', 'TLOG', 'TSQRT', 'TRSQRT', 'TRECIP', 'TNEG', 'TRELU', 'TNOT',
         'TSQRT_HP', 'TRSQRT_HP', 'TRECIP_HP'}


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
    if p['op'] == 'TCOLSUM' and p['var'] == 'binary':
        return 'TCOLSUM_TMP'  # the binary-tree sum through a scratch tile
    if p['var'] == 'hp':
        return p['op'] + '_HP'  # the HIGH_PRECISION form: another op (isa/Ops.def)
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


def features(p, form):
    """(charged, [1, repeats, rows], units a row, 2-D) of a point under a line's form
    (count, unit bytes, Wide16): `charged` is paid at a fixed rate outside the fitted
    coefficients (ColReduce's copy of the first row, one 32-byte block a cycle)."""
    count, unit, wide16 = form
    vr, vc, cols, bits = shape(p)
    if wide16 and bits == 16:
        bits = 32
    row_bytes = math.ceil(vc * bits / 8)
    per_row = math.ceil(row_bytes / unit)
    if count == 'Chunks':
        return 0, [1.0, vr * per_row, float(scalar_op_instructions(p))], per_row, False
    if count == 'ColReduce':
        return math.ceil(row_bytes / 32), [1.0, (vr - 1) * per_row, float(vr - 1)], per_row, False
    if count == 'Flat' and (vc == cols or vr <= 1):
        return 0, [1.0, math.ceil(vr * row_bytes / unit), 0.0], per_row, False
    return 0, [1.0, vr * per_row, float(vr)], per_row, True


REPEAT_MAX = 255


def scalar_op_instructions(p):
    """The vector instructions of pto-isa's A2/A3 tile-scalar ops (TBinSOp.hpp, TBinSInstr) on
    a tile of run-time valid shape, as the A2/A3 points' tiles are (`Tile<..., -1, -1>`): by the
    tile's static shape, one instruction a row (few rows of many repeats), one a 256-byte column
    chunk repeating over the rows, or row heads and tails in 255-row steps."""
    vr, vc, cols, bits = shape(p)
    rows = p['r']
    per_rep = 256 * 8 // bits
    col_reps = cols // per_rep
    if (col_reps > 1 and rows * col_reps < 4) or rows < col_reps + 1:
        return vr
    stride_blocks = cols * bits // 8 // 32
    head, tail = vc // per_rep, vc % per_rep
    if rows <= REPEAT_MAX and stride_blocks <= REPEAT_MAX:
        return head + (1 if tail else 0)
    heads = rows > per_rep
    n = vr * math.ceil(head / REPEAT_MAX) if heads and head else 0
    remain = tail if heads else vc
    if remain:
        n += vr if stride_blocks > REPEAT_MAX else math.ceil(vr / REPEAT_MAX)
    return n


def predict(p, line):
    form, sol, serial = line
    charged, x, per_row, two_d = features(p, form)
    if serial and two_d and per_row > serial[0]:
        return charged + sol[0] + serial[1] * x[1] + serial[2] * x[2]
    return charged + float(np.dot(x, sol))


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


def rank(group, line):
    err = np.array([abs(predict(p, line) - p['cyc']) / p['cyc'] for p in group])
    return round(float(np.mean(err > 0.10)), 6), round(float(np.median(err)), 4)


def fit_line(group, form, prior_fixed):
    """The best (fixed, perRepeat, perRow) of one form: the fixed part either fitted or pinned at
    the op's hand-set head + tail (`prior_fixed`), with each subset of (perRepeat, perRow).
    Weighted least squares on relative error, coefficients non-negative. Ranked by the points
    beyond 10%, then the median error, then the fewest fitted coefficients -- so where the points
    cannot tell the fixed part from the slope (all of one size), the measured head + tail stays."""
    feats = [features(p, form) for p in group]
    X = np.array([f[1] for f in feats])
    y = np.array([p['cyc'] - f[0] for p, f in zip(group, feats)])
    w = 1 / np.array([p['cyc'] for p in group])
    best = None
    for free_fixed in (False, True):
        for n in (1, 2):
            for cols in itertools.combinations((1, 2), n):
                use = ((0,) if free_fixed else ()) + cols
                if len(use) > len(group) or (2 in cols and not X[:, 2].any()):
                    continue
                base = 0.0 if free_fixed else prior_fixed
                keep = np.ones(len(group), dtype=bool)
                for _ in range(3):  # refit on the points within 10%: an outlier's pull out
                    s, *_ = np.linalg.lstsq(X[keep][:, use] * w[keep, None],
                                            (y[keep] - base) * w[keep], rcond=None)
                    if (s < 0).any():
                        break
                    sol = np.zeros(3)
                    sol[list(use)] = s
                    if not free_fixed:
                        sol[0] = prior_fixed
                    score = rank(group, (form, sol, None)) + (len(use),)
                    if best is None or score < best[0]:
                        best = (score, sol)
                    near = np.abs(X[:, use] @ s + base - y) * w <= 0.10
                    if near.sum() < len(use) or (near == keep).all():
                        break
                    keep = near
    return best


def fit_serial(group, form, sol, above):
    """A 2-D path that goes serial beyond `above` units a row (A5's narrowing TCVTs): its own
    perRepeat and perRow over those points, the fixed part shared."""
    pts = [p for p in group if features(p, form)[3] and features(p, form)[2] > above]
    if len(pts) < 3:
        return None
    X = np.array([features(p, form)[1][1:] for p in pts])
    y = np.array([p['cyc'] - sol[0] for p in pts])
    w = 1 / np.array([p['cyc'] for p in pts])
    s, *_ = np.linalg.lstsq(X * w[:, None], y * w, rcond=None)
    if (s < 0).any():
        return None
    return (above, float(s[0]), float(s[1]))


def forms(key, has16):
    """The line forms a group may take: its repeat count (one-source elementwise ops try Flat
    first; column reductions are ColReduce: pto-isa copies the first row and folds each further
    row into it, one instruction a row), the repeat unit (256-byte vector repeats, or 32-byte
    blocks for copies through the MTE of UB) and whether 16-bit data counts as 32-bit."""
    if key[1].startswith('TCOL') and not key[1].startswith('TCOLEXPAND'):
        counts = ('ColReduce',)
    else:
        counts = ('Flat', 'Rows') if key[1] in UNARY else ('Rows', 'Flat')
    out = [(c, u, w) for c in counts for u in (256, 32) for w in ((False, True) if has16 else
                                                                   (False,))]
    if key[0] == 'a2a3' and key[1] in TILE_SCALAR_A2A3:
        out.insert(0, ('Chunks', 256, False))  # the count of their template, where a tie
    return out


def fit_group(key, train, prior_fixed):
    """The best line of a group over its forms; on A5, a 2-D path may go serial beyond 1, 2, 4
    or 8 units a row, the base line then fitted to the points below it."""
    has16 = any(shape(p)[3] == 16 for p in train)
    best = None
    for form in forms(key, has16):
        for above in (None, 1, 2, 4, 8) if key[0] == 'a5' and form[0] != 'ColReduce' else (None,):
            slow = [p for p in train if above is not None and features(p, form)[3] and
                    features(p, form)[2] > above]
            if above is not None and len(slow) < 3:
                continue
            fast = [p for p in train if p not in slow]
            r = fit_line(fast, form, prior_fixed) if fast else None
            if r is None:
                continue
            serial = fit_serial(slow, form, r[1], above) if slow else None
            if slow and not serial:
                continue
            line = (form, r[1], serial)
            miss, median = rank(train, line)
            if serial:  # two more coefficients: worth a point fewer beyond 10%, or 1% of median
                miss, median = miss + 0.5 / len(train), median + 0.01
            score = (miss, median, r[0][2] + (2 if serial else 0))
            if best is None or score < best[0]:
                best = (score, line)
    return best[1]


# Ops that share one pto-isa implementation on an arch and are fitted as one group: A2/A3
# divides tile by scalar and scalar by tile alike (vector_dup, then vdiv; TDivS.hpp).
# On A5 pto-isa's TRECIP is TDIVS(dst, 1, src), so the high-precision reciprocal and division
# run the same IEEE-754 division sequence per repeat (custom/Div754.hpp).
POOL = {('a2a3', 'TDIVS_SF'): 'TDIVS', ('a2a3', 'TMULS'): 'TADDS', ('a2a3', 'TSUBS'): 'TADDS',
        ('a2a3', 'TMINS'): 'TADDS', ('a2a3', 'TMAXS'): 'TADDS', ('a5', 'TDIV_HP'): 'TRECIP_HP'}

# A2/A3 tile-scalar ops (TBinSOp: vadds, vmuls, vmins, vmaxs) on f32 pay a larger fixed part than on
# the 16-bit types and i32: all seven f32 points of TADDS, TMULS and TMINS sit about 17 cycles
# above the line the other nine meet, whatever their repeats and instructions (one instruction of
# 32 or 64 repeats, 7 of 7, 2 of 255 + 1). They get a line of their own (NPU_FIT_DT, F32).
F32_APART = {('a2a3', 'TADDS')}

# A5 high-precision forms without hardware points, derived from measured lines by the
# instructions pto-isa runs per repeat: TSQRT_HP is vsqrt and 23 more single vector
# instructions (custom/TSqrtHp.hpp, SqrtFloatImpl: the subnormal scaling, a Newton step and the
# special-value selects), each charged at TADD's per-repeat cost; TRSQRT_HP runs that and then
# the division sequence of TRECIP_HP (TRsqrt.hpp).
SQRT_HP_EXTRA_INSTRUCTIONS = 23
PER_DTYPE = {'TSQRT_HP', 'TRSQRT_HP', 'TRECIP_HP', 'TDIV_HP'}


def derive_hp(lines):
    sqrt, add = lines.get(('a5', 'TSQRT', '', '')), lines.get(('a5', 'TADD', '', ''))
    if not (sqrt and add):
        return
    form, sol, _ = sqrt
    extra = SQRT_HP_EXTRA_INSTRUCTIONS * add[1][1]
    for dt in ('f32', 'f16'):
        lines[('a5', 'TSQRT_HP', '', dt)] = (form, (sol[0], sol[1] + extra, sol[2]), None)
        recip = lines.get(('a5', 'TRECIP_HP', '', dt))
        if recip:
            rform, rsol, rserial = recip
            lines[('a5', 'TRSQRT_HP', '', dt)] = (rform, (rsol[0], rsol[1] + sol[1] + extra,
                                                          rsol[2]), rserial)


def line_key(arch, op, p):
    """The line a point is scored against: per (arch, op); per dtype pair for TCVT and per
    element type for the high-precision forms (pto-isa's f16 and f32 sequences differ)."""
    if p['op'] == 'TCVT':
        return (arch, op, p['src'], p['dt'])
    if (arch, op) in F32_APART:
        return (arch, op, '', 'f32' if p['dt'] == 'f32' else '')
    return (arch, op, '', p['dt'] if op in PER_DTYPE else '')


def fit_all(points, prior):
    pts = [p for p in points if plausible(p) and op_of(p) not in NOT_LINES
           and p['var'] != 'inplace']
    groups = {}
    for p in pts:
        op = POOL.get((p['arch'], op_of(p)), op_of(p))
        groups.setdefault(line_key(p['arch'], op, p), []).append(p)
    for arch in ('a2a3', 'a5'):
        for op, parent in FAMILY.items():
            own = [p for p in groups.get((arch, op, '', ''), []) if not p['held']]
            if len(own) < 2 and (arch, parent, '', '') in groups:
                groups[(arch, op, '', '')] = groups[(arch, parent, '', '')]
    lines = {}
    for key in sorted(groups):
        train = [p for p in groups[key] if not p['held']]
        if not train:
            continue
        pf = prior.get(key[1], 6.0) + (31 if key[0] == 'a5' else 0)
        lines[key] = fit_group(key, train, pf)
    for (arch, op), pooled in POOL.items():
        for key in [k for k in lines if k[:2] == (arch, pooled)]:
            lines[(arch, op) + key[2:]] = lines[key]
    derive_hp(lines)
    return lines


def emit(lines):
    print('// BEGIN fit_costs.py (generated from samples/npu-calibration/hw-points.txt)')
    for key, (form, sol, serial) in sorted(lines.items()):
        arch = 'A5' if key[0] == 'a5' else 'A2A3'
        count, unit, wide = form
        nums = '%s, %d, %d, %.4g, %.4g, %.4g' % (count, unit, wide, *sol)
        nums += ', %d, %.4g, %.4g' % serial if serial else ', 0, 0, 0'
        if key[1] == 'TCVT':
            print('NPU_FIT_CVT(%s, %s, %s, %s)' % (arch, CPP_DT[key[2]], CPP_DT[key[3]], nums))
        elif key[3]:
            print('NPU_FIT_DT(%s, %s, %s, %s)' % (arch, key[1], CPP_DT[key[3]], nums))
        elif key[1].endswith('_TMP'):
            print('NPU_FIT_TMP(%s, %s, %s)' % (arch, key[1][:-4], nums))
        else:
            print('NPU_FIT(%s, %s, %s)' % (arch, key[1], nums))
    print('// END fit_costs.py')


def score(points, lines):
    """The fitted lines' own figures on the points they cover (the unit test measures every
    point through the tools; this is the fitter's quick view)."""
    for arch in ('a2a3', 'a5'):
        for held in (False, True):
            errs = []
            for p in points:
                key = line_key(p['arch'], POOL.get((p['arch'], op_of(p)), op_of(p)), p)
                scored = (p['arch'] == arch and key in lines and plausible(p)
                          and (p['held'] or not held))
                if not scored:
                    continue
                e = (predict(p, lines[key]) - p['cyc']) / p['cyc']
                errs.append(abs(e))
                if abs(e) > 0.10 and not held:
                    print('  miss %-60s model %7.1f %+.1f%%' % (p['line'], predict(p, lines[key]),
                                                              100 * e), file=sys.stderr)
            errs = np.array(errs)
            print('%s %s: n=%d within 10%% %.0f%% median %.1f%%' % (
                arch, 'held-out' if held else 'all', len(errs), 100 * np.mean(errs <= 0.10),
                100 * np.median(errs)), file=sys.stderr)


def main():
    points = read(sys.argv[1])
    lines = fit_all(points, priors(sys.argv[2]))
    if '--score' in sys.argv:
        score(points, lines)
    else:
        emit(lines)


if __name__ == '__main__':
    main()
