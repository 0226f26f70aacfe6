"""pto: assemble, link and run PTO kernels from Python (docs/python.md).

    import numpy as np, pto
    img = pto.compile(source_text)                 # pto-as + pto-ld
    r = img.run(x=x, y=y, backend="npu")           # pto-run; numpy arrays in and out
    np.testing.assert_allclose(r["z"], x + y)
    r.cycles                                       # the npu model's cycle count

Errors raise pto.Error: str() is the diagnostics as the tools print them, .diagnostics the
records (file, line, column, severity, message).
"""
import collections.abc
import os
import sys
from typing import Any, Dict, Iterator, List, NamedTuple, Optional, Sequence, Union

import numpy as np

from ._errors import Diagnostic, Error, parse_diagnostics
from . import _pto

try:  # bf16 and the 8-bit float types as numpy dtypes, when installed
    import ml_dtypes as _ml_dtypes
except ImportError:  # pragma: no cover - depends on the machine
    _ml_dtypes = None

__all__ = [
    "Error", "Diagnostic", "Object", "Image", "Run", "Param", "compile", "assemble", "link",
    "load_image", "run_source", "ops", "dtypes", "numpy_dtype",
]

# ---------------------------------------------------------------------------- element types
_NUMPY_TYPES = {
    "f32": np.float32, "f16": np.float16, "f64": np.float64, "i1": np.bool_,
    "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
    "ui8": np.uint8, "ui16": np.uint16, "ui32": np.uint32, "ui64": np.uint64,
}
_ML_DTYPES = {"bf16": "bfloat16", "f8E4M3": "float8_e4m3fn", "f8E5M2": "float8_e5m2",
              "f8E8M0": "float8_e8m0fnu"}
_DTYPES = {d["name"]: d for d in _pto.dtypes()}


def _natural(name: str) -> Optional[np.dtype]:
    """The numpy dtype that holds `name`'s values, or None (numpy has no such type)."""
    if name in _NUMPY_TYPES:
        return np.dtype(_NUMPY_TYPES[name])
    if _ml_dtypes is not None and name in _ML_DTYPES and hasattr(_ml_dtypes, _ML_DTYPES[name]):
        return np.dtype(getattr(_ml_dtypes, _ML_DTYPES[name]))
    return None


def _carrier(name: str) -> np.dtype:
    """The unsigned integer type whose arrays carry `name`'s raw bits (.npy's carrier): uint16
    for bf16, uint8 for the 8-bit floats and for the packed 4-bit types (two per byte)."""
    return np.dtype(_DTYPES[name]["npy"])


def _is_packed(name: str) -> bool:
    return _DTYPES[name]["bits"] == 4


def numpy_dtype(name: str) -> np.dtype:
    """The numpy dtype of a PTO element type's arrays: its own (bf16 and fp8 through ml_dtypes
    when installed), else the raw-bits carrier (uint16 / uint8)."""
    if name not in _DTYPES:
        raise Error(f"error: unknown element type '{name}' (pto.dtypes() lists them)")
    return _natural(name) or _carrier(name)


def _element_type_of(dt: np.dtype) -> Optional[str]:
    for name in _DTYPES:
        nat = _natural(name)
        if nat is not None and nat == dt and not _is_packed(name):
            return name
    return None


def dtypes() -> List[Dict[str, Any]]:
    """Every PTO element type: name, bits, kind, C++ type, .npy descr, and the numpy dtype its
    arrays have here ("numpy") and whether that dtype is a raw-bits carrier ("raw_bits")."""
    out = []
    for d in _pto.dtypes():
        d = dict(d)
        nat = _natural(d["name"])
        d["numpy"] = (nat or _carrier(d["name"])).name
        d["raw_bits"] = nat is None
        out.append(d)
    return out


def ops() -> List[Dict[str, Any]]:
    """The op table (isa/Ops.def): per op its name, pipe, engine, signature, type rule, legal
    dtypes per arch, the archs that have it, operand roles, flags and attributes."""
    return _pto.ops()


