"""A real AMD GPU through HIP's module API (``--device hip[:N]``, extra ``asmevo[hip]``).

Call sequence per run (HIP docs, "Module management"; facts in
``../shared/research/LOOP_AND_MODEL_ANCHORS.md`` section 6):

1. ``hipSetDevice(N)``, ``hipGetDeviceProperties`` -> ``gcnArchName``, checked against the
   code object's target before anything is loaded;
2. ``hipModuleLoadData(image)``, ``hipModuleGetFunction(module, name)``;
3. per buffer argument ``hipMalloc`` + ``hipMemcpy`` host-to-device (the harness's initial
   contents, outputs included, so that a kernel that leaves elements alone reads back what the
   emulator would);
4. the kernarg segment from :func:`asmevo.emu.launch.prepare_launch` with the device pointers
   (the same function the emulator uses), passed through ``extra`` as
   ``{HIP_LAUNCH_PARAM_BUFFER_POINTER (1), ptr, HIP_LAUNCH_PARAM_BUFFER_SIZE (2), &size,
   HIP_LAUNCH_PARAM_END (3)}``;
5. ``hipModuleLaunchKernel(f, grid (in workgroups), block, dynamic LDS bytes, stream 0,
   NULL, extra)``; ``hipDeviceSynchronize`` bounded by a timeout;
6. ``hipMemcpy`` device-to-host of every buffer, ``hipFree``.

Timing: ``hipEventCreate`` x2, ``hipEventRecord(start)``, launch, ``hipEventRecord(stop)``,
``hipEventSynchronize(stop)``, ``hipEventElapsedTime`` (milliseconds, about 1 us resolution).

Every failing call becomes a :class:`DeviceError` naming the call and HIP's error string.
The binding module is looked up lazily (``rocm.bindings.hip``, else the legacy ``hip.hip``);
tests pass a stand-in module that records the calls.

**Not run on hardware**: no machine this was written on has an AMD GPU; the call sequence is
tested against a recording double of the binding (``tests/device/``).
"""

from __future__ import annotations

import ctypes
import threading

import numpy as np

from .base import Device, DeviceError, DeviceUnavailable, Loaded

INSTALL = ("install it with `pip install 'asmevo[hip]'` (hip-python) and the ROCm runtime "
           "(libamdhip64.so); see docs/devices.md")

#: seconds a launch may take before the run is abandoned (hipDeviceSynchronize is unbounded)
LAUNCH_TIMEOUT_S = 60.0

HIP_LAUNCH_PARAM_BUFFER_POINTER = 1
HIP_LAUNCH_PARAM_BUFFER_SIZE = 2
HIP_LAUNCH_PARAM_END = 3
_HTOD, _DTOH = 1, 2     # hipMemcpyHostToDevice, hipMemcpyDeviceToHost


def load_binding():
    """The hip-python binding module; raises :class:`DeviceUnavailable` when missing."""
    try:
        from rocm.bindings import hip  # type: ignore
        return hip
    except ImportError:
        pass
    try:
        from hip import hip  # type: ignore  (hip-python before the rocm-bindings split)
        return hip
    except ImportError:
        raise DeviceUnavailable(f"--device hip needs the hip-python package: {INSTALL}") from None


def _addr(p) -> int:
    """A device pointer object of the binding (or an int) as an integer address."""
    if isinstance(p, int):
        return p
    for attr in ("ptr", "value"):
        v = getattr(p, attr, None)
        if isinstance(v, int):
            return v
    return int(p)


def _arch(name) -> str:
    """``gfx942`` from ``gfx942:sramecc+:xnack-`` or ``amdgcn-amd-amdhsa--gfx942``."""
    if isinstance(name, bytes):
        name = name.decode(errors="replace")
    name = str(name).strip().strip("\0")
    name = name.split("--")[-1] if "--" in name else name
    return name.split(":")[0]


