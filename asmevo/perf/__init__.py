"""Where the time goes: a gfx942 (MI300X) timing model and its profiles.

Every figure here is an **estimate of the model** (``Profile.estimated`` is True) unless a
profile was read from hardware.  Modules, one concept each:

* :mod:`~asmevo.perf.profile`: the Profile data types (rocprofv3 stats columns);
* :mod:`~asmevo.perf.machine`: the machine description (every parameter with its source);
* :mod:`~asmevo.perf.costs`: instruction cost classes;
* :mod:`~asmevo.perf.memory`, :mod:`~asmevo.perf.cu`: the trace-driven compute-unit model;
* :mod:`~asmevo.perf.dynamic`: emulator trace -> CU replay -> Profile;
* :mod:`~asmevo.perf.static`: the static per-wave estimate for kernels without a launch;
* :mod:`~asmevo.perf.windows`, :mod:`~asmevo.perf.compare`: hot windows and comparisons.

API::

    from asmevo.perf import estimate
    p = estimate(module, "vadd_f32", harness="manifest.json#vadd_f32")   # dynamic
    p = estimate(module, "kernel")                                       # static fallback
    p.kernel().cycles, p.kernel().microseconds, p.kernel().bottleneck
"""

from __future__ import annotations

from .machine import MI300X, Machine, load_machine
from .profile import BOTTLENECKS, CAUSES, InstructionRow, KernelProfile, Profile, Window

__all__ = ["estimate", "compare", "load_machine", "Machine", "MI300X", "Profile",
           "KernelProfile", "InstructionRow", "Window", "CAUSES", "BOTTLENECKS"]


def _launch_from_harness(harness, entry=None, seed: int = 0):
    """``(Launch, dynamic LDS bytes or None)`` from a harness: a path (``file.json`` or
    ``file.json#entry``) or an already loaded entry dict."""
    from ..emu import harness as H
    if isinstance(harness, (str, bytes)) or hasattr(harness, "__fspath__"):
        path = str(harness)
        if "#" in path and entry is None:
            path, entry = path.split("#", 1)
        h = H.load_harness(path, entry)
    else:
        h = harness
    launch = H.make_launch(h, H.make_inputs(h, seed))
    return launch, h.get("dynamic_lds")


def estimate(module, kernel, launch=None, *, machine: Machine | str | None = None,
             harness=None, entry: str | None = None, seed: int = 0,
             full_trace: bool = False) -> Profile:
    """Estimate where ``kernel`` (a Kernel of ``module`` or its name) spends its time.

    Dynamic (``source="model-trace"``) when a ``launch`` (an
    :class:`~asmevo.emu.launch.Launch`) or a ``harness`` (path, ``path#entry``, or entry dict;
    inputs drawn with ``seed``) is given: the emulator runs the launch with a trace and the
    CU model (:mod:`asmevo.perf.cu`) replays it.  Otherwise the static estimate
    (:func:`asmevo.perf.static.estimate_static`, ``source="model-static"``).

    ``machine``: a :class:`Machine`, a TOML path (:func:`load_machine`) or None (MI300X).
    ``full_trace``: trace every workgroup rather than those of CU 0 (slower; exact hit
    counts, and the replayed CU is the one with the most work; see :mod:`asmevo.perf.dynamic`).
    Deterministic: the same input gives the same cycles.

    Raises:
        AsmevoError: unknown kernel, bad harness or machine file (exit status 2 in the CLI);
        EmuError: the emulator faulted while running the launch.
    """
    from ..errors import AsmevoError
    if isinstance(machine, str) or hasattr(machine, "__fspath__"):
        machine = load_machine(str(machine))
    m = machine or MI300X
    if isinstance(kernel, str):
        try:
            kernel = module.kernel(kernel)
        except KeyError as e:
            raise AsmevoError(str(e.args[0]), file=getattr(module, "source", None)) from None
    dyn_lds = None
    if launch is None and harness is not None:
        launch, dyn_lds = _launch_from_harness(harness, entry, seed)
    if launch is not None:
        from .dynamic import estimate_dynamic
        return estimate_dynamic(module, kernel, launch, machine=m, dynamic_lds=dyn_lds,
                                full_trace=full_trace)
    # ---- dispatch point: no launch -> the static estimate (asmevo/perf/static.py) ----------
    from .static import estimate_static
    return estimate_static(module, kernel, None, machine=m)


def compare(a: Profile, b: Profile, kernel: str | None = None):
    """Speedup of ``b`` over ``a`` and per-window deltas (:mod:`asmevo.perf.compare`)."""
    from .compare import compare as _compare
    return _compare(a, b, kernel)
