"""Pass manager, pipeline parser and the built-in passes (``asmevo-opt``).

Public API::

    from asmevo.passes import Pass, PassResult, register_pass, parse_pipeline, PassManager
    nodes = parse_pipeline("kernel(copy-prop,dce),regalloc-compact")
    PassManager(nodes).run(module)

See docs/passes.md for writing a pass plugin.
"""

from .base import Pass, PassResult, stat_counter
from .manager import AnalysisManager, Instrumentation, PassFailedError, PassManager
from .pipeline import PipelineError, parse_pipeline, pipeline_text
from .registry import DEFAULT_PIPELINE, all_passes, lookup, pass_names, register_pass


def run_pipeline(module, text: str, *, kernels=None, verify_each: bool = False):
    """Parse ``text`` and run it over ``module`` in place; returns the Instrumentation
    (per-pass statistics in ``.stats``)."""
    inst = Instrumentation(verify_each=verify_each)
    PassManager(parse_pipeline(text), kernels=kernels, instrumentation=inst).run(module)
    return inst


__all__ = [
    "AnalysisManager", "DEFAULT_PIPELINE", "Instrumentation", "Pass", "PassFailedError",
    "PassManager", "PassResult", "PipelineError", "all_passes", "lookup", "parse_pipeline",
    "pass_names", "pipeline_text", "register_pass", "run_pipeline", "stat_counter",
]