class HipDevice(Device):
    """AMD GPU number ``index`` through HIP.  ``binding``: the hip module (tests give a
    stand-in); ``timeout``: seconds a launch may take."""

    hardware = True

    def __init__(self, index: int = 0, *, binding=None, timeout: float = LAUNCH_TIMEOUT_S):
        self.index = index
        self.name = f"hip:{index}"
        self.hip = binding if binding is not None else load_binding()
        self.timeout = timeout
        self._arch = None
        try:
            n = self.call("hipGetDeviceCount")
        except RuntimeError as e:      # hip-python without libamdhip64.so fails at the first call
            import re
            why = re.sub(r"""b(['"])(.*?)\1""", r"\2", str(e))   # the binding prints bytes reprs
            raise DeviceUnavailable(f"--device hip: the HIP runtime is not available ({why}); "
                                    f"{INSTALL}") from None
        if int(n) <= index:
            raise DeviceUnavailable(f"--device {self.name}: this machine has {int(n)} HIP "
                                    "device(s)" + ("" if n else "; no AMD GPU was found"))
        self.call("hipSetDevice", index)

    # -- calls ---------------------------------------------------------------------------
    def call(self, name: str, *args):
        """Call ``hip.<name>(*args)``; returns the result after the error code (None, one
        value or a tuple).  Raises :class:`DeviceError` naming the call and HIP's error."""
        fn = getattr(self.hip, name, None)
        if fn is None:
            raise DeviceUnavailable(f"the HIP binding has no {name}; {INSTALL}")
        out = fn(*args)
        if not isinstance(out, tuple):
            out = (out,)
        err, rest = out[0], out[1:]
        if int(getattr(err, "value", err)) != 0:
            raise DeviceError(f"{name} failed: {self._err_text(err)}")
        if not rest:
            return None
        return rest[0] if len(rest) == 1 else rest

    def _err_text(self, err) -> str:
        code = int(getattr(err, "value", err))
        label = getattr(err, "name", None) or f"error {code}"
        try:
            s = self.hip.hipGetErrorString(err)
            s = s[-1] if isinstance(s, tuple) else s
            s = s.decode(errors="replace") if isinstance(s, bytes) else str(s)
        except Exception:
            s = ""
        return f"{label} ({s})" if s and s != label else label

    def arch(self) -> str:
        """The device's architecture (``gfx942``) from ``gcnArchName``."""
        if self._arch is None:
            props = self.hip.hipDeviceProp_t()
            self.call("hipGetDeviceProperties", props, self.index)
            self._arch = _arch(props.gcnArchName)
        return self._arch

    # -- loading -------------------------------------------------------------------------
    def load(self, module, image: bytes | None = None) -> Loaded:
        target = module.target or ""
        want = _arch(target) if target else "gfx942"
        have = self.arch()
        if have != want:
            raise DeviceError(f"{module.source or 'code object'} targets {want}, but {self.name} "
                              f"is {have}: refusing to load it")
        if image is None:
            image = code_object_bytes(module)
        handle = self.call("hipModuleLoadData", image)
        return HipLoaded(self, module, handle)


def code_object_bytes(module) -> bytes:
    """The loadable code object of ``module`` (its source file's bytes when it came from a
    code object, else rebuilt through :mod:`asmevo.backend.rebuild`)."""
    import os
    import tempfile
    from ..backend.rebuild import write_code_object
    with tempfile.TemporaryDirectory(prefix="asmevo-hip-") as d:
        path = os.path.join(d, "k.co")
        write_code_object(module, path)
        with open(path, "rb") as f:
            return f.read()


