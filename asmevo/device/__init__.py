"""Devices that run kernels: the embedded emulator (default) and real MI300s through HIP.

See :mod:`asmevo.device.base` for the interface and ``docs/devices.md`` for the user view."""

from .base import Device, DeviceError, DeviceUnavailable, Loaded, add_device_argument, get_device

__all__ = ["Device", "DeviceError", "DeviceUnavailable", "Loaded", "add_device_argument",
           "get_device"]
