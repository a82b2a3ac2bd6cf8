"""The embedded emulator as a device (the default, ``--device emu``).

Runs go to :func:`asmevo.emu.launch.run_kernel`; launch times are the timing model's
estimate (:func:`asmevo.perf.estimate`, microseconds at the machine description's clock),
deterministic and labelled estimated: the wall clock of a Python emulation says nothing about
a GPU."""

from __future__ import annotations

from .base import Device, Loaded


class EmulatorLoaded(Loaded):
    def __init__(self, module):
        self.module = module
        self._times: dict = {}

    def run(self, kernel: str, launch):
        from ..emu.launch import run_kernel
        return run_kernel(self.module, kernel, launch)

    def time_launch(self, kernel: str, launch) -> float:
        """The timing model's estimate of one launch, in microseconds (cached per kernel and
        launch shape: the model is deterministic)."""
        key = (kernel, tuple(launch.grid), tuple(launch.block))
        if key not in self._times:
            from ..perf import estimate
            prof = estimate(self.module, kernel, launch)
            self._times[key] = float(prof.kernel(kernel).microseconds)
        return self._times[key]


class EmulatorDevice(Device):
    """The embedded wave64 gfx942 emulator (:mod:`asmevo.emu`)."""

    name = "emu"
    hardware = False

    def load(self, module, image: bytes | None = None) -> Loaded:
        return EmulatorLoaded(module)
