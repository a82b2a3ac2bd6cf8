"""Wave64 functional emulator for gfx942 (``asmevo run``).

Public API:

* :func:`run_kernel` (``module, kernel_name, launch -> RunResult``);
* :class:`Launch`, :class:`Arg`, :class:`RunResult`;
* :mod:`asmevo.emu.harness`: ``load_harness(path, entry)``, ``make_inputs(harness, seed)``,
  ``make_launch(harness, inputs)``, ``reference(harness, inputs)``, ``compare(...)``.
"""

from .launch import Arg, Launch, RunResult, run_kernel  # noqa: F401
from .memory import EmuError  # noqa: F401
