"""The harness under the op models: element types as numpy arrays, the op table read from
docs/ops.md (generated from isa/Ops.def), kernel text, running a kernel, and comparisons.

Every buffer is held in its storage carrier: f32 `<f4`, f16 `<f2`, bf16 `<u2` (raw bits, numpy
has no bf16), the 8-bit float types `|u1`, integers as themselves. The models compute from
the values these bits stand for (decode/encode below), never from the runtime's kernels."""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[3]

# ---------------------------------------------------------------------------------------------
# Element types

CARRIER = {
    "f32": np.float32, "f16": np.float16, "bf16": np.uint16,
    "f8E4M3": np.uint8, "f8E5M2": np.uint8, "hif8": np.uint8, "f8E8M0": np.uint8,
    "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
    "ui8": np.uint8, "ui16": np.uint16, "ui32": np.uint32, "ui64": np.uint64,
}
FLOATS = {"f32", "f16", "bf16"}
RAW_BITS = {"bf16", "f8E4M3", "f8E5M2", "hif8", "f8E8M0"}  # carried as unsigned bits
INTS = {"i8", "i16", "i32", "i64", "ui8", "ui16", "ui32", "ui64"}
BITS = {"f32": 32, "f16": 16, "bf16": 16, "f8E4M3": 8, "f8E5M2": 8, "hif8": 8, "f8E8M0": 8,
        "i8": 8, "i16": 16, "i32": 32, "i64": 64, "ui8": 8, "ui16": 16, "ui32": 32, "ui64": 64}
UINT_OF_BITS = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}


def nbytes(t: str) -> int:
    return BITS[t] // 8


def is_float(t: str) -> bool:
    return t in FLOATS


def bf16_to_f32(bits: np.ndarray) -> np.ndarray:
    return (bits.astype(np.uint32) << 16).view(np.float32)


def f64_to_bf16(x: np.ndarray) -> np.ndarray:
    """Round to nearest even into bf16 bits, from binary64 (one rounding: via f32 would round
    twice, so the f32 step is done by hand on the double's bits)."""
    shape = np.shape(x)
    x = np.atleast_1d(np.asarray(x, dtype=np.float64)).ravel()
    bits = x.view(np.uint64)
    sign = (bits >> np.uint64(63)).astype(np.uint16) << np.uint16(15)
    out = np.empty(x.shape, dtype=np.uint16)
    ax = np.abs(x)
    # Values are rounded with 8 significant bits at the scale of their binade; subnormals of
    # bf16 (|x| < 2^-126) have a fixed quantum 2^-133.
    with np.errstate(all="ignore"):
        exp = np.floor(np.log2(np.where(ax > 0, ax, 1.0)))
        exp = np.maximum(exp, -126.0)
        quantum = np.exp2(exp - 7.0)
        q = np.rint(ax / quantum) * quantum  # exact: the division by a power of two is exact
        f = q.astype(np.float32)  # exact when finite and within range
    fb = f.view(np.uint32) >> np.uint32(16)
    over = q >= 2.0 ** 128 * (1 - 2.0 ** -9)
    out[:] = fb.astype(np.uint16)
    out[over] = 0x7F80
    out[np.isinf(x)] = 0x7F80
    out |= sign
    out[np.isnan(x)] = 0x7FC0 | sign[np.isnan(x)]
    return out.reshape(shape)


def decode(t: str, a: np.ndarray) -> np.ndarray:
    """The values (binary64 for floats, Python-exact int64/uint64 for integers)."""
    if t == "bf16":
        return bf16_to_f32(a).astype(np.float64)
    if t in ("f32", "f16"):
        return a.astype(np.float64)
    return a


def encode(t: str, v: np.ndarray) -> np.ndarray:
    """Round binary64 values once to nearest even into t's carrier (floats), or wrap (ints)."""
    if t == "bf16":
        return f64_to_bf16(v)
    if t == "f32":
        with np.errstate(all="ignore"):
            return np.asarray(v, dtype=np.float64).astype(np.float32)
    if t == "f16":
        # binary64 -> f16 in numpy rounds once (npy_double_to_half).
        with np.errstate(all="ignore"):
            return np.asarray(v, dtype=np.float64).astype(np.float16)
    return wrap(t, v)