# ---------------------------------------------------------------------------- objects, images
class Param(NamedTuple):
    """A kernel parameter as `pto-run --list` shows it."""

    name: str
    kind: str  # "ptr", "scalar", "index" or "tensor_view"
    dtype: str
    extent: Optional[str]  # elements it spans, over the scalar parameters (None: unknown/scalar)
    type: str  # "ptr<f32>", "index", "tensor_view<16x16xf32>", ...
    shape: tuple  # a tensor_view's shape
    index_values: bool  # its values are used as indices (--auto-args makes zeros)


class Object:
    """An assembled object (pto-as's output)."""

    def __init__(self, handle):
        self._h = handle

    name = property(lambda self: self._h.name, doc="The object's file name (k.pto -> k.o)")
    arch = property(lambda self: self._h.arch)
    functions = property(lambda self: list(self._h.functions))
    warnings = property(lambda self: self._h.warnings, doc="What pto-as warned about")

    def to_bytes(self) -> bytes:
        return self._h.to_bytes()

    def __repr__(self) -> str:
        return f"<pto.Object {self.name} {self.arch} functions={self.functions}>"


class Image:
    """A linked image (pto-ld's output), loaded and ready to run."""

    def __init__(self, handle):
        self._h = handle

    kernels = property(lambda self: list(self._h.kernels), doc="The entry kernels' names")
    arch = property(lambda self: self._h.arch)
    warnings = property(lambda self: self._h.warnings, doc="What pto-ld warned about")

    def to_bytes(self) -> bytes:
        return self._h.to_bytes()

    def params(self, kernel: Optional[str] = None) -> List[Param]:
        """The kernel's parameters (name, kind, dtype, extent, ...), as `pto-run --list`."""
        kernel = _choose(kernel, self.kernels)
        return [Param(p["name"], p["kind"], p["dtype"], p["extent"], p["type"], tuple(p["shape"]),
                      p["index_values"]) for p in self._h.params(kernel)]

    def run(self, kernel: Optional[str] = None, backend: str = "cpu", blocks: int = 1, seed: int = 0,
            *, args: Optional[Dict[str, Any]] = None, dtypes: Optional[Dict[str, str]] = None,
            auto_args: str = "random", threads: int = 0, max_instructions: int = 10_000_000_000,
            **kwargs) -> "Run":
        """Runs one kernel on the cpu backend or the npu model. Buffers are numpy arrays (copied
        in; yours are not changed), scalars Python numbers, by parameter name (as keywords, or in
        `args` for a name that is also a keyword here). Parameters not given are made as
        `pto-run --auto-args` makes them (random from `seed`, or zeros). `dtypes` names the
        element type of a raw-bits array (uint16 for bf16, uint8 for fp8 and packed 4-bit)."""
        given = _merge_args(args, kwargs)
        buffers, scalars, shapes = _split_args(given, dtypes or {})
        res = self._h.run(_strip(kernel), backend, blocks, seed, threads, max_instructions,
                          auto_args, buffers, scalars)
        return Run(res, shapes, backend)

    def __repr__(self) -> str:
        return f"<pto.Image {self.arch} kernels={self.kernels}>"


def _strip(kernel: Optional[str]) -> Optional[str]:
    return kernel[1:] if kernel and kernel.startswith("@") else kernel


def _choose(kernel: Optional[str], kernels: Sequence[str]) -> str:
    if kernel:
        return _strip(kernel)
    if len(kernels) == 1:
        return kernels[0]
    listed = " ".join("@" + k for k in kernels)
    raise Error(f"pto-run: error: the image has {'no entry kernel' if not kernels else 'several kernels'}"
                f"; choose one with kernel=...{' ' + listed if listed else ''}")


def _merge_args(args: Optional[Dict[str, Any]], kwargs: Dict[str, Any]) -> Dict[str, Any]:
    given = {}
    for name, value in list((args or {}).items()) + list(kwargs.items()):
        key = name[1:] if name.startswith("%") else name
        if key in given:
            raise Error(f"pto-run: error: parameter %{key} is given twice")
        given[key] = value
    return given


