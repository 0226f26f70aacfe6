"""Independent numpy models of the PTO tile ops (issue #31, item 3): each op of the op table
has a model written from the PTO ISA documents (pto-isa docs/isa/*.md, the seed documents)
and a generator of random kernels for it. tests/python/test_ops_models.py runs them."""

from . import conversions, elementwise, expands, gather, generators, matmul, moves, quant, reductions, select, sort  # noqa: F401  (they register their models)
from .registry import MODELS, OpModel  # noqa: F401
