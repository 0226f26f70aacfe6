"""Inputs and the numpy reference for boxed-subset-runtime.pto: X (32x32 f16), B (16x16 f16) and
W (32x32 f16) of small integers (every product and sum exact in f16 / f32). `diag` holds the two
16x16 diagonal blocks of X, each times B; `rows` is X @ W, read back a 16-row strip at a time."""
import sys

import numpy as np

rng = np.random.default_rng(2027)
X = rng.integers(-4, 5, size=(32, 32)).astype(np.float16)
B = rng.integers(-4, 5, size=(16, 16)).astype(np.float16)
W = rng.integers(-4, 5, size=(32, 32)).astype(np.float16)
if sys.argv[1] == "inputs":
    for path, a in zip(sys.argv[2:], (X, B, W)):
        np.save(path, a)
else:  # check diag.npy rows.npy ...: each run's outputs against numpy
    f32 = np.float32
    want = {"diag": np.vstack([X[i:i + 16, i:i + 16].astype(f32) @ B.astype(f32)
                               for i in (0, 16)]),
            "rows": X.astype(f32) @ W.astype(f32)}
    for path in sys.argv[2:]:
        name = "diag" if path.endswith("diag.npy") else "rows"
        got = np.load(path)
        assert np.array_equal(got, want[name]), f"{path}: {got} != {want[name]}"
    print(f"{len(sys.argv) - 2} outputs match numpy")