def wrap(t: str, v) -> np.ndarray:
    """Integers (any size) to t's carrier, keeping the low bits (two's complement)."""
    bits = BITS[t]
    arr = np.asarray(v)
    flat = [int(x) % (1 << bits) for x in arr.ravel()]
    u = np.array(flat, dtype=np.uint64).reshape(arr.shape)
    return u.astype(UINT_OF_BITS[bits]).view(CARRIER[t])


def int_range(t: str) -> tuple[int, int]:
    b = BITS[t]
    if t.startswith("ui"):
        return 0, (1 << b) - 1
    return -(1 << (b - 1)), (1 << (b - 1)) - 1


def raw(t: str, a: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(a).view(UINT_OF_BITS[BITS[t]])


def scalar_literal(t: str, value) -> str:
    """A scalar constant's text: the raw bits in hex for floats (exact for NaN/inf/-0)."""
    if is_float(t) or t.startswith("f8") or t == "hif8":
        bits = int(raw(t, np.array([value], dtype=CARRIER[t]))[0])
        return f"0x{bits:0{BITS[t] // 4}X}"
    return str(int(value))


# ---------------------------------------------------------------------------------------------
# Random data: a numpy Generator seeded by hypothesis, values spread over magnitudes, with
# special values mixed in when the op defines them.

FLOAT_SPECIALS = {
    "f32": [0.0, -0.0, np.inf, -np.inf, np.nan, 1.4e-45, -1.4e-45, 1.1754942e-38, 3.4028235e38,
            -3.4028235e38, 1.0, -1.0],
    "f16": [0.0, -0.0, np.inf, -np.inf, np.nan, 6e-8, -6e-8, 6.1e-5, 65504.0, -65504.0, 1.0, -1.0],
}


def random_values(rng: np.random.Generator, t: str, shape, *, specials: bool = False,
                  lo: float | None = None, hi: float | None = None, nonzero: bool = False,
                  no_nan: bool = False) -> np.ndarray:
    """Random elements of type t (carrier array)."""
    n = int(np.prod(shape))
    if t in INTS:
        rlo, rhi = int_range(t)
        lo_i = rlo if lo is None else max(rlo, int(lo))
        hi_i = rhi if hi is None else min(rhi, int(hi))
        kind = rng.integers(0, 3)
        if kind == 0:  # small values, where most arithmetic is interesting
            v = rng.integers(max(lo_i, -100), min(hi_i, 100) + 1, size=n, dtype=np.int64)
        else:
            v = rng.integers(lo_i, hi_i, size=n, dtype=np.int64, endpoint=True) if hi_i < (1 << 63) \
                else rng.integers(0, 1 << 63, size=n, dtype=np.uint64)
        if specials:
            edges = np.array([x for x in (lo_i, hi_i, 0, 1, -1) if lo_i <= x <= hi_i], dtype=object)
            mask = rng.random(n) < 0.1
            v = v.astype(object)
            v[mask] = rng.choice(edges, size=int(mask.sum()))
        v = np.asarray(v, dtype=object)
        if nonzero:
            v[v == 0] = 1 if hi_i >= 1 else -1
        return wrap(t, v).reshape(shape)
    # floats: log-uniform magnitudes within the type's comfortable range, random signs
    scale_exp = {"f32": 30, "f16": 10, "bf16": 30}.get(t, 8)
    mode = rng.integers(0, 3)
    if lo is not None or hi is not None:
        v = rng.uniform(lo if lo is not None else -100, hi if hi is not None else 100, size=n)
    elif mode == 0:
        v = rng.uniform(-4, 4, size=n)
    elif mode == 1:
        v = rng.choice([-1.0, 1.0], size=n) * np.exp2(rng.uniform(-scale_exp, scale_exp, size=n))
    else:  # small integers and halves: ties in rounding, exact cancellations
        v = rng.integers(-16, 17, size=n) / rng.choice([1.0, 2.0, 4.0], size=n)
    if specials:
        sp = FLOAT_SPECIALS.get(t, FLOAT_SPECIALS["f32"])
        if no_nan:
            sp = [s for s in sp if not np.isnan(s)]
        mask = rng.random(n) < 0.15
        v[mask] = rng.choice(np.array(sp), size=int(mask.sum()))
    if nonzero:
        v[v == 0] = 1.0
    out = encode(t, v)
    if nonzero:  # values that underflow to zero in the type
        dv = decode(t, out)
        out = np.where(dv == 0, encode(t, np.ones(n)), out)
    return out.reshape(shape)


# ---------------------------------------------------------------------------------------------
# The op table (docs/ops.md is generated from isa/Ops.def and kept in sync by a test)


@dataclasses.dataclass
class OpRow:
    name: str
    ins: str
    outs: str
    dtypes: dict  # arch -> list of dtype names
    rule: str
    constraints: str


def op_table() -> dict[str, OpRow]:
    rows = {}
    for line in (REPO / "docs" / "ops.md").read_text().splitlines():
        m = re.match(r"\| `pto\.([\w.]+)` \|", line)
        if not m:
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        split = lambda s: [x.strip() for x in s.split(",") if x.strip()]
        rows[m.group(1)] = OpRow(m.group(1), cells[3], cells[4],
                                 {"a2a3": split(cells[5]), "a5": split(cells[6])},
                                 cells[7], cells[8])
    return rows


# ---------------------------------------------------------------------------------------------
# Kernel text


@dataclasses.dataclass
class Tile:
    """A vec tile: physical rows x cols, valid vrows x vcols, bound to a GM buffer of the valid
    shape (loaded into the tile for an input, stored from it for an output)."""
    name: str
    dtype: str
    rows: int
    cols: int
    vrows: int
    vcols: int
    loc: str = "vec"
    extra: str = ""  # more tile_buf options, e.g. "blayout=col_major"

    def type(self) -> str:
        valid = "" if (self.vrows, self.vcols) == (self.rows, self.cols) else f", valid={self.vrows}x{self.vcols}"
        extra = f", {self.extra}" if self.extra else ""
        return f"!pto.tile_buf<{self.loc}, {self.rows}x{self.cols}x{self.dtype}{valid}{extra}>"

    def view(self) -> str:
        return f"!pto.tensor_view<{self.vrows}x{self.vcols}x{self.dtype}>"


def kernel(loads: list[Tile], stores: list[Tile], body: list[str], temps: list[Tile] = (),
           consts: list[tuple[str, str, str]] = (), scalars: list[tuple[str, str]] = ()) -> str:
    """A kernel @k whose GM parameters are the loaded tiles' names (inputs) and the stored
    tiles' names (outputs, each its own buffer `o_<name>`), then the body."""
    params = [f"%g_{t.name}: {t.view()}" for t in loads]
    params += [f"%o_{t.name}: {t.view()}" for t in stores]
    params += [f"%{n}: {ty}" for n, ty in scalars]
    lines = [f"kernel @k({', '.join(params)}) {{"]
    seen = set()
    for t in [*loads, *stores, *temps]:
        if t.name not in seen:
            seen.add(t.name)
            lines.append(f"  tile %{t.name} : {t.type()}")
    for name, lit, ty in consts:
        lines.append(f"  %{name} = arith.constant {lit} : {ty}")
    for t in loads:
        lines.append(f"  tload %{t.name}, %g_{t.name}[0, 0]")
    lines += [f"  {b}" for b in body]
    for t in stores:
        lines.append(f"  tstore %o_{t.name}[0, 0], %{t.name}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def row_align(t: str) -> int:
    """Columns a row-major vec tile needs a multiple of: rows are 32-byte aligned."""
    return max(1, 32 // nbytes(t))


# ---------------------------------------------------------------------------------------------
# Running a kernel: the in-process `pto` module when it is importable, else the tools.


class KernelError(RuntimeError):
    pass


def _module():
    try:
        import pto  # noqa: F401
    except ImportError:
        return None
    return pto if hasattr(pto, "compile") else None


def bin_dir() -> Path:
    env = os.environ.get("PTO_BIN")
    if env:
        return Path(env)
    return REPO / "build" / "bin"


class Compiled:
    def __init__(self, source: str, arch: str):
        self.source, self.arch = source, arch
        mod = _module()
        if mod is not None:
            try:
                self.image = mod.compile(source, arch=arch, auto_sync=True)
            except mod.Error as e:
                raise KernelError(f"compile: {e}\n{source}") from None
            self.dir = None
            return
        self.image = None
        self.dir = tempfile.mkdtemp(prefix="pto-model-")
        src = Path(self.dir, "k.pto")
        src.write_text(source)
        b = bin_dir()
        for cmd in ([b / "pto-as", "--arch", arch, src, "-o", Path(self.dir, "k.o")],
                    [b / "pto-ld", "--auto-sync", Path(self.dir, "k.o"), "-o", Path(self.dir, "k.img")]):
            p = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
            if p.returncode != 0:
                raise KernelError(f"{cmd[0].name}: {p.stderr}\n{source}")

    def run(self, args: dict, outs: list[str], backend: str) -> dict:
        if self.image is not None:
            import pto
            # Types numpy has no dtype for (bf16, the fp8 family) travel as raw bits, declared.
            raw = {p.name: p.dtype for p in self.image.params("k")
                   if p.name in args and p.dtype in RAW_BITS}
            try:
                r = self.image.run(backend=backend, dtypes=raw or None, **args)
            except pto.Error as e:
                raise KernelError(f"run ({backend}): {e}\n{self.source}") from None
            return {n: np.asarray(r[n]) for n in outs}
        cmd = [str(bin_dir() / "pto-run"), str(Path(self.dir, "k.img")), "--quiet", "--backend", backend]
        for n, a in args.items():
            if isinstance(a, np.ndarray):
                f = Path(self.dir, f"in_{n}.npy")
                np.save(f, np.ascontiguousarray(a))
                cmd += ["--arg", f"{n}={f}"]
            else:
                cmd += ["--arg", f"{n}={a}"]
        for n in outs:
            cmd += ["--out", f"{n}={Path(self.dir, f'out_{n}.npy')}"]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            raise KernelError(f"pto-run ({backend}): {p.stderr}\n{self.source}")
        return {n: np.load(Path(self.dir, f"out_{n}.npy")) for n in outs}

    def close(self):
        if self.dir:
            shutil.rmtree(self.dir, ignore_errors=True)


# ---------------------------------------------------------------------------------------------
# Comparisons


def ulp_distance(t: str, got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Distance in units in the last place of type t, on the monotone integer line of the
    encodings (so -0 and +0 are 0 apart, and max to inf is 1)."""
    g, w = raw(t, got).astype(np.int64), raw(t, want).astype(np.int64)
    b = BITS[t]
    sign = 1 << (b - 1)
    mono = lambda x: np.where(x & sign, -(x & (sign - 1)), x)
    return np.abs(mono(g) - mono(w))


def mismatches(t: str, got: np.ndarray, want: np.ndarray, *, ulps: int = 0,
               rel: float = 0.0, nan_bits: bool = False) -> np.ndarray:
    """A boolean mask of the elements that differ beyond the tolerance. Floats: NaN matches any
    NaN (unless nan_bits), else bits equal, or within `ulps` / relative `rel`."""
    got = np.asarray(got).reshape(want.shape)
    if t not in FLOATS:
        return raw(t, got) != raw(t, want)
    gv, wv = decode(t, got), decode(t, want)
    bad = raw(t, got) != raw(t, want)
    if not nan_bits:
        both_nan = np.isnan(gv) & np.isnan(wv)
        bad &= ~both_nan
    if ulps:
        bad &= ~((ulp_distance(t, got, want) <= ulps) & ~np.isnan(gv) & ~np.isnan(wv))
    if rel:
        with np.errstate(all="ignore"):
            close = np.abs(gv - wv) <= rel * np.abs(wv)
        bad &= ~(close & np.isfinite(gv) & np.isfinite(wv))
    return bad
