"""pto.compile / assemble / link / load_image / Image.params / ops / dtypes, checked against
the command-line tools of the same build and the op table's generated documentation."""
import re

import numpy as np
import pytest

from conftest import REPO, ROWSUM, VADD
from tools import run_tool


def test_compile_gives_an_image_with_its_kernels(pto, vadd_image):
    assert isinstance(vadd_image, pto.Image)
    assert vadd_image.kernels == ["vadd"]
    assert vadd_image.arch == "a2a3"
    assert vadd_image.to_bytes()[:4] == b"\x7fELF"


def test_params_are_what_pto_run_list_shows(pto, vadd_image, tmp_path):
    params = vadd_image.params("vadd")
    assert [p.name for p in params] == ["x", "y", "z", "n"]
    assert [p.kind for p in params] == ["ptr", "ptr", "ptr", "index"]
    assert [p.dtype for p in params] == ["f32", "f32", "f32", "i64"]
    assert params[0].extent == "16*%n" and params[0].type == "ptr<f32>"
    assert params[3].extent is None
    assert vadd_image.params() == params  # the only kernel
    # The same lines as the tool's --list, from the same image.
    img = tmp_path / "vadd.img"
    img.write_bytes(vadd_image.to_bytes())
    listed = run_tool("pto-run", img, "--list").stdout.splitlines()
    assert listed[0] == "@vadd"
    for line, p in zip(listed[1:], params):
        name, type_, rest = line.split(None, 2)
        assert (name, type_) == ("%" + p.name, p.type)
        assert rest.startswith(f"extent {p.extent} elements" if p.extent else "scalar")


def test_tensor_view_params(pto):
    img = pto.compile(ROWSUM)
    x, s = img.params("@rowsum")
    assert (x.kind, x.shape, x.extent) == ("tensor_view", (16, 64), "1024")
    assert (s.kind, s.shape, s.extent) == ("tensor_view", (16, 1), "16")


