"""Inputs and the numpy reference for pipes-gm-entries.pto: X (160x16 f32, ten 16x16 blocks) and
B (16x16 f32) of small integers, every product and sum exact in f32; out block i = X_i @ B."""
import sys

import numpy as np

rng = np.random.default_rng(2029)
X = rng.integers(-8, 9, size=(160, 16)).astype(np.float32)
B = rng.integers(-8, 9, size=(16, 16)).astype(np.float32)
if sys.argv[1] == "inputs":
    np.save(sys.argv[2], X)
    np.save(sys.argv[3], B)
else:
    want = np.vstack([X[16 * i:16 * i + 16] @ B for i in range(10)])
    for path in sys.argv[2:]:
        got = np.load(path)
        assert np.array_equal(got, want), f"{path}: {got} != {want}"
    print(f"{len(sys.argv) - 2} outputs match numpy")
