"""Image.run on both backends and pto.run_source, checked against numpy."""
import os
import re
import signal
import threading
import time

import numpy as np
import pytest

from conftest import REPO, ROWSUM, SPIN, VADD
from tools import run_tool

BACKENDS = ["cpu", "npu"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_vadd_matches_numpy(pto, vadd_image, backend):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 16), dtype=np.float32)
    y = rng.standard_normal((4, 16), dtype=np.float32)
    z = np.zeros((4, 16), np.float32)
    x0, y0 = x.copy(), y.copy()
    r = vadd_image.run(backend=backend, x=x, y=y, z=z, n=4)
    assert r["z"].dtype == np.float32 and r["z"].shape == (4, 16)
    np.testing.assert_array_equal(r["z"], x + y)  # one f32 add: exactly numpy's
    np.testing.assert_array_equal(r["x"], x0)
    # The caller's arrays are copied in, never changed.
    assert not z.any() and np.array_equal(x, x0) and np.array_equal(y, y0)
    assert set(r) == {"x", "y", "z"} and len(r) == 3
    assert r.kernel == "vadd"


def test_non_contiguous_input(pto, vadd_image):
    x = np.arange(64, dtype=np.float32).reshape(16, 4).T  # a transposed view
    y = np.ones((4, 16), np.float32)
    r = vadd_image.run(x=x, y=y, n=4)
    np.testing.assert_array_equal(r["z"].reshape(4, 16), x + 1)


@pytest.mark.parametrize("backend", BACKENDS)
def test_row_reduction_matches_numpy(pto, backend):
    img = pto.compile(ROWSUM)
    x = np.random.default_rng(2).uniform(-1, 1, (16, 64)).astype(np.float32)
    r = img.run(backend=backend, x=x)
    assert r["s"].shape == (16, 1)
    np.testing.assert_allclose(r["s"], x.astype(np.float64).sum(axis=1, keepdims=True), rtol=1e-5,
                               atol=1e-5)


@pytest.mark.parametrize("backend", BACKENDS)
def test_matmul_matches_numpy(pto, matmul_source, backend):
    img = pto.compile(matmul_source, filename="matmul.pto")
    rng = np.random.default_rng(3)
    a = rng.uniform(-1, 1, (32, 128)).astype(np.float16)
    b = rng.uniform(-1, 1, (128, 64)).astype(np.float16)
    r = img.run(backend=backend, a=a, b=b)
    assert r["c"].dtype == np.float32 and r["c"].shape == (32, 64)
    want = a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(r["c"], want, rtol=1e-3, atol=1e-3)


def test_cycles_on_the_npu_model_only(pto, vadd_image):
    x = np.ones(64, np.float32)
    npu = vadd_image.run(backend="npu", x=x, y=x, n=4)
    assert isinstance(npu.cycles, int) and npu.cycles > 0
    assert npu.profile["cycles"] == npu.cycles
    assert npu.profile["block_cycles"] == [npu.cycles]
    v = npu.profile["pipes"]["PIPE_V"]
    assert v["ops"] >= 4 and 0 < v["busy"] <= npu.cycles  # four tadd, and the sync on PIPE_V
    # The costliest-ops table: the four TADD of the loop's four rows, at their source line (one
    # row per instruction: the linker's multi-buffering gives the loop body two copies).
    tadds = re.findall(r"^\s+\d+\s+[\d.]+%\s+(\d+)\s+TADD\s+PIPE_V\s+vadd.pto:20:9$", npu.profile["ops"], re.M)
    assert sum(int(n) for n in tadds) == 4
    assert f"{npu.cycles} cycles" in npu.profile["summary"]
    assert "TADD" in npu.profile["ops"] and npu.profile["trace"].startswith(("{", "["))
    cpu = vadd_image.run(backend="cpu", x=x, y=x, n=4)
    assert cpu.cycles is None and cpu.profile is None


def test_more_rows_cost_more_cycles(pto, vadd_image):
    small = vadd_image.run(backend="npu", n=2).cycles
    large = vadd_image.run(backend="npu", n=32).cycles
    assert large > small > 0


def test_auto_args_as_pto_run_makes_them(pto, vadd_image, tmp_path):
    r = vadd_image.run(n=2, seed=7)
    assert r["x"].shape == (32,) and r["x"].dtype == np.float32
    assert np.all((r["x"] >= -1) & (r["x"] < 1))
    np.testing.assert_array_equal(r["z"], r["x"] + r["y"])
    assert np.array_equal(vadd_image.run(n=2, seed=7)["x"], r["x"])
    assert not np.array_equal(vadd_image.run(n=2, seed=8)["x"], r["x"])
    zeros = vadd_image.run(n=2, auto_args="zeros")
    assert not zeros["x"].any()
    # pto-run --auto-args --seed 7 makes the same values.
    img = tmp_path / "vadd.img"
    img.write_bytes(vadd_image.to_bytes())
    out = tmp_path / "out"
    res = run_tool("pto-run", img, "--arg", "n=2", "--auto-args", "--seed", "7", "--out-dir", out, "-q")
    assert res.returncode == 0, res.stderr
    assert np.array_equal(np.load(out / "x.npy"), r["x"])
    assert np.array_equal(np.load(out / "z.npy"), r["z"])


