"""Shared pieces of the hypothesis-drawn kernel tests (test_views, test_boxed_views,
test_partitions, test_reinterpret): one settings profile and one way to run a source on a backend."""
from hypothesis import HealthCheck, settings

BACKENDS = ["cpu", "npu", "ref"]  # ref: the reference interpreter (pto.run_source)


def examples(n):
    """n drawn examples, the same ones every run (derandomized), no deadline."""
    return settings(max_examples=n, deadline=None, database=None, derandomize=True,
                    suppress_health_check=list(HealthCheck))


def run_on(pto, backend, source, **args):
    """`source` compiled and run on the cpu or npu backend, or run by the reference interpreter."""
    if backend == "ref":
        return pto.run_source(source, **args)
    return pto.compile(source).run(backend=backend, **args)
