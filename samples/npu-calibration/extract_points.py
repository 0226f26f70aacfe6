#!/usr/bin/env python3
"""Transcribes the hardware-profiled cycle counts of hw-native-sys/pto-isa's cost-model tests
into hw-points.txt (our own table: one measured point a line).

Reads, for facts only, tests/costmodel/st/testcase/* (A2/A3) and tests/costmodel/st_a5_fit (A5)
of a pto-isa git mirror. A point is the op, its data type(s), tile shape, valid shape, the
variant the test names, and the cycles pto-isa reports as measured ("profiling"); tests whose
profiling figure is 0 carry no measurement and are skipped.

    python3 extract_points.py /work/.mirror/hw-native-sys+pto-isa/repo > hw-points.txt
"""
import re
import subprocess
import sys

DT = {'float': 'f32', 'half': 'f16', 'int32_t': 'i32', 'int16_t': 'i16', 'int8_t': 'i8',
      'uint8_t': 'u8', 'uint16_t': 'u16', 'uint32_t': 'u32', 'bfloat16_t': 'bf16',
      'Float': 'f32', 'Half': 'f16', 'BFloat16': 'bf16', 'Int8': 'i8', 'Int16': 'i16',
      'Int32': 'i32', 'UInt8': 'u8', 'UInt16': 'u16', 'UInt32': 'u32'}


def git(repo, *args):
    return subprocess.run(['git', '-C', repo, *args], check=True, capture_output=True,
                          text=True).stdout


def calls(text, fn):
    """Template arguments of every call `fn<...>(` in text, whitespace removed."""
    flat = re.sub(r'\s+', '', text)
    return [m.group(1).split(',') for m in re.finditer(fn + r'<([^<>]*)>\(', flat)]


def num(s):
    return float(s.rstrip('f'))


def a2a3(repo):
    out = []
    base = 'tests/costmodel/st/testcase/'

    def src(d):
        return git(repo, 'show', 'HEAD:' + base + d + '/main.cpp')

    def emit(op, dt, r, c, vr, vc, cyc, extra='-'):
        if cyc > 0:
            out.append(('a2a3', op, dt, r, c, vr, vc, extra, cyc))

    # <T, rows, cols, profiling, accuracy>
    for d, op, fn in [('tabs', 'TABS', 'runTAbs'), ('tadd', 'TADD', 'runTAdd'),
                      ('tmul', 'TMUL', 'runTMul'), ('tsub', 'TSUB', 'runTSub'),
                      ('texp', 'TEXP', 'runTExp'), ('tmins', 'TMINS', 'runTMins'),
                      ('tcolmax', 'TCOLMAX', 'runTColMax'), ('trowmax', 'TROWMAX', 'runTRowMax'),
                      ('trowmin', 'TROWMIN', 'runTRowMin'), ('trowsum', 'TROWSUM', 'runTRowSum'),
                      ('trowexpand', 'TROWEXPAND', 'runTRowExpand'), ('tsel', 'TSEL', 'runTSel'),
                      ('ttrans', 'TTRANS', 'runTTrans')]:
        for a in calls(src(d), fn):
            emit(op, DT[a[0]], int(a[1]), int(a[2]), int(a[1]), int(a[2]), num(a[3]))
    # <T, row, validRow, col, validCol, profiling, accuracy>
    for d, op, fn, extra in [('tadds', 'TADDS', 'runTAddS', '-'), ('tmuls', 'TMULS', 'runTMulS', '-'),
                             ('tdivs', 'TDIVS', 'runTDivS_TileScalar', '-'),
                             ('tdivs', 'TDIVS', 'runTDivS_ScalarTile', 'scalar_tile')]:
        for a in calls(src(d), fn):
            emit(op, DT[a[0]], int(a[1]), int(a[3]), int(a[2]), int(a[4]), num(a[5]), extra)
    for a in calls(src('tcolsum'), 'runTColSum'):  # <T, rows, cols, isBinary, ...>
        emit('TCOLSUM', DT[a[0]], int(a[1]), int(a[2]), int(a[1]), int(a[2]), num(a[4]),
             'binary' if a[3] == 'true' else '-')
    for a in calls(src('tcvt'), 'runTCvt'):  # <Dst, Src, rows, cols>
        emit('TCVT', DT[a[0]], int(a[2]), int(a[3]), int(a[2]), int(a[3]), num(a[4]),
             'from=' + DT[a[1]])
    for a in calls(src('tdiv'), 'runTDiv'):  # <T, rows, validRows?, cols, validCols>
        emit('TDIV', DT[a[0]], int(a[1]), int(a[3]), int(a[2]), int(a[4]), num(a[5]))
    for a in calls(src('trsqrt'), 'runTRsqrt'):  # <T, row, vrow, col, vcol, inPlace>
        emit('TRSQRT', DT[a[0]], int(a[1]), int(a[3]), int(a[2]), int(a[4]), num(a[6]),
             'inplace' if a[5] == 'true' else '-')
    for a in calls(src('tsqrt'), 'runTSqrt'):  # <T, rows, cols, inPlace>
        emit('TSQRT', DT[a[0]], int(a[1]), int(a[2]), int(a[1]), int(a[2]), num(a[4]),
             'inplace' if a[3] == 'true' else '-')
    for a in calls(src('tsort32'), 'runTSort32'):  # <T0, T1, rows, cols>
        emit('TSORT32', DT[a[0]], int(a[2]), int(a[3]), int(a[2]), int(a[3]), num(a[4]))
    text = src('tmatmul')
    for a in calls(text, 'runTMatmul'):  # <Out, A, B, M, K, N>
        emit('TMATMUL', DT[a[1]], int(a[3]), int(a[5]), int(a[3]), int(a[5]), num(a[6]),
             'k=%s' % a[4])
    for a in calls(text, 'runTMatmulSplitK'):  # the last of `reps` TMATMUL_ACC is measured
        emit('TMATMUL_ACC', DT[a[1]], int(a[3]), int(a[5]), int(a[3]), int(a[5]), num(a[7]),
             'k=%s' % a[4])
    flat = re.sub(r'\s+', '', src('tmov'))
    for m in re.finditer(r'TMOV_CASE\(([^()]*)\)', flat):
        a = m.group(1).split(',')
        if len(a) < 14 or a[1] not in DT:
            continue
        emit('TMOV', DT[a[1]], int(a[2]), int(a[3]), int(a[4]), int(a[5]), num(a[12]),
             '%s:%s:%s>%s:%s:%s' % tuple(a[6:12]))
    text = src('tload')
    # ND <T, s0..s4, tRows, tCols, dyn, pad, g0, g1, g2, gCols>: slices = g0*g1*g2, each
    # (tRows/slices) x gCols.
    for a in calls(text, 'runTLoadND'):
        slices = int(a[10]) * int(a[11]) * int(a[12])
        emit('TLOAD', DT[a[0]], int(a[6]), int(a[7]), int(a[6]), int(a[13]), num(a[14]),
             'nd,slices=%d' % slices)
    # DN <T, s0..s4, tRows, tCols, dyn, pad, g0, g1, g2, gRows, gCols>: slices split the columns.
    for a in calls(text, 'runTLoadDN'):
        slices = int(a[10]) * int(a[11]) * int(a[12])
        emit('TLOAD', DT[a[0]], int(a[6]), int(a[7]), int(a[13]), int(a[14]), num(a[15]),
             'dn,slices=%d' % slices)
    return out


