"""A stand-in for hip-python's ``hip`` binding module that records every call.

Device memory is a dict of bytearrays; addresses come from the emulator's own allocator rule
(asmevo.emu.memory.GlobalMemory), so that a launch through HipDevice can be compared byte for
byte with the emulator's.  ``fail`` names a call that returns an error; ``hang`` makes
synchronising calls block."""

from __future__ import annotations

import ctypes
import threading

from asmevo.emu.memory import GlobalMemory


class Err(int):
    @property
    def name(self):
        return {0: "hipSuccess", 1: "hipErrorInvalidValue", 200: "hipErrorInvalidImage",
                719: "hipErrorLaunchFailure"}.get(int(self), f"hipError{int(self)}")

    @property
    def value(self):
        return int(self)


OK = Err(0)


class Props:
    def __init__(self, arch):
        self.gcnArchName = arch


class FakeHip:
    def __init__(self, arch="gfx942:sramecc+:xnack-", ndev=1, fail=None, hang=False, ms=0.5):
        self.calls = []
        self.arch = arch
        self.ndev = ndev
        self.fail = fail or {}
        self.hang = hang
        self.ms = ms
        self.mem = {}
        self.alloc = GlobalMemory()
        self.launches = []
        self.freed = []
        self._release = threading.Event()

    def _rec(self, name, *args):
        self.calls.append(name)
        if name in self.fail:
            return Err(self.fail[name])
        return OK

    def hipDeviceProp_t(self):
        return Props(None)

    def hipGetErrorString(self, err):
        return (OK, {1: b"invalid argument", 200: b"device kernel image is invalid",
                     719: b"unspecified launch failure"}.get(int(err), b"unknown error"))

    def hipGetDeviceCount(self):
        return (self._rec("hipGetDeviceCount"), self.ndev)

    def hipSetDevice(self, i):
        return (self._rec("hipSetDevice", i),)

    def hipGetDeviceProperties(self, props, i):
        props.gcnArchName = self.arch.encode()
        return (self._rec("hipGetDeviceProperties"),)

    def hipModuleLoadData(self, image):
        self.image = bytes(image)
        return (self._rec("hipModuleLoadData"), "module")

    def hipModuleGetFunction(self, mod, name):
        return (self._rec("hipModuleGetFunction"), ("function", name))

    def hipMalloc(self, n):
        a = self.alloc.map("b", n)
        self.mem[a] = bytearray(n)
        return (self._rec("hipMalloc"), a)

    def hipMemcpy(self, dst, src, n, kind):
        e = self._rec(f"hipMemcpy{'HtoD' if kind == 1 else 'DtoH'}")
        if kind == 1:
            self.mem[dst][:n] = ctypes.string_at(src, n)
        else:
            ctypes.memmove(dst, bytes(self.mem[src][:n]), n)
        return (e,)

    def hipModuleLaunchKernel(self, f, gx, gy, gz, bx, by, bz, shmem, stream, params, extra):
        e = self._rec("hipModuleLaunchKernel")
        assert params is None
        vals = [extra[i] for i in range(5)]
        assert vals[0] == 1 and vals[2] == 2 and vals[4] == 3, vals
        size = ctypes.c_size_t.from_address(vals[3]).value
        self.launches.append({"f": f, "grid": (gx, gy, gz), "block": (bx, by, bz),
                              "shmem": shmem, "kernarg": ctypes.string_at(vals[1], size)})
        return (e,)

    def _sync(self, name):
        e = self._rec(name)
        if self.hang:
            self._release.wait(5)
        return (e,)

    def hipDeviceSynchronize(self):
        return self._sync("hipDeviceSynchronize")

    def hipEventSynchronize(self, ev):
        return self._sync("hipEventSynchronize")

    def hipEventCreate(self):
        return (self._rec("hipEventCreate"), object())

    def hipEventRecord(self, ev, stream):
        return (self._rec("hipEventRecord"),)

    def hipEventElapsedTime(self, a, b):
        return (self._rec("hipEventElapsedTime"), self.ms)

    def hipEventDestroy(self, ev):
        return (self._rec("hipEventDestroy"),)

    def hipFree(self, p):
        self.freed.append(p)
        return (self._rec("hipFree"),)

    def hipModuleUnload(self, m):
        return (self._rec("hipModuleUnload"),)
