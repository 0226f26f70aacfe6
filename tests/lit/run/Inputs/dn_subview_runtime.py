"""Inputs and the numpy reference for dn-subview-runtime.pto: X (16x16 f32, random); the
outputs hold X's two diagonal 8x8 blocks, one above the other."""
import sys

import numpy as np

X = np.random.default_rng(2028).standard_normal((16, 16)).astype(np.float32)
if sys.argv[1] == "inputs":
    np.save(sys.argv[2], X)
else:
    want = np.vstack([X[0:8, 0:8], X[8:16, 8:16]])
    for path in sys.argv[2:]:
        got = np.load(path)
        assert np.array_equal(got, want), f"{path}: {got} != {want}"
    print(f"{len(sys.argv) - 2} outputs match numpy")