def a5(repo):
    out = []
    base = 'tests/costmodel/st_a5_fit/testcase/'
    names = git(repo, 'ls-tree', '--name-only', 'HEAD', base).split()
    for path in names:
        d = path.rsplit('/', 1)[-1]
        if not d.endswith('_fit'):
            continue
        op = d[:-4].upper()
        text = git(repo, 'show', 'HEAD:' + base + d + '/main.cpp')
        flat = re.sub(r'\s+', '', text)
        if op == 'TCVT':
            for m in re.finditer(r'\{DType::(\w+),DType::(\w+),(\d+),(\d+),(\d+),(\d+),([\d.]+),'
                                 r'[\d.]+,VFImplKind::(\w+)\}', flat):
                g = m.groups()
                out.append(('a5', op, DT.get(g[1], g[1].lower()), int(g[2]), int(g[3]), int(g[4]), int(g[5]),
                            'from=' + DT.get(g[0], g[0].lower()), float(g[6])))
            continue
        for m in re.finditer(r'\{DType::(\w+),(\d+),(\d+),(\d+),(\d+),([\d.]+),[\d.]+,'
                             r'VFImplKind::(\w+),"([^"]*)"\}', flat):
            g = m.groups()
            variant = {'high_precision': 'hp', 'default': '-', '': '-'}.get(g[7], g[7])
            out.append(('a5', op, DT.get(g[0], g[0].lower()), int(g[1]), int(g[2]), int(g[3]), int(g[4]), variant,
                        float(g[5])))
        fn = 'run' + {'TADD': 'TAdd', 'TMUL': 'TMul', 'TSUB': 'TSub'}.get(op, '?')
        for a in calls(text, fn):
            if len(a) < 5 or a[0] not in DT:
                continue
            if len(a) >= 7 and '.' in a[5]:
                r, c, vr, vc, cyc = int(a[1]), int(a[2]), int(a[3]), int(a[4]), float(a[5])
            else:
                r, c, cyc = int(a[1]), int(a[2]), float(a[3])
                vr, vc = r, c
            out.append(('a5', op, DT[a[0]], r, c, vr, vc, '-', cyc))
    return out


def main():
    repo = sys.argv[1]
    head = git(repo, 'rev-parse', 'HEAD').strip()
    print('# Hardware-profiled cycles of single PTO ops, transcribed from hw-native-sys/pto-isa')
    print('# @%s: tests/costmodel/st/testcase/* (A2/A3, 910B) and' % head)
    print('# tests/costmodel/st_a5_fit/testcase/* (A5). Regenerate: extract_points.py <mirror>.')
    print('# arch op dtype rows cols valid_rows valid_cols variant cycles')
    seen = set()
    for p in a2a3(repo) + a5(repo):
        if p in seen:
            continue
        seen.add(p)
        print('%s %s %s %d %d %d %d %s %g' % p)


if __name__ == '__main__':
    main()
