"""Every error path of the module raises pto.Error naming the problem: never a crash, never a
partial result. Diagnostics are compared with what the tools print for the same input."""
import numpy as np
import pytest

from conftest import REPO, ROWSUM, SPIN, VADD
from tools import run_tool

BAD_SYNTAX = """kernel @k(%x: !pto.tensor_view<16x16xf32>) {
  tile %a : !pto.tile<f32, 16, 16>
  tload %a, %x[0, 0
}
"""


def test_syntax_error_has_the_tools_diagnostics(pto, tmp_path):
    src = tmp_path / "bad.pto"
    src.write_text(BAD_SYNTAX)
    with pytest.raises(pto.Error) as info:
        pto.compile(path=src)
    e = info.value
    tool = run_tool("pto-as", src, "-o", tmp_path / "bad.o")
    assert tool.returncode == 1
    assert str(e) == tool.stderr.rstrip("\n")
    assert str(e).endswith("1 error generated.")
    first = e.diagnostics[0]
    assert first.file == str(src) and first.severity == "error"
    # The '}' after the unclosed "%x[0, 0" is the first token that cannot continue it.
    assert (first.line, first.column, first.message) == (4, 1, "unexpected '}'")
    assert len(e.diagnostics) == 1


def test_diagnostics_of_text_name_the_filename(pto):
    with pytest.raises(pto.Error) as info:
        pto.compile(BAD_SYNTAX, filename="k.pto")
    d = info.value.diagnostics[0]
    assert (d.file, d.line, d.severity) == ("k.pto", 4, "error")
    assert str(info.value).startswith("k.pto:4:1: error: ")


def test_verifier_error_and_its_note_lines(pto):
    text = ROWSUM.replace("tile<f32, 16, 64>", "tile<f32, 16, 60>")
    with pytest.raises(pto.Error) as info:
        pto.compile(text, filename="r.pto")
    assert info.value.diagnostics and all(d.file == "r.pto" for d in info.value.diagnostics)
    assert info.value.diagnostics[0].severity == "error"


def test_link_error(pto):
    with pytest.raises(pto.Error) as info:
        pto.compile(VADD, entries=["nope"])
    assert str(info.value).startswith("pto-ld: error:")
    assert "nope" in str(info.value)
    assert info.value.diagnostics[0].severity == "error"


def test_missing_files(pto, tmp_path):
    missing = tmp_path / "missing.pto"
    with pytest.raises(pto.Error) as info:
        pto.compile(path=missing)
    assert str(info.value).startswith("pto-as: error:") and "missing.pto" in str(info.value)
    with pytest.raises(pto.Error) as info:
        pto.load_image(tmp_path / "missing.img")
    assert "missing.img" in str(info.value)
    with pytest.raises(pto.Error):
        pto.run_source(path=missing)