class HipLoaded(Loaded):
    """A code object loaded with ``hipModuleLoadData``."""

    def __init__(self, dev: HipDevice, module, handle):
        self.dev = dev
        self.module = module
        self.handle = handle
        self._funcs: dict = {}
        self._events = None

    def function(self, kernel: str):
        if kernel not in self._funcs:
            self._funcs[kernel] = self.dev.call("hipModuleGetFunction", self.handle, kernel)
        return self._funcs[kernel]

    def _launch(self, kernel: str, launch, *, timed: bool) -> tuple:
        """Set up buffers, launch, wait; returns (prepared launch, device pointers, ms)."""
        from ..emu.launch import prepare_launch
        f = self.function(kernel)
        ptrs: dict = {}

        def place(name: str, data: np.ndarray) -> int:
            raw = np.ascontiguousarray(data).view(np.uint8).reshape(-1)
            n = max(int(raw.size), 1)
            p = self.dev.call("hipMalloc", n)
            ptrs[name] = (p, int(raw.size))
            if raw.size:
                self.dev.call("hipMemcpy", p, raw.ctypes.data, int(raw.size), _HTOD)
            return _addr(p)

        try:
            prep = prepare_launch(self.module, kernel, launch, place)
            ka = (ctypes.c_char * len(prep.kernarg)).from_buffer_copy(prep.kernarg)
            size = ctypes.c_size_t(len(prep.kernarg))
            extra = (ctypes.c_void_p * 5)(HIP_LAUNCH_PARAM_BUFFER_POINTER, ctypes.addressof(ka),
                                         HIP_LAUNCH_PARAM_BUFFER_SIZE, ctypes.addressof(size),
                                         HIP_LAUNCH_PARAM_END)
            gx, gy, gz = prep.grid
            bx, by, bz = prep.block
            ms = None
            if timed:
                if self._events is None:
                    self._events = (self.dev.call("hipEventCreate"), self.dev.call("hipEventCreate"))
                start, stop = self._events
                self.dev.call("hipEventRecord", start, None)
            self.dev.call("hipModuleLaunchKernel", f, gx, gy, gz, bx, by, bz, prep.dynamic_lds,
                          None, None, extra)
            if timed:
                self.dev.call("hipEventRecord", stop, None)
            self._wait(kernel, "hipEventSynchronize" if timed else "hipDeviceSynchronize",
                       *((stop,) if timed else ()))
            if timed:
                ms = float(self.dev.call("hipEventElapsedTime", start, stop))
            return prep, ptrs, ms
        except BaseException:
            self._free(ptrs)
            raise

    def _wait(self, kernel: str, call: str, *args) -> None:
        """``call`` (a synchronising HIP call) bounded by the device's timeout."""
        box: dict = {}

        def target():
            try:
                self.dev.call(call, *args)
            except BaseException as e:   # reported in the caller's thread
                box["e"] = e
        t = threading.Thread(target=target, daemon=True)
        t.start()
        t.join(self.dev.timeout)
        if t.is_alive():
            raise DeviceError(f"{call}: kernel {kernel} did not finish within "
                              f"{self.dev.timeout:g} s on {self.dev.name} (hung or runaway loop); "
                              "the device may need a reset")
        if "e" in box:
            raise box["e"]

    def _free(self, ptrs: dict) -> None:
        for p, _ in ptrs.values():
            try:
                self.dev.call("hipFree", p)
            except DeviceError:
                pass

    def run(self, kernel: str, launch):
        """One launch; every buffer read back (an :class:`asmevo.emu.launch.RunResult`)."""
        import time
        from ..emu.launch import RunResult
        t0 = time.perf_counter()
        prep, ptrs, _ = self._launch(kernel, launch, timed=False)
        try:
            outputs = {}
            for a in launch.args:
                if a.kind != "buffer":
                    continue
                p, n = ptrs[a.name]
                host = np.zeros(n, np.uint8)
                if n:
                    self.dev.call("hipMemcpy", host.ctypes.data, p, n, _DTOH)
                outputs[a.name] = host.view(np.dtype(a.dtype)).copy()
        finally:
            self._free(ptrs)
        return RunResult(outputs, [], seconds=time.perf_counter() - t0, kernarg=prep.kernarg,
                         buffer_addresses=dict(prep.addresses))

    def time_launch(self, kernel: str, launch) -> float:
        """One launch timed with HIP events, microseconds."""
        _, ptrs, ms = self._launch(kernel, launch, timed=True)
        self._free(ptrs)
        return ms * 1000.0

    def close(self) -> None:
        if self._events is not None:
            for e in self._events:
                try:
                    self.dev.call("hipEventDestroy", e)
                except DeviceError:
                    pass
            self._events = None
        if self.handle is not None:
            try:
                self.dev.call("hipModuleUnload", self.handle)
            finally:
                self.handle = None
