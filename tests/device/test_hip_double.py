"""HipDevice against a recording stand-in of the hip-python binding (no GPU needed)."""

from __future__ import annotations

import json
import pathlib

import numpy as np
import pytest

from asmevo.device.base import DeviceError, DeviceUnavailable, get_device
from asmevo.device.hip import HipDevice
from asmevo.emu.harness import load_harness, make_inputs, make_launch
from asmevo.emu.launch import run_kernel
from asmevo.frontend.loader import load
from fake_hip import FakeHip

ROOT = pathlib.Path(__file__).resolve().parents[2]
EX = ROOT / "examples"


def _setup(seed=0):
    m = load(str(EX / "vadd_f32.co"))
    h = load_harness(str(EX / "vadd_f32.json"))
    return m, h, make_launch(h, make_inputs(h, seed))


def test_call_sequence_and_kernarg_identical_to_emulator():
    m, h, launch = _setup()
    fake = FakeHip()
    dev = HipDevice(0, binding=fake)
    with dev.load(m, image=b"\x7fELF-fake") as ld:
        res = ld.run(h["kernel"], launch)
    emu = run_kernel(m, h["kernel"], make_launch(h, make_inputs(h, 0)))
    # the kernarg segment HIP received is the emulator's, byte for byte
    assert fake.launches[0]["kernarg"] == emu.kernarg
    assert res.buffer_addresses == emu.buffer_addresses
    assert fake.launches[0]["grid"] == tuple(launch.grid)
    assert fake.launches[0]["block"] == tuple(launch.block)
    nbuf = sum(1 for a in launch.args if a.kind == "buffer")
    c = fake.calls
    assert c[:4] == ["hipGetDeviceCount", "hipSetDevice", "hipGetDeviceProperties",
                     "hipModuleLoadData"]
    assert c[4] == "hipModuleGetFunction"
    assert c.count("hipMalloc") == nbuf and c.count("hipMemcpyHtoD") == nbuf
    li = c.index("hipModuleLaunchKernel")
    assert max(i for i, x in enumerate(c) if x == "hipMemcpyHtoD") < li
    assert c[li + 1] == "hipDeviceSynchronize"
    assert c.count("hipMemcpyDtoH") == nbuf and c.count("hipFree") == nbuf
    assert c[-1] == "hipModuleUnload"
    # the stand-in leaves memory alone: outputs read back are the initial contents
    for a in launch.args:
        if a.kind == "buffer":
            assert np.array_equal(res.outputs[a.name].view(np.uint8),
                                  np.ascontiguousarray(a.data).view(np.uint8))


def test_timed_launch_uses_events():
    m, h, launch = _setup()
    fake = FakeHip(ms=0.25)
    ld = HipDevice(0, binding=fake).load(m, image=b"x")
    us = ld.time_launch(h["kernel"], launch)
    assert us == pytest.approx(250.0)
    c = fake.calls
    li = c.index("hipModuleLaunchKernel")
    assert c[li - 1] == "hipEventRecord" and c[li + 1] == "hipEventRecord"
    assert c[li + 2] == "hipEventSynchronize" and c[li + 3] == "hipEventElapsedTime"
    ld.close()
    assert fake.calls.count("hipEventDestroy") == 2


def test_wrong_architecture_refused_before_loading():
    m, h, launch = _setup()
    fake = FakeHip(arch="gfx90a:sramecc+:xnack-")
    with pytest.raises(DeviceError, match="targets gfx942.*gfx90a"):
        HipDevice(0, binding=fake).load(m, image=b"x")
    assert "hipModuleLoadData" not in fake.calls


def test_failing_call_names_call_and_error_and_frees():
    m, h, launch = _setup()
    fake = FakeHip(fail={"hipModuleLaunchKernel": 719})
    ld = HipDevice(0, binding=fake).load(m, image=b"x")
    with pytest.raises(DeviceError, match=r"hipModuleLaunchKernel failed: hipErrorLaunchFailure "
                                          r"\(unspecified launch failure\)"):
        ld.run(h["kernel"], launch)
    assert fake.calls.count("hipFree") == fake.calls.count("hipMalloc")


def test_bad_image():
    m, _, _ = _setup()
    fake = FakeHip(fail={"hipModuleLoadData": 200})
    with pytest.raises(DeviceError, match="hipModuleLoadData failed: hipErrorInvalidImage"):
        HipDevice(0, binding=fake).load(m, image=b"x")


def test_launch_timeout():
    m, h, launch = _setup()
    fake = FakeHip(hang=True)
    ld = HipDevice(0, binding=fake, timeout=0.2).load(m, image=b"x")
    with pytest.raises(DeviceError, match="did not finish within 0.2 s"):
        ld.run(h["kernel"], launch)
    fake._release.set()


def test_no_device_and_missing_runtime():
    with pytest.raises(DeviceUnavailable, match="0 HIP device"):
        HipDevice(0, binding=FakeHip(ndev=0))
    with pytest.raises(DeviceUnavailable, match="has 1 HIP device"):
        HipDevice(1, binding=FakeHip(ndev=1))

    class NoLib:
        def hipGetDeviceCount(self):
            raise RuntimeError("failed to dlopen 'libamdhip64.so'")
    with pytest.raises(DeviceUnavailable, match="libamdhip64.so.*pip install 'asmevo\\[hip\\]'"):
        HipDevice(0, binding=NoLib())


def test_get_device_names():
    assert get_device(None).name == "emu"
    assert get_device("emu").hardware is False
    from asmevo.errors import AsmevoError
    for bad in ("cuda", "hip:x", "hip:-1"):
        with pytest.raises(AsmevoError):
            get_device(bad)


def test_differential_testing_runs_on_the_device():
    from asmevo.verify import verify
    m, h, _ = _setup()
    fake = FakeHip()
    dev = HipDevice(0, binding=fake)
    v = verify(m, load(str(EX / "vadd_f32.co")), harness=h, level="diff", trials=3, device=dev)
    assert v.accepted, v.text()
    # both kernels loaded once, one launch per trial and side, everything released
    assert fake.calls.count("hipModuleLoadData") == 2
    assert fake.calls.count("hipModuleLaunchKernel") >= 6
    assert fake.calls.count("hipModuleUnload") == 2
    assert fake.calls.count("hipFree") == fake.calls.count("hipMalloc")


@pytest.mark.parametrize("cmd", [["run", str(EX / "vadd_f32.co"), "--harness", str(EX / "vadd_f32.json")],
                                 ["verify", str(EX / "vadd_f32.co"), str(EX / "vadd_f32.co"),
                                  "--harness", str(EX / "vadd_f32.json")]])
def test_cli_device_hip_without_gpu_exits_2(cmd, capsys):
    from asmevo.cli import main
    import importlib.util
    if importlib.util.find_spec("rocm") is not None:
        try:
            from rocm.bindings import hip
            hip.hipGetDeviceCount()
            pytest.skip("a HIP runtime is present on this machine")
        except RuntimeError:
            pass
    rc = main(cmd + ["--device", "hip"])
    err = capsys.readouterr().err
    assert rc == 2 and "asmevo[hip]" in err and "Traceback" not in err