def test_corrupt_images(pto, vadd_image):
    good = vadd_image.to_bytes()
    with pytest.raises(pto.Error) as info:
        pto.load_image(b"not an image")
    assert "<memory>" in str(info.value)
    for cut in (0, 4, 16, 64, len(good) // 2, len(good) - 1):
        with pytest.raises(pto.Error):
            pto.load_image(good[:cut])
    # Corrupt bytes anywhere: an error or a loadable image, never a crash.
    rng = np.random.default_rng(5)
    for _ in range(200):
        bad = bytearray(good)
        for i in rng.integers(0, len(bad), 4):
            bad[i] ^= int(rng.integers(1, 256))
        try:
            pto.load_image(bytes(bad))
        except pto.Error:
            pass


def test_wrong_dtype(pto, vadd_image):
    x = np.ones(16, np.float64)
    with pytest.raises(pto.Error) as info:
        vadd_image.run(x=x, y=np.ones(16, np.float32), n=1)
    msg = str(info.value)
    assert "%x" in msg and "f32" in msg and "f64" in msg
    with pytest.raises(pto.Error, match="%y"):
        vadd_image.run(x=np.ones(16, np.float32), y=np.ones(16, np.int32), n=1)
    with pytest.raises(pto.Error, match="complex128"):
        vadd_image.run(x=np.ones(16, np.complex128), n=1)


def test_buffer_too_small(pto, vadd_image):
    z = np.zeros(32, np.float32)
    with pytest.raises(pto.Error) as info:
        vadd_image.run(x=np.ones(16, np.float32), z=z, n=2)
    msg = str(info.value)
    assert "%x" in msg and "too small" in msg and "16" in msg and "32" in msg
    assert not z.any()
    with pytest.raises(pto.Error, match="%x"):
        pto.compile(ROWSUM).run(x=np.ones((16, 32), np.float32))


def test_unknown_kernel_and_parameter(pto, vadd_image):
    with pytest.raises(pto.Error, match="nope"):
        vadd_image.run(kernel="nope", n=1)
    with pytest.raises(pto.Error, match="nope"):
        vadd_image.params("nope")
    with pytest.raises(pto.Error) as info:
        vadd_image.run(q=np.ones(4, np.float32), n=1)
    assert "%q" in str(info.value) and "%x %y %z %n" in str(info.value)
    with pytest.raises(pto.Error, match="nope"):
        pto.run_source(ROWSUM, "nope", x=np.ones((16, 64), np.float32))
    with pytest.raises(pto.Error, match="several kernels"):
        pto.compile(ROWSUM + ROWSUM.replace("kernel @rowsum", "kernel @rowsum2")).run()


def test_bad_scalars_and_kinds(pto, vadd_image):
    x = np.ones(16, np.float32)
    with pytest.raises(pto.Error, match="integer"):
        vadd_image.run(x=x, y=x, n=1.5)
    with pytest.raises(pto.Error, match="64 bits"):
        vadd_image.run(x=x, y=x, n=2**70)
    with pytest.raises(pto.Error, match="%n .*scalar"):
        vadd_image.run(x=x, y=x, n=np.ones(1, np.int64))
    with pytest.raises(pto.Error, match="%x .*buffer"):
        vadd_image.run(x=1.0, n=1)
    with pytest.raises(pto.Error, match="list"):
        vadd_image.run(x=[1.0] * 16, n=1)
    with pytest.raises(pto.Error, match="backend"):
        vadd_image.run(backend="gpu", n=1)
    with pytest.raises(pto.Error, match="given twice"):
        vadd_image.run(args={"n": 1}, n=1)


def test_run_source_needs_its_pointers(pto):
    with pytest.raises(pto.Error, match="%y"):
        pto.run_source(VADD, x=np.ones(16, np.float32), z=np.ones(16, np.float32), n=1)
    with pytest.raises(pto.Error) as info:
        pto.run_source(BAD_SYNTAX, filename="k.pto")
    assert info.value.diagnostics[0].line == 4


def test_raw_bits_need_a_declared_dtype(pto):
    text = """
kernel @widen(%x: !pto.tensor_view<16x16xbf16>, %y: !pto.tensor_view<16x16xf32>) {
  tile %a : !pto.tile<bf16, 16, 16>
  tile %b : !pto.tile<f32, 16, 16>
  tload %a, %x[0, 0]
  tcvt %b, %a
  tstore %y[0, 0], %b
}
"""
    img = pto.compile(text)
    values = np.linspace(-3, 3, 256, dtype=np.float32).reshape(16, 16)
    bits = (values.view(np.uint32) >> 16).astype(np.uint16)  # bf16 by truncation: exact below
    want = (bits.astype(np.uint32) << 16).view(np.float32)
    with pytest.raises(pto.Error, match="bf16"):
        img.run(x=bits)
    for backend in ("cpu", "npu"):
        r = img.run(backend=backend, x=bits, dtypes={"x": "bf16"})
        np.testing.assert_array_equal(r["y"], want)
        assert r["x"].dtype == np.uint16
    with pytest.raises(pto.Error, match="declared bf16"):
        img.run(x=bits.astype(np.int16), dtypes={"x": "bf16"})
    ml = pytest.importorskip("ml_dtypes")
    r = img.run(x=want.astype(ml.bfloat16))
    np.testing.assert_array_equal(r["y"], want)


def test_debug_locations_lead_the_reports(pto, tmp_path):
    src = REPO / "tests" / "lit" / "locations" / "verifier-error.pto"
    with pytest.raises(pto.Error) as info:
        pto.compile(path=src)
    tool = run_tool("pto-as", src, "-o", tmp_path / "k.o")
    assert str(info.value) == tool.stderr.rstrip("\n")
    d = info.value.diagnostics
    assert d[0][:4] == ("rope.py", 23, 8, "error")
    assert d[0].message.startswith("'pto.tadd' does not support bf16 on a2a3")
    assert d[1] == pto.Diagnostic(None, None, None, "note", "called from layer.py:40:2")
    assert d[2] == pto.Diagnostic(None, None, None, "note", "called from model.py:88:2")
    assert d[3] == pto.Diagnostic(str(src), 9, 96, "note", "in the .pto here")
    assert d[4][:4] == ("rope.py", 11, 4, "note")
    assert d[5] == pto.Diagnostic(str(src), 8, 5, "note", "in the .pto here")
    assert (d[6].file, d[6].line, d[6].column, d[6].severity) == (str(src), 10, 96, "error")


def test_runtime_errors_carry_the_source_place(pto):
    img = pto.compile(SPIN, filename="spin.pto")
    for run in (lambda: img.run(n=300, max_instructions=1000),
                lambda: img.run(backend="npu", n=300, max_instructions=1000),
                lambda: pto.run_source(SPIN, filename="spin.pto", n=300, max_instructions=1000)):
        with pytest.raises(pto.Error) as info:
            run()
        d = info.value.diagnostics[0]
        assert (d.file, d.severity) == ("spin.pto", "error") and d.line is not None
        assert "ran more than 1000" in d.message
        assert ": runtime error: " in str(info.value)