def test_module_and_tools_make_the_same_files(pto, tmp_path):
    src = tmp_path / "vadd.pto"
    src.write_text(VADD)
    r = run_tool("pto-as", "vadd.pto", "-o", "vadd.o", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    r = run_tool("pto-ld", "vadd.o", "-o", "vadd.img", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    obj = pto.assemble(path=src, filename="vadd.pto")
    assert obj.name == "vadd.o" and obj.functions == ["vadd"]
    assert obj.to_bytes() == (tmp_path / "vadd.o").read_bytes()
    assert pto.link([obj]).to_bytes() == (tmp_path / "vadd.img").read_bytes()


def test_assemble_link_and_load_round_trip(pto, tmp_path):
    obj = pto.assemble(VADD, arch="a5")
    assert isinstance(obj, pto.Object) and obj.arch == "a5"
    img = pto.link([obj], arch="a5")
    assert img.arch == "a5"
    again = pto.load_image(img.to_bytes())
    assert again.kernels == ["vadd"] and again.to_bytes() == img.to_bytes()
    path = tmp_path / "k.img"
    path.write_bytes(img.to_bytes())
    for arg in (path, str(path)):
        loaded = pto.load_image(arg)
        assert loaded.kernels == ["vadd"]
        x = np.arange(32, dtype=np.float32)
        assert np.array_equal(loaded.run(x=x, y=x, n=2)["z"], 2 * x)


def test_compile_from_a_file_and_link_options(pto, tmp_path):
    src = tmp_path / "rowsum.pto"
    src.write_text(ROWSUM)
    img = pto.compile(path=src, auto_sync=True)
    assert img.kernels == ["rowsum"]
    # --no-auto-sync: nothing inserted, and this kernel has no sync of its own: races.
    with pytest.raises(pto.Error) as info:
        pto.compile(path=str(src), auto_sync=False)
    races = [d for d in info.value.diagnostics if d.severity == "error"]
    assert [(d.file, d.line, d.column) for d in races] == [(str(src), 6, 3), (str(src), 7, 3)]
    assert all(d.message.startswith("race: ") for d in races)
    notes = [d for d in info.value.diagnostics if d.severity == "note"]
    assert [(d.line, d.column) for d in notes] == [(5, 3), (6, 3)]
    # allow_races: warnings, and an image.
    img = pto.compile(path=src, auto_sync=False, allow_races=True)
    assert "warning: " in img.warnings and img.kernels == ["rowsum"]
    with pytest.raises(TypeError):
        pto.compile()
    with pytest.raises(TypeError):
        pto.compile(ROWSUM, path=src)


def test_ops_table_matches_the_generated_docs(pto):
    ops = pto.ops()
    names = [op["name"] for op in ops]
    assert len(names) == len(set(names))
    # docs/ops.md is generated from isa/Ops.def: one table row per op, in the same order.
    documented = re.findall(r"^\| `pto\.([^`]+)` \|", (REPO / "docs" / "ops.md").read_text(), re.M)
    assert names == documented
    tadd = next(op for op in ops if op["name"] == "tadd")
    assert tadd["pipe"] == "PIPE_V"
    assert tadd["engine"] == "vector"
    assert "f32" in tadd["dtypes"]["a2a3"] and "f32" in tadd["dtypes"]["a5"]
    assert tadd["archs"] == ["a2a3", "a5"]
    roles = {(r["name"], r["output"]) for r in tadd["roles"]}
    assert ("dst", True) in roles and ("src0", False) in roles
    assert all(r["kind"] in {"tile", "view", "scalar", "int", "float", "any"}
               for op in ops for r in op["roles"])
    assert any(op["attributes"] for op in ops)
    for op in ops:  # an arch without the op has no legal dtypes for it
        for arch in ("a2a3", "a5"):
            assert arch in op["archs"] or op["dtypes"][arch] == []


def test_dtypes(pto):
    table = {d["name"]: d for d in pto.dtypes()}
    assert table["f32"]["bits"] == 32 and table["f32"]["numpy"] == "float32"
    assert not table["f32"]["raw_bits"]
    assert table["i1"]["numpy"] == "bool"
    assert table["bf16"]["bits"] == 16 and table["bf16"]["kind"] == "float"
    try:
        import ml_dtypes  # noqa: F401
        assert table["bf16"]["numpy"] == "bfloat16"
    except ImportError:
        assert table["bf16"]["numpy"] == "uint16" and table["bf16"]["raw_bits"]
    assert pto.numpy_dtype("ui8") == np.uint8
    with pytest.raises(pto.Error):
        pto.numpy_dtype("f7")


def test_block_assembly_assembles_as_pto_as_does(pto, vadd_image, tmp_path):
    obj = pto.assemble(VADD, filename="vadd.pto")
    (tmp_path / "vadd.o").write_bytes(obj.to_bytes())
    listing = run_tool("pto-objdump", "-d", tmp_path / "vadd.o")
    assert listing.returncode == 0, listing.stderr
    (tmp_path / "vadd.s").write_text(listing.stdout)
    again = pto.assemble(listing.stdout, filename="vadd.s")
    r = run_tool("pto-as", "vadd.s", "-o", "again.o", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert again.to_bytes() == (tmp_path / "again.o").read_bytes()
    x = np.arange(32, dtype=np.float32)
    np.testing.assert_array_equal(pto.link([again]).run(x=x, y=x, n=2)["z"], 2 * x)


def test_cmake_install_puts_the_package_in_site_packages(tmp_path):
    import os
    import subprocess
    import sys
    import sysconfig

    from tools import bin_dir

    build = bin_dir().parent
    r = subprocess.run(["cmake", "--install", str(build), "--prefix", str(tmp_path)],
                       capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr
    # The interpreter's own platform site-packages scheme, under the prefix.
    site = sysconfig.get_path("platlib", vars={"platbase": str(tmp_path), "base": str(tmp_path)})
    candidates = [site, site.replace(str(tmp_path) + "/local", str(tmp_path))]
    installed = [c for c in candidates if os.path.isfile(os.path.join(c, "pto", "__init__.py"))]
    assert installed, f"no pto package under {candidates}"
    env = dict(os.environ, PYTHONPATH=installed[0])
    r = subprocess.run([sys.executable, "-c", "import pto; print(pto.__file__); print(pto.compile(%r).kernels)" % ROWSUM],
                       capture_output=True, text=True, env=env, check=False, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [os.path.join(installed[0], "pto", "__init__.py"), "['rowsum']"]