def test_args_dict_and_percent_names(pto, vadd_image):
    x = np.full(16, 2, np.float32)
    r = vadd_image.run(args={"%x": x, "y": x}, n=np.int64(1))
    np.testing.assert_array_equal(r["%z"], x + x)


def test_blocks(pto, vadd_image):
    x = np.arange(32, dtype=np.float32)
    for backend in BACKENDS:
        r = vadd_image.run(backend=backend, blocks=3, x=x, y=x, n=2)
        np.testing.assert_array_equal(r["z"], 2 * x)
        if backend == "npu":
            assert len(r.profile["block_cycles"]) == 3


def test_run_source_on_the_reference_interpreter(pto):
    x = np.arange(48, dtype=np.float32)
    y = np.linspace(-1, 1, 48, dtype=np.float32)
    r = pto.run_source(VADD, x=x, y=y, z=np.zeros(48, np.float32), n=3)
    np.testing.assert_array_equal(r["z"], x + y)
    assert r.backend == "ref" and r.cycles is None
    m = np.random.default_rng(4).uniform(-1, 1, (16, 64)).astype(np.float32)
    s = pto.run_source(ROWSUM, "rowsum", x=m)["s"]
    np.testing.assert_allclose(s, m.astype(np.float64).sum(axis=1, keepdims=True), rtol=1e-5, atol=1e-5)


def test_run_source_from_a_file(pto, tmp_path):
    path = tmp_path / "rowsum.pto"
    path.write_text(ROWSUM)
    m = np.ones((16, 64), np.float32)
    assert np.array_equal(pto.run_source(path=path, x=m)["s"], np.full((16, 1), 64, np.float32))


def test_the_gil_is_released_during_a_run(pto):
    img = pto.compile(SPIN)
    done = threading.Event()
    worker = threading.Thread(target=lambda: (img.run(n=150), done.set()))
    start = time.monotonic()
    worker.start()
    ticks = 0
    while not done.is_set() and time.monotonic() - start < 60:
        ticks += 1  # Python code runs while the kernel does
        time.sleep(0.001)
    worker.join()
    assert done.is_set() and ticks > 10


@pytest.mark.parametrize("backend", ["cpu", "npu", "ref"])
def test_ctrl_c_stops_a_run(pto, backend):
    img = pto.compile(SPIN)
    timer = threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT))
    start = time.monotonic()
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        if backend == "ref":
            pto.run_source(SPIN, n=10**6)
        else:
            img.run(backend=backend, n=10**6)
    assert time.monotonic() - start < 10
    timer.join()
    assert img.run(n=2).kernel == "spin"  # still usable


@pytest.mark.parametrize("backend", ["cpu", "npu", "ref"])
def test_tprint_output_and_int16_buffers(pto, backend, capsys):
    path = REPO / "tests" / "lit" / "run" / "tprint.pto"
    x = np.arange(1, 33, dtype=np.float32).reshape(4, 8)
    x[0, :3] = [0.5, 1, -1.25]
    n = np.array([[-32768, -1, 0, 1], [32767, 2, 3, 4]], np.int16)
    y = np.zeros((4, 8), np.float32)
    if backend == "ref":
        r = pto.run_source(path=path, x=x, n=n, y=y)
    else:
        r = pto.compile(path=path, auto_sync=True).run(backend=backend, x=x, n=n, y=y)
    # Only the 2x3 valid region is loaded and doubled (the lit test's values, by hand).
    want = np.zeros((4, 8), np.float32)
    want[:2, :3] = 2 * x[:2, :3]
    np.testing.assert_array_equal(r["y"], want)
    assert r.output.startswith("tprint %a: f32[4x8] valid 2x3\n  0.5 1 -1.25\n  9 10 11\n")
    assert "tprint %s: i16[2x16] valid 2x4\n  -32768 -1 0 1\n  32767 2 3 4\n" in r.output
    assert capsys.readouterr().out == r.output


def test_tensor_view_shapes(pto):
    img = pto.compile(ROWSUM)
    m = np.arange(1024, dtype=np.float32)
    flat = img.run(x=m)["s"]
    np.testing.assert_array_equal(flat, m.reshape(16, 64).sum(axis=1, keepdims=True))
    with pytest.raises(pto.Error, match=r"%x .*\(64, 16\)"):
        img.run(x=m.reshape(64, 16))
