"""The command-line tools of the same build, for tests that compare the module with them."""
import os
import pathlib
import subprocess


def bin_dir() -> pathlib.Path:
    """<build>/bin: PTO_BIN_DIR when set (ctest sets it), else beside <build>/python/pto."""
    if os.environ.get("PTO_BIN_DIR"):
        return pathlib.Path(os.environ["PTO_BIN_DIR"])
    import pto

    return pathlib.Path(pto.__file__).resolve().parents[2] / "bin"


def run_tool(name: str, *args, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([str(bin_dir() / name), *map(str, args)], capture_output=True,
                          text=True, cwd=cwd, check=False)
