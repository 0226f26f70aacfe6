"""op name -> its model: how to draw a random case (inputs, kernel text) and what the model
says the outputs are, with the tolerance rule the comparison uses."""

from __future__ import annotations

import dataclasses
from typing import Callable

import numpy as np
from hypothesis import strategies as st

from . import core


@dataclasses.dataclass
class Expect:
    dtype: str
    value: np.ndarray
    ulps: int = 0          # allowed distance in units in the last place (floats)
    rel: float = 0.0       # allowed relative error (floats)
    signed_zero: bool = True  # False: +0 and -0 are the same result
    nan_bits: bool = False    # True: a NaN must have the model's exact bits (moves)
    check: Callable | None = None  # got -> mask of wrong elements, when the model allows a set


@dataclasses.dataclass
class Case:
    source: str
    args: dict            # GM buffer / scalar parameters by name
    expect: dict          # output buffer name -> Expect
    note: str = ""        # what was drawn, for failure messages


@dataclasses.dataclass
class OpModel:
    op: str
    family: str
    draw: Callable  # (draw, dtype, arch) -> Case
    dtypes: Callable | None = None  # arch -> dtype list; None: the op table's row
    tolerance: str = "exact"  # the rule, as docs/numerics.md names it


MODELS: dict[str, OpModel] = {}


def register(op: str, family: str, draw: Callable, dtypes=None, tolerance: str = "exact"):
    assert op not in MODELS, op
    MODELS[op] = OpModel(op, family, draw, dtypes, tolerance)


def rng_of(draw) -> np.random.Generator:
    return np.random.default_rng(draw(st.integers(0, 2 ** 32 - 1)))


def draw_shape(draw, dtype: str, max_rows: int = 8, max_units: int = 4):
    """A vec tile's physical rows x cols (cols a whole number of 32-byte rows) and a valid
    region inside it."""
    align = core.row_align(dtype)
    rows = draw(st.integers(1, max_rows))
    cols = align * draw(st.integers(1, max_units))
    vrows = draw(st.integers(1, rows))
    vcols = draw(st.integers(1, cols))
    return rows, cols, vrows, vcols


def draw_cols(draw, dtype: str, vcols: int, max_units: int = 4) -> int:
    """Physical columns of another tile holding the same valid columns (a different pitch)."""
    align = core.row_align(dtype)
    least = -(-vcols // align)
    return align * draw(st.integers(least, max(least, max_units)))


def compare(name: str, exp: Expect, got: np.ndarray) -> str | None:
    """None when `got` matches, else a description of the first mismatches."""
    want = exp.value
    got = np.asarray(got)
    if got.shape != want.shape:
        if got.size != want.size:
            return f"{name}: shape {got.shape}, the model's {want.shape}"
        got = got.reshape(want.shape)
    if exp.dtype in core.FLOATS and got.dtype != want.dtype:
        got = got.view(want.dtype) if got.itemsize == want.itemsize else got.astype(want.dtype)
    if exp.check is not None:
        bad = np.asarray(exp.check(got))
    else:
        bad = core.mismatches(exp.dtype, got, want, ulps=exp.ulps, rel=exp.rel, nan_bits=exp.nan_bits)
    if not exp.signed_zero and exp.dtype in core.FLOATS:
        gz = core.decode(exp.dtype, got) == 0
        wz = core.decode(exp.dtype, want) == 0
        bad &= ~(gz & wz)
    if not bad.any():
        return None
    idx = np.argwhere(bad)[:5]
    parts = []
    for i in idx:
        i = tuple(int(k) for k in i)
        g, w = got[i], want[i]
        gb, wb = core.raw(exp.dtype, np.array([g]))[0], core.raw(exp.dtype, np.array([w]))[0]
        if exp.dtype == "bf16":
            g, w = core.bf16_to_f32(np.array([g]))[0], core.bf16_to_f32(np.array([w]))[0]
        parts.append(f"{i}: got {g!r} (0x{int(gb):x}), model {w!r} (0x{int(wb):x})")
    return f"{name} ({exp.dtype}): {int(bad.sum())} of {bad.size} differ: " + "; ".join(parts)