def _split_args(given: Dict[str, Any], declared: Dict[str, str]):
    """Buffers as name -> (contiguous array, element type, shape in elements), scalars as
    name -> number, and each buffer's dtype and shape to give the result back in."""
    buffers, scalars, shapes = {}, {}, {}
    for name in declared:
        key = name[1:] if name.startswith("%") else name
        if key not in given:
            raise Error(f"pto-run: error: dtypes names %{key}, which is not given")
    declared = {(k[1:] if k.startswith("%") else k): v for k, v in declared.items()}
    for name, value in given.items():
        if isinstance(value, np.ndarray):
            arr = np.ascontiguousarray(value)
            spelling = _buffer_type(name, arr, declared.get(name))
            shape = list(arr.shape)
            if _is_packed(spelling):
                if not shape:
                    raise Error(f"pto-run: error: %{name}: a packed {spelling} array needs a dimension")
                shape[-1] *= 2
            buffers[name] = (arr, spelling, shape)
            shapes[name] = (arr.dtype, arr.shape)
        elif isinstance(value, (bool, int, float, np.generic)):
            if name in declared:
                raise Error(f"pto-run: error: dtypes names %{name}, which is a scalar")
            scalars[name] = value.item() if isinstance(value, np.generic) else value
        else:
            raise Error(f"pto-run: error: parameter %{name}: give a numpy array or a number, "
                        f"not {type(value).__name__}")
    return buffers, scalars, shapes


def _buffer_type(name: str, arr: np.ndarray, declared: Optional[str]) -> str:
    if declared is not None:
        if declared not in _DTYPES:
            raise Error(f"pto-run: error: dtypes[{name!r}]: unknown element type '{declared}' "
                        "(pto.dtypes() lists them)")
        if arr.dtype != _carrier(declared) and arr.dtype != _natural(declared):
            raise Error(f"pto-run: error: %{name} is declared {declared}, whose raw bits are "
                        f"{_carrier(declared).name}, but the array is {arr.dtype.name}")
        return declared
    spelling = _element_type_of(arr.dtype)
    if spelling is None:
        raise Error(f"pto-run: error: %{name}: numpy dtype {arr.dtype.name} is no PTO element type "
                    "(raw bits need dtypes={...}; pto.dtypes() lists the types)")
    return spelling


# ---------------------------------------------------------------------------- runs
class Run(collections.abc.Mapping):
    """The result of a run: every buffer parameter by name, as a numpy array of the dtype and
    shape it was given in (made ones: 1-D, or a tensor_view's shape). On the npu model also
    .cycles (the slowest block's) and .profile (per-pipe busy cycles and op counts, the
    summary and the costliest ops as pto-run prints them, and a Chrome trace)."""

    def __init__(self, res: Dict[str, Any], shapes: Dict[str, Any], backend: str):
        self.kernel: str = res["kernel"]
        self.backend = backend
        self.output: str = res["output"]
        self.warnings: List[str] = list(res["warnings"])
        self.tile_ops: int = res["tile_ops"]
        self.scalar_ops: int = res["scalar_ops"]
        self.seconds: float = res["seconds"]
        npu = res.get("npu")
        self.cycles: Optional[int] = npu["cycles"] if npu else None
        self.profile: Optional[Dict[str, Any]] = dict(npu) if npu else None
        self._buffers = {}
        for name, (raw, spelling, shape) in res["buffers"].items():
            self._buffers[name] = _result_array(raw, spelling, shape, shapes.get(name))
        if self.output:
            sys.stdout.write(self.output)

    def __getitem__(self, name: str) -> np.ndarray:
        key = name[1:] if name.startswith("%") else name
        if key not in self._buffers:
            raise KeyError(f"@{self.kernel} has no buffer parameter %{key} "
                           f"(buffers: {', '.join(sorted(self._buffers))})")
        return self._buffers[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._buffers)

    def __len__(self) -> int:
        return len(self._buffers)

    def __repr__(self) -> str:
        extra = f" cycles={self.cycles}" if self.cycles is not None else ""
        return f"<pto.Run @{self.kernel} on {self.backend}{extra} buffers={list(self._buffers)}>"


