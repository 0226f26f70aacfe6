# %% [markdown]
# # A PTO kernel from Python
#
# Compile a kernel from a string, run it on numpy arrays on the cpu backend and on the npu
# model, and check it against numpy (docs/python.md). Run it as a script
# (`PYTHONPATH=build/python python3 samples/python/vadd.py`) or cell by cell in an editor
# that knows `# %%` cells.

# %%
import numpy as np

import pto

# %% [markdown]
# The kernel: z = relu(x + y) and the row sums of z, over a 64x64 f32 matrix in tiles of
# 16 rows. The linker inserts the sync between the pipes.

# %%
SOURCE = """
kernel @addrelu(%x: !pto.tensor_view<64x64xf32>, %y: !pto.tensor_view<64x64xf32>,
                %z: !pto.tensor_view<64x64xf32>, %s: !pto.tensor_view<64x1xf32>) {
  tile %a, %b, %c, %tmp : !pto.tile<f32, 16, 64>
  tile %r : !pto.tile_buf<vec, 16x8xf32, valid=16x1>
  scf.for %i = 0 to 64 step 16 {
    tload %a, %x[%i, 0]
    tload %b, %y[%i, 0]
    tadd %c, %a, %b
    trelu %c, %c
    trowsum %r, %c, %tmp
    tstore %z[%i, 0], %c
    tstore %s[%i, 0], %r
  }
}
"""
image = pto.compile(SOURCE, filename="addrelu.pto")
print(image, [(p.name, p.type) for p in image.params()])

# %% [markdown]
# Inputs, and what numpy says the kernel computes.

# %%
rng = np.random.default_rng(0)
x = rng.uniform(-1, 1, (64, 64)).astype(np.float32)
y = rng.uniform(-1, 1, (64, 64)).astype(np.float32)
want_z = np.maximum(x + y, 0)
want_s = want_z.astype(np.float64).sum(axis=1, keepdims=True)

# %% [markdown]
# Both backends: the functional cpu backend and the npu model, which also counts cycles.

# %%
for backend in ("cpu", "npu"):
    run = image.run(backend=backend, x=x, y=y)
    np.testing.assert_array_equal(run["z"], want_z)
    np.testing.assert_allclose(run["s"], want_s, rtol=1e-5, atol=1e-5)
    print(f"{backend}: matches numpy", f"({run.cycles} cycles)" if run.cycles else "")

# %% [markdown]
# The npu model's per-pipe profile.

# %%
print(run.profile["summary"])

# %% [markdown]
# Errors are `pto.Error`, with the diagnostics as pto-as prints them.

# %%
try:
    pto.compile(SOURCE.replace("tadd %c, %a, %b", "tadd %c, %a"), filename="addrelu.pto")
except pto.Error as e:
    print(e)
    print(e.diagnostics[0])
else:
    raise AssertionError("a tadd with one source compiled")
