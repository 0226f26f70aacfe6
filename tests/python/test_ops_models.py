"""Every op of the op table against its numpy model (tests/python/models), on both backends
(cpu, npu), both arches (a2a3, a5), every legal dtype, random shapes, valid regions and
special values. PTO_MODEL_EXAMPLES sets the examples per op and dtype (default 100), shared
evenly between the arches that have the dtype; PTO_MODEL_SHARD=i/n runs every n-th case."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent))

from models import MODELS, core  # noqa: E402
from models.registry import compare  # noqa: E402


def _memoise_hypothesis_call_names() -> None:
    """Hypothesis names the function behind every mapped draw by reading its source again
    (control.record_call -> get_pretty_function_description, twice per example through given's
    own keyword lambda): about a tenth of this test's time. The name of a code object never
    changes, so it is remembered per code object. Harmless where hypothesis differs."""
    try:
        from hypothesis import control
    except ImportError:
        return
    describe = getattr(control, "get_pretty_function_description", None)
    if describe is None or getattr(describe, "_pto_memo", False):
        return
    names = {}

    def memo(f):
        key = getattr(f, "__code__", None)
        if key is None:
            return describe(f)
        if key not in names:
            names[key] = describe(f)
        return names[key]

    memo._pto_memo = True
    control.get_pretty_function_description = memo


_memoise_hypothesis_call_names()
EXAMPLES = int(os.environ.get("PTO_MODEL_EXAMPLES", 100))
# The same examples every run (a run you can repeat, and a CI that does not flake); set
# PTO_MODEL_RANDOM=1 to draw new ones.
REPEATABLE = not os.environ.get("PTO_MODEL_RANDOM")
ARCHES = ("a2a3", "a5")
BACKENDS = ("cpu", "npu")

# Ops of the table that are not tile computations, so no model applies, with the reason.
NOT_TILE_OPS = {
    "tprint": "prints to the host log; it has no tile result",
    "print.rt": "pto.print of one scalar to the host log (tests/unit/PrintFormatTest.cpp, run/print.pto)",
    "tassign.rt": "binds a tile to an address at run time; no data is computed",
    "tget_scale_addr": "binds a scaling tile to a left/right tile's scale storage; no data is computed",
    "tpipe.init": "cross-core pipe set-up (docs/pipes.md), not a tile computation",
    "tpipe.push": "cross-core pipe transfer, tested by the pipe lit tests",
    "tpipe.pop": "cross-core pipe transfer, tested by the pipe lit tests",
    "tpipe.free": "cross-core pipe bookkeeping, no data",
    "tpipe.alloc": "cross-core pipe bookkeeping (a GM slot's address), tested by the pipe lit tests",
    "tpipe.commit": "cross-core pipe bookkeeping, no data",
    "tpipe.take": "cross-core pipe bookkeeping (a GM slot's address), tested by the pipe lit tests",
    "tprefetch": "a cache hint: no observable result",
    "tgetval": "reads one element into a scalar register, no tile result (lit run/tgetval.pto)",
}

TABLE = core.op_table()


def legal_dtypes(op: str, arch: str) -> list[str]:
    model = MODELS[op]
    listed = model.dtypes(arch) if model.dtypes is not None else TABLE[op].dtypes[arch]
    # a type TLOAD/TSTORE cannot move on the arch cannot be observed (f8 types on a2a3);
    # pairs ("dst<-src") are the models' own per-arch lists
    movable = set(TABLE["tload"].dtypes[arch]) & set(TABLE["tstore"].dtypes[arch])
    return [t for t in listed if "<-" in t or (t in core.CARRIER and t in movable)]


def a5_only(op: str) -> bool:
    return "A5 only" in TABLE[op].constraints


def arches_with(op: str, dtype: str) -> int:
    return sum(1 for arch in ARCHES if (arch == "a5" or not a5_only(op)) and dtype in legal_dtypes(op, arch))


def examples_per_case(op: str, dtype: str) -> int:
    """EXAMPLES per op and dtype, split between its arches (rounded up)."""
    arches = arches_with(op, dtype)
    return -(-EXAMPLES // arches)


def all_cases():
    only = os.environ.get("PTO_MODEL_OPS")
    ops = only.split(",") if only else sorted(MODELS)
    for op in ops:
        for arch in ARCHES:
            if arch != "a5" and a5_only(op):
                continue
            for t in legal_dtypes(op, arch):
                yield pytest.param(op, arch, t, id=f"{op}-{arch}-{t.replace('<-', '_from_')}")


def shard() -> tuple[int, int]:
    """PTO_MODEL_SHARD=i/n keeps every n-th case from the i-th (0-based): ctest runs the shards as
    separate tests, side by side on a machine's cores."""
    spec = os.environ.get("PTO_MODEL_SHARD", "0/1")
    index, count = (int(x) for x in spec.split("/"))
    if not 0 <= index < count:
        raise ValueError(f"PTO_MODEL_SHARD={spec}: want i/n with 0 <= i < n")
    return index, count


def cases():
    index, count = shard()
    return [c for i, c in enumerate(all_cases()) if i % count == index]


def test_every_op_has_a_model():
    if shard()[0] != 0:
        pytest.skip("checked by shard 0")
    missing = [op for op in TABLE if op not in MODELS and op not in NOT_TILE_OPS]
    assert not missing, f"{len(missing)} ops of the table have no numpy model: {', '.join(missing)}"
    stale = [op for op in MODELS if op not in TABLE]
    assert not stale, f"models of ops not in the table: {stale}"


@pytest.mark.parametrize("op,arch,dtype", list(cases()))
def test_op_matches_model(op, arch, dtype):
    model = MODELS[op]

    @settings(max_examples=examples_per_case(op, dtype), deadline=None, database=None, derandomize=REPEATABLE,
              suppress_health_check=list(HealthCheck))
    @given(data=st.data())
    def check(data):
        case = model.draw(data.draw, dtype, arch)
        compiled = core.Compiled(case.source, arch)
        try:
            for backend in BACKENDS:
                args = dict(case.args)  # output buffers start as zeros (a fresh copy per run)
                for name, want in case.expect.items():
                    args[name] = np.array(args[name], copy=True) if name in args else \
                        np.zeros(want.value.shape, want.value.dtype)
                got = compiled.run(args, list(case.expect), backend)
                errors = [e for e in (compare(n, x, got[n]) for n, x in case.expect.items()) if e]
                assert not errors, f"{op} {dtype} {arch} {backend} [{case.note}]: " + "; ".join(errors) + \
                    f"\ninputs: {case.args}\nkernel:\n{case.source}"
        finally:
            compiled.close()

    check()