def _result_array(raw: np.ndarray, spelling: str, shape: List[int], given) -> np.ndarray:
    if given is not None:
        dtype, gshape = given
        return raw.view(dtype).reshape(gshape)
    if _is_packed(spelling):
        return raw  # two elements per byte
    return raw.view(numpy_dtype(spelling)).reshape(shape)


# ---------------------------------------------------------------------------- the tools
def _source_text(source, path, tool: str, filename: str):
    if (source is None) == (path is None):
        raise TypeError("give the source text or path=..., not both or neither")
    if path is not None:
        path = os.fspath(path)
        return _pto.read_source(path, tool), path if filename == "<string>" else filename
    if isinstance(source, str):
        return source.encode("utf-8"), filename
    if isinstance(source, (bytes, bytearray, memoryview)):
        return bytes(source), filename
    raise TypeError(f"source is text (str or bytes), not {type(source).__name__}")


def assemble(source: Union[str, bytes, None] = None, arch: Optional[str] = None,
             filename: str = "<string>", *, path=None) -> Object:
    """pto-as: assemble PTO text (any accepted form) into an object."""
    text, name = _source_text(source, path, "pto-as", filename)
    return Object(_pto.assemble(text, name, arch))


def link(objects: Sequence[Object], arch: Optional[str] = None, auto_sync: Optional[bool] = None,
         *, entries: Sequence[str] = (), allow_races: bool = False) -> Image:
    """pto-ld: link objects into an image. auto_sync None is pto-ld's default (sync inserted in
    functions without explicit sync), True is --auto-sync, False --no-auto-sync."""
    if isinstance(objects, Object):
        objects = [objects]
    handles = []
    for o in objects:
        if not isinstance(o, Object):
            raise TypeError(f"link takes pto.Object values, not {type(o).__name__}")
        handles.append(o._h)
    return Image(_pto.link(handles, arch, auto_sync, [_strip(e) for e in entries], allow_races))


def compile(source: Union[str, bytes, None] = None, arch: Optional[str] = None,
            auto_sync: Optional[bool] = None, filename: str = "<string>", *, path=None,
            entries: Sequence[str] = (), allow_races: bool = False) -> Image:
    """Assemble and link PTO text (or the file `path`) into an image."""
    obj = assemble(source, arch, filename, path=path)
    return link([obj], arch, auto_sync, entries=entries, allow_races=allow_races)


def load_image(image: Union[bytes, bytearray, memoryview, str, "os.PathLike[str]"]) -> Image:
    """An image from its bytes or from a file."""
    if isinstance(image, (bytes, bytearray, memoryview)):
        return Image(_pto.load_image_bytes(bytes(image), "<memory>"))
    if isinstance(image, (str, os.PathLike)):
        return Image(_pto.load_image_file(os.fspath(image)))
    raise TypeError(f"load_image takes bytes or a path, not {type(image).__name__}")


def run_source(source: Union[str, bytes, None] = None, kernel: Optional[str] = None, *, path=None,
               arch: Optional[str] = None, filename: str = "<string>", blocks: int = 1,
               args: Optional[Dict[str, Any]] = None, dtypes: Optional[Dict[str, str]] = None,
               max_instructions: int = 10_000_000_000, **kwargs) -> Run:
    """Runs a kernel of PTO text on the reference interpreter of the Kernel IR (`pto-run
    kernel.pto`): no assembling or linking. Every pointer parameter must be given."""
    text, name = _source_text(source, path, "pto-run", filename)
    src = _pto.parse_source(text, name, arch)
    buffers, scalars, shapes = _split_args(_merge_args(args, kwargs), dtypes or {})
    res = src.run(_strip(kernel), blocks, max_instructions, buffers, scalars)
    return Run(res, shapes, "ref")
