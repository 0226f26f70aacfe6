"""Inputs and the numpy reference for boxed-subset.pto: X (32x32 f16) and B (16x16 f16) of
small integers (every product and sum exact in f16 / f32); the top-left and bottom-right
quarters of X through subsets of one left tile, each multiplied by B."""
import sys

import numpy as np

rng = np.random.default_rng(2026)
X = rng.integers(-4, 5, size=(32, 32)).astype(np.float16)
B = rng.integers(-4, 5, size=(16, 16)).astype(np.float16)
if sys.argv[1] == "inputs":
    np.save(sys.argv[2], X)
    np.save(sys.argv[3], B)
else:  # check lo.npy hi.npy ...: each run's outputs against the quarters @ B
    want = {"lo": X[:16, :16].astype(np.float32) @ B.astype(np.float32),
            "hi": X[16:, 16:].astype(np.float32) @ B.astype(np.float32)}
    for path in sys.argv[2:]:
        name = "lo" if path.endswith("lo.npy") else "hi"
        got = np.load(path)
        assert np.array_equal(got, want[name]), f"{path}: {got} != {want[name]}"
    print(f"{len(sys.argv) - 2} outputs match numpy")
