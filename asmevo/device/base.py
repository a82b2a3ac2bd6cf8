"""The device interface: what runs a kernel, whatever it is.

A :class:`Device` loads a code object (an asmevo ``Module``, and for real hardware its bytes),
and the loaded object (:class:`Loaded`) runs a kernel on a launch description
(:class:`asmevo.emu.launch.Launch`: grid, block, arguments), reads the output buffers back and
times launches.  Both devices build the kernarg segment, the hidden arguments and the buffer
layout with the one function :func:`asmevo.emu.launch.prepare_launch`, so the emulator and a
real MI300 see identical launches.

Devices:

* ``emu`` (:class:`asmevo.device.emulator.EmulatorDevice`): the embedded wave64 emulator, the
  default.  Its launch times come from the timing model (``estimated``), never from the wall
  clock of the emulation.
* ``hip[:N]`` (:class:`asmevo.device.hip.HipDevice`): a real AMD GPU through HIP's module API
  (``hip-python``, the optional extra ``asmevo[hip]``).
"""

from __future__ import annotations

import abc

from ..errors import AsmevoError


class DeviceError(AsmevoError):
    """A device could not do what was asked (a HIP call failed, no device, wrong
    architecture, a launch timed out).  Bad input of the user's: exit status 2."""


class DeviceUnavailable(DeviceError):
    """The device's library or hardware is missing; the message says how to install it."""


class Loaded(abc.ABC):
    """A code object loaded on a device."""

    @abc.abstractmethod
    def run(self, kernel: str, launch):
        """Run ``kernel`` once on ``launch``; an :class:`asmevo.emu.launch.RunResult` whose
        ``outputs`` hold every buffer argument's final contents."""

    @abc.abstractmethod
    def time_launch(self, kernel: str, launch) -> float:
        """One launch's time in microseconds (the timing model's estimate on the emulator)."""

    def close(self) -> None:
        """Release what the load holds (device memory, the loaded module)."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Device(abc.ABC):
    """Something that loads code objects and runs their kernels.

    Attributes:
        name: ``"emu"`` or ``"hip:N"``.
        hardware: True when launches run on a GPU (timings are measured, not estimated).
    """

    name: str = "?"
    hardware: bool = False

    @abc.abstractmethod
    def load(self, module, image: bytes | None = None) -> Loaded:
        """Load ``module`` (an asmevo Module); ``image`` is its code object's bytes when the
        caller has them (a real device needs them; they are built from the module otherwise).
        Raises :class:`DeviceError`."""

    def close(self) -> None:
        """Release the device."""


def get_device(spec: str | None) -> Device:
    """The device named by ``spec``: ``None``/``"emu"`` (the embedded emulator) or
    ``"hip"``/``"hip:N"`` (HIP device N, default 0).

    Raises:
        AsmevoError: an unknown device name (exit 2).
        DeviceUnavailable: ``hip`` without hip-python, the ROCm runtime or a device.
    """
    s = (spec or "emu").strip().lower()
    if s in ("emu", "emulator"):
        from .emulator import EmulatorDevice
        return EmulatorDevice()
    if s == "hip" or s.startswith("hip:"):
        idx = 0
        if ":" in s:
            try:
                idx = int(s.split(":", 1)[1])
            except ValueError:
                raise AsmevoError(f"bad device {spec!r}: expected hip:N with N a device number") from None
            if idx < 0:
                raise AsmevoError(f"bad device {spec!r}: the device number must be >= 0")
        from .hip import HipDevice
        return HipDevice(idx)
    raise AsmevoError(f"unknown device {spec!r}: expected 'emu' (the embedded emulator, the "
                      "default) or 'hip[:N]' (an AMD GPU through HIP)")


def add_device_argument(p) -> None:
    """The ``--device`` option every command that runs kernels shares."""
    p.add_argument("--device", default="emu", metavar="emu|hip[:N]",
                   help="what runs the kernel: 'emu' (the embedded gfx942 emulator, the default) "
                        "or 'hip[:N]' (AMD GPU N through HIP; needs asmevo[hip] and ROCm)")
