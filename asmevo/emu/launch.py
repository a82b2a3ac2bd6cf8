"""Kernel launch per LLVM AMDGPUUsage (code object v5, gfx942, wave64).

* kernarg segment: explicit arguments at their metadata ``.offset`` (buffers as
  8-byte pointers, scalars as their bytes); hidden arguments filled by
  ``.value_kind`` (``hidden_block_count_*``, ``hidden_group_size_*``,
  ``hidden_remainder_*``, ``hidden_global_offset_*``, ``hidden_grid_dims``;
  pointer-like hidden arguments are null);
* dispatch packet (``hsa_kernel_dispatch_packet_t``, 64 bytes) for the dispatch
  pointer; a zeroed 256-byte region for the queue pointer;
* initial SGPRs, in order: private segment buffer (4), dispatch ptr (2), queue
  ptr (2), kernarg segment ptr (2), dispatch id (2), flat scratch init (2),
  private segment size (1), preloaded kernarg dwords; then, from SGPR
  ``user_sgpr_count``: workgroup id x, y, z, workgroup info, private segment
  wave offset -- each only if enabled in the kernel descriptor;
* v0 = work-item ids packed 10 bits each (x | y << 10 | z << 20), as on
  gfx90a/gfx942; EXEC = the lanes that hold work items.

Workgroups run in sets of up to ``LOCKSTEP_WAVES`` waves (consecutive workgroups):
while the waves of a set are at the same instruction they run in lockstep
(:mod:`asmevo.emu.lockstep`), otherwise round-robin between ``s_barrier`` s.
With ``LOCKSTEP = False`` workgroups run one after another, their waves
round-robin.  Both give the same results for kernels whose workgroups do not
communicate; everything is deterministic.
"""

from __future__ import annotations

import gc
import operator
import struct
import time
from dataclasses import dataclass, field

import numpy as np

from ..errors import AsmevoError
from .executor import BARRIER, ENDPGM, Program
from .memory import EmuError, GlobalMemory, ScratchMemory
from .state import EXEC, NUM_SGPR_SLOTS, Wave, Workgroup, lane_mask

# .amdhsa_* directive -> KernelDescriptor attribute
_DIRECTIVE_FIELDS = {
    ".amdhsa_group_segment_fixed_size": "group_segment_fixed_size",
    ".amdhsa_private_segment_fixed_size": "private_segment_fixed_size",
    ".amdhsa_kernarg_size": "kernarg_size",
    ".amdhsa_user_sgpr_count": "user_sgpr_count",
    ".amdhsa_user_sgpr_private_segment_buffer": "enable_sgpr_private_segment_buffer",
    ".amdhsa_user_sgpr_dispatch_ptr": "enable_sgpr_dispatch_ptr",
    ".amdhsa_user_sgpr_queue_ptr": "enable_sgpr_queue_ptr",
    ".amdhsa_user_sgpr_kernarg_segment_ptr": "enable_sgpr_kernarg_segment_ptr",
    ".amdhsa_user_sgpr_dispatch_id": "enable_sgpr_dispatch_id",
    ".amdhsa_user_sgpr_flat_scratch_init": "enable_sgpr_flat_scratch_init",
    ".amdhsa_user_sgpr_private_segment_size": "enable_sgpr_private_segment_size",
    ".amdhsa_user_sgpr_kernarg_preload_length": "kernarg_preload_spec_length",
    ".amdhsa_user_sgpr_kernarg_preload_offset": "kernarg_preload_spec_offset",
    ".amdhsa_enable_private_segment": "enable_private_segment",
    ".amdhsa_system_sgpr_private_segment_wavefront_offset": "enable_private_segment",
    ".amdhsa_system_sgpr_workgroup_id_x": "enable_sgpr_workgroup_id_x",
    ".amdhsa_system_sgpr_workgroup_id_y": "enable_sgpr_workgroup_id_y",
    ".amdhsa_system_sgpr_workgroup_id_z": "enable_sgpr_workgroup_id_z",
    ".amdhsa_system_sgpr_workgroup_info": "enable_sgpr_workgroup_info",
    ".amdhsa_system_vgpr_workitem_id": "enable_vgpr_workitem_id",
    ".amdhsa_uses_dynamic_stack": "uses_dynamic_stack",
}
#: LDS bytes per workgroup on gfx942 (CDNA3 ISA guide, "Local data share").
LDS_BYTES = 65536
_DEFAULTS = {v: 0 for v in _DIRECTIVE_FIELDS.values()}
_DEFAULTS["enable_sgpr_workgroup_id_x"] = 1


@dataclass
class KernelConfig:
    """What the launcher needs from the kernel descriptor and the metadata."""

    name: str
    fields: dict
    meta: dict

    def f(self, name: str) -> int:
        return int(self.fields.get(name, _DEFAULTS.get(name, 0)) or 0)

    @property
    def args(self) -> list[dict]:
        return list(self.meta.get(".args", []) or [])

    @property
    def explicit_args(self) -> list[dict]:
        return list(self._layout()[0])

    def _layout(self) -> tuple:
        """(explicit arguments, kernarg bytes the arguments and ``.kernarg_segment_size``
        span, [(offset, size, value kind)] of the hidden ones): read from the metadata once
        per config (a launch asks for them in :func:`check_launch` and :func:`build_kernarg`)."""
        lay = self.__dict__.get("_lay")
        if lay is None:
            args = self.args
            exp = tuple(a for a in args
                        if not str(a.get(".value_kind", "")).startswith("hidden_"))
            size = int(self.meta.get(".kernarg_segment_size") or 0)
            end = max([int(a.get(".offset", 0)) + int(a.get(".size", 0)) for a in args] +
                      [size, 0])
            hidden = tuple((int(a.get(".offset", 0)), int(a.get(".size", 0)), vk)
                           for a in args
                           for vk in (str(a.get(".value_kind", "")),) if vk.startswith("hidden_"))
            lay = self.__dict__["_lay"] = (exp, end, hidden)
        return lay


def _meta_dict(m) -> dict | None:
    if m is None:
        return None
    if isinstance(m, dict):
        return m
    raw = getattr(m, "raw", None)
    return raw if isinstance(raw, dict) else None


def kernel_config(module, kernel) -> KernelConfig:
    """Collect descriptor fields and metadata for ``kernel`` from whatever the
    module carries: ``Kernel.descriptor``/``Kernel.metadata`` (code objects), the
    code object's tables, or ``.amdhsa_kernel`` + ``.amdgpu_metadata`` text.

    Raises:
        AsmevoError: no metadata for the kernel (the launch needs ``.args``).
    """
    fields: dict = {}
    meta = _meta_dict(getattr(kernel, "metadata", None))
    desc = getattr(kernel, "descriptor", None)
    co = getattr(module, "code_object", None)
    if co is not None:
        for k in getattr(co, "kernels", []) or []:
            if getattr(k, "name", None) == kernel.name:
                desc = desc or getattr(k, "descriptor", None)
                meta = meta or _meta_dict(getattr(k, "metadata", None))
        if meta is None and getattr(co, "metadata", None) is not None:
            km = co.metadata.kernel(kernel.name)
            meta = _meta_dict(km)
    if desc is not None:
        for attr in set(_DIRECTIVE_FIELDS.values()):
            if hasattr(desc, attr):
                fields[attr] = getattr(desc, attr)
    else:
        ak = module.amdhsa_kernel(kernel.name) if hasattr(module, "amdhsa_kernel") else None
        if ak is not None:
            for d, v in ak.fields.items():
                if d in _DIRECTIVE_FIELDS:
                    try:
                        fields[_DIRECTIVE_FIELDS[d]] = int(str(v), 0)
                    except ValueError:
                        pass
    if meta is None:
        meta = _metadata_from_text(module, kernel.name)
    if meta is None:
        raise AsmevoError(f"kernel {kernel.name}: no AMDGPU metadata (.amdgpu_metadata / "
                          "NT_AMDGPU_METADATA) to describe its arguments", file=module.source)
    if "user_sgpr_count" not in fields:
        n = 0
        for a, c in (("enable_sgpr_private_segment_buffer", 4), ("enable_sgpr_dispatch_ptr", 2),
                     ("enable_sgpr_queue_ptr", 2), ("enable_sgpr_kernarg_segment_ptr", 2),
                     ("enable_sgpr_dispatch_id", 2), ("enable_sgpr_flat_scratch_init", 2),
                     ("enable_sgpr_private_segment_size", 1)):
            n += c * int(fields.get(a, 0))
        fields["user_sgpr_count"] = n + int(fields.get("kernarg_preload_spec_length", 0))
    if "group_segment_fixed_size" not in fields and meta.get(".group_segment_fixed_size") is not None:
        fields["group_segment_fixed_size"] = meta[".group_segment_fixed_size"]
    if "private_segment_fixed_size" not in fields and meta.get(".private_segment_fixed_size") is not None:
        fields["private_segment_fixed_size"] = meta[".private_segment_fixed_size"]
    return KernelConfig(kernel.name, fields, meta)


def _metadata_from_text(module, name):
    """The ``amdhsa.kernels`` entry of ``name`` from the module's ``.amdgpu_metadata``
    block (read with llvm-mc's scalar typing by :mod:`asmevo.frontend.metadata`)."""
    from ..frontend.metadata import read_yaml_metadata
    from ..ir.module import MetadataBlock
    for it in module.items:
        if isinstance(it, MetadataBlock):
            doc = read_yaml_metadata(it.text, file=module.source, line=it.line)
            for k in doc.get("amdhsa.kernels", []) or []:
                if isinstance(k, dict) and k.get(".name") == name:
                    return k
    return None


@dataclass
class Arg:
    """One explicit kernel argument of a launch.

    ``kind`` is ``"buffer"`` (``data``: a numpy array, copied into emulated
    memory) or ``"scalar"`` (``value`` with numpy ``dtype``).  ``role``: ``in``,
    ``out`` or ``inout`` (outputs are read back; writes to ``in`` buffers are
    recorded in :attr:`RunResult.writes_outside`)."""

    name: str
    kind: str
    dtype: str
    data: np.ndarray | None = None
    value: float | int | None = None
    role: str = "in"


@dataclass
class Launch:
    """Grid (workgroups per dimension), block (work items per dimension), arguments.

    ``dynamic_lds``: bytes of dynamically allocated LDS added to the kernel's
    ``group_segment_fixed_size``; ``None`` gives the rest of the 64 KiB.
    ``max_instructions_per_wave``: a wave executing more instructions stops the run
    with an EmuError ("runaway loop")."""

    block: tuple
    grid: tuple
    args: list
    dynamic_lds: int | None = None
    max_instructions_per_wave: int = 10_000_000


@dataclass
class RunResult:
    """Result of :func:`run_kernel`.

    Attributes:
        outputs: final contents of every buffer argument (name -> array of its dtype).
        writes_outside: ``(region, byte offset, size)`` of stores into buffers that
            are not ``out``/``inout`` (inputs, kernarg segment, dispatch packet);
            at most 16 entries per store instruction.
        waves, instructions: waves run and wave-instructions executed.
        lane_instructions: the sum over executed instructions of popcount(EXEC) at issue
            (scalar instructions included): the lanes that did work.
        seconds: wall time of the run.
    """

    outputs: dict
    writes_outside: list
    waves: int = 0
    instructions: int = 0
    lane_instructions: int = 0
    seconds: float = 0.0
    kernarg: bytes = b""
    buffer_addresses: dict = field(default_factory=dict)


def _hidden_value(kind: str, launch: Launch) -> int | None:
    return _hidden_table(launch).get(kind)


def _hidden_table(launch: Launch) -> dict:
    """Value of each hidden argument kind the emulator fills (see :func:`build_kernarg`)."""
    bx, by, bz = launch.block
    gx, gy, gz = launch.grid
    return {
        "hidden_block_count_x": gx, "hidden_block_count_y": gy, "hidden_block_count_z": gz,
        "hidden_group_size_x": bx, "hidden_group_size_y": by, "hidden_group_size_z": bz,
        "hidden_remainder_x": 0, "hidden_remainder_y": 0, "hidden_remainder_z": 0,
        "hidden_global_offset_x": 0, "hidden_global_offset_y": 0, "hidden_global_offset_z": 0,
        "hidden_grid_dims": 3 if gz * bz > 1 else (2 if gy * by > 1 else 1),
        "hidden_dynamic_lds_size": launch.dynamic_lds,
    }


#: element bytes of the scalar pointee types the metadata's ``.type_name`` spells (OpenCL C /
#: HIP names, AMDGPUUsage "Code Object V3+ Metadata"); vector, struct, void and char pointers
#: are not checked (a harness may view them with any dtype)
_POINTEE_BYTES = {"float": 4, "double": 8, "half": 2, "_Float16": 2, "__fp16": 2, "int": 4,
                  "uint": 4, "unsigned int": 4, "long": 8, "ulong": 8, "unsigned long": 8,
                  "short": 2, "ushort": 2, "unsigned short": 2, "int32_t": 4, "uint32_t": 4,
                  "int64_t": 8, "uint64_t": 8, "int16_t": 2, "uint16_t": 2}


_POINTEE_CACHE: dict = {}


def _pointee_bytes(type_name) -> int | None:
    """Element size of a ``float*``-style ``.type_name``, or None when it says nothing."""
    if not isinstance(type_name, str):
        return None
    hit = _POINTEE_CACHE.get(type_name, _POINTEE_CACHE)
    if hit is not _POINTEE_CACHE:
        return hit
    out = None
    if type_name.rstrip().endswith("*"):
        base = type_name.rstrip()[:-1]
        words = [w for w in base.replace("*", " ").split() if w not in ("const", "volatile",
                                                                        "restrict", "__restrict")]
        out = _POINTEE_BYTES.get(" ".join(words))
    if len(_POINTEE_CACHE) < 1024:
        _POINTEE_CACHE[type_name] = out
    return out


def describe_arg(m: dict) -> str:
    """A metadata argument as a message names it: its ``.name``, else (a code object built
    without argument names) its value kind and kernarg byte offset."""
    if m.get(".name"):
        return str(m[".name"])
    return f"{m.get('.value_kind', 'argument')} at kernarg offset {int(m.get('.offset', 0))}"


def check_launch(cfg: KernelConfig, launch: Launch) -> None:
    """Check ``launch`` against the kernel's metadata without placing anything: the launch
    shape, ``.reqd_workgroup_size``, one harness argument per explicit kernel argument (in
    order), buffer against pointer, element and scalar sizes.  What :func:`prepare_launch`
    checks before it places a buffer; tools call it before any work
    (:func:`asmevo.emu.harness.checked_entry` with ``fits=True``).

    Raises:
        AsmevoError: the first mismatch, naming the kernel, the argument and what the
            metadata expects (no file: the caller names the harness).
    """
    block = tuple(int(x) for x in launch.block) + (1,) * (3 - len(launch.block))
    grid = tuple(int(x) for x in launch.grid) + (1,) * (3 - len(launch.grid))
    if min(block) < 1 or min(grid) < 1 or block[0] * block[1] * block[2] > 1024:
        raise AsmevoError(f"bad launch shape block={list(block)} grid={list(grid)}; expected "
                          "positive sizes and at most 1024 work items per workgroup")
    reqd = cfg.meta.get(".reqd_workgroup_size")
    if reqd and tuple(reqd) != block:
        raise AsmevoError(f"kernel {cfg.name} requires workgroup size {tuple(reqd)}, the launch "
                          f"gives {block}; expected \"block\": {list(reqd)}")
    exp = cfg._layout()[0]
    if len(exp) != len(launch.args):
        given = ", ".join(str(a.name) for a in launch.args)
        raise AsmevoError(f"kernel {cfg.name} has {len(exp)} explicit arguments "
                          f"({', '.join(describe_arg(a) for a in exp)}); the harness gives "
                          f"{len(launch.args)} ({given or 'none'}); expected one harness argument "
                          "per kernel argument, in order")
    for i, (m, a) in enumerate(zip(exp, launch.args)):
        sz = int(m.get(".size", 0))
        vk = m.get(".value_kind", "")
        if a.kind == "buffer":
            if vk not in ("global_buffer", "dynamic_shared_pointer") and sz != 8:
                raise AsmevoError(f"{_what(cfg, i, a, m)} is a buffer in the harness but '{vk}' "
                                  f"of {sz} bytes in the metadata")
            elem = _pointee_bytes(m.get(".type_name"))
            if elem is not None and a.dtype and _itemsize(a.dtype) != elem:
                raise AsmevoError(f"{_what(cfg, i, a, m)} is {a.dtype} ({_itemsize(a.dtype)}-byte "
                                  f"elements) in the harness but '{m.get('.type_name')}' "
                                  f"({elem}-byte elements) in the metadata")
        else:
            n = _itemsize(a.dtype)
            if n != sz:
                raise AsmevoError(f"{_what(cfg, i, a, m)} is a scalar of dtype {a.dtype} ({n} "
                                  f"bytes) in the harness but {sz} bytes in the metadata")


def _what(cfg: KernelConfig, i: int, a: Arg, m: dict) -> str:
    """How a :func:`check_launch` message names argument ``i`` (built only for a message)."""
    return f"kernel {cfg.name}: argument #{i} ({a.name} in the harness, " \
           f"{describe_arg(m)} in the metadata)"


_DTYPES: dict = {}     # dtype spelling -> numpy dtype (launches repeat a few spellings)


def _dtype(spelling) -> np.dtype:
    """``np.dtype(spelling)``, cached for hashable spellings (a bad one raises as numpy does)."""
    try:
        return _DTYPES[spelling]
    except KeyError:
        dt = _DTYPES[spelling] = np.dtype(spelling)
        if len(_DTYPES) > 256:
            _DTYPES.clear()
        return dt
    except TypeError:   # (not hashable)
        return np.dtype(spelling)


def _itemsize(spelling) -> int:
    return _dtype(spelling).itemsize


def build_kernarg(cfg: KernelConfig, launch: Launch, addresses: dict) -> bytes:
    """Kernarg segment bytes (see module docstring).

    The launch is assumed checked against the metadata (:func:`check_launch`, which
    :func:`prepare_launch` calls first).
    """
    exp, end, hidden_args = cfg._layout()
    # rounded up to 256 bytes plus 256 of slack: wide s_load_dwordx8/x16 of the last
    # arguments may read past the segment's end, as on hardware (zeros here)
    buf = bytearray((end + 255) // 256 * 256 + 256)
    for m, a in zip(exp, launch.args):
        off, sz = int(m.get(".offset", 0)), int(m.get(".size", 0))
        if a.kind == "buffer":
            struct.pack_into("<Q", buf, off, addresses[a.name])
        else:
            buf[off:off + sz] = np.array([a.value]).astype(_dtype(a.dtype)).tobytes()
    hidden = _hidden_table(launch) if hidden_args else None
    for off, sz, vk in hidden_args:
        v = hidden.get(vk)
        if v is None:
            continue  # pointers and ids the emulator does not provide stay 0 (null)
        buf[off:off + sz] = int(v).to_bytes(sz, "little")
    return bytes(buf)


def dispatch_packet(launch: Launch, cfg: KernelConfig, kernarg_addr: int) -> bytes:
    """hsa_kernel_dispatch_packet_t (64 bytes)."""
    bx, by, bz = launch.block
    gx, gy, gz = launch.grid
    dims = 3 if gz * bz > 1 else (2 if gy * by > 1 else 1)
    return struct.pack("<HHHHHHIIIIIQQQQ", 2, dims, bx, by, bz, 0, gx * bx, gy * by, gz * bz,
                       cfg.f("private_segment_fixed_size"),
                       cfg.f("group_segment_fixed_size") + launch.dynamic_lds, 0, kernarg_addr, 0, 0)


@dataclass
class PreparedLaunch:
    """What a device needs to launch a kernel, built by :func:`prepare_launch`.

    Attributes:
        kernel: the IR kernel; cfg: its :class:`KernelConfig`.
        block, grid: work items per workgroup and workgroups per dimension (3 each).
        dynamic_lds: bytes of dynamic LDS (added to ``group_segment_fixed_size``).
        addresses: buffer argument name -> address given by the device's ``place``.
        kernarg: the kernarg segment bytes (explicit and hidden arguments).
    """

    kernel: object
    cfg: KernelConfig
    block: tuple
    grid: tuple
    dynamic_lds: int
    addresses: dict
    kernarg: bytes


def prepare_launch(module, kernel_name: str, launch: Launch, place) -> PreparedLaunch:
    """The one launch builder every device uses (the emulator and HIP see identical launches):
    checks the launch shape against the kernel, normalises ``launch.block``/``grid`` to 3
    dimensions and ``launch.dynamic_lds`` (None: the rest of the 64 KiB LDS), places every
    buffer argument in argument order with ``place(name, ndarray) -> address`` and builds the
    kernarg segment (:func:`build_kernarg`) with those addresses.

    Raises:
        AsmevoError: unknown kernel, bad launch shape, launch/metadata mismatch.
    """
    try:
        kernel = module.kernel(kernel_name)
    except KeyError as e:
        raise AsmevoError(str(e.args[0]), file=module.source) from None
    cfg = kernel_config(module, kernel)
    block = tuple(int(x) for x in launch.block) + (1,) * (3 - len(launch.block))
    grid = tuple(int(x) for x in launch.grid) + (1,) * (3 - len(launch.grid))
    launch.block, launch.grid = block, grid
    if launch.dynamic_lds is None:
        # Dynamic LDS is a launch parameter the corpus schema does not carry (Triton passes
        # its kernels' `shared` size at launch): default to the rest of the 64 KiB LDS.
        launch.dynamic_lds = max(0, LDS_BYTES - cfg.f("group_segment_fixed_size"))
    check_launch(cfg, launch)            # before any buffer is placed
    addresses = {}
    for a in launch.args:
        if a.kind == "buffer":
            addresses[a.name] = place(a.name, np.ascontiguousarray(a.data))
    kernarg = build_kernarg(cfg, launch, addresses)
    return PreparedLaunch(kernel, cfg, block, grid, int(launch.dynamic_lds), addresses, kernarg)


def run_kernel(module, kernel_name: str, launch: Launch, trace=None) -> RunResult:
    """Run ``kernel_name`` of ``module`` (an asmevo Module) on ``launch``.

    ``trace``: an :class:`asmevo.emu.trace.Tracer` to record what every wave executes
    (the run then goes one wave at a time, without lockstep); None costs nothing.

    Raises:
        AsmevoError: unknown kernel, launch/metadata mismatch.
        EmuError: a fault during emulation (bad address, instruction without
            semantics, runaway loop), naming kernel, pc, instruction and lane.
    """
    mem = GlobalMemory()
    roles = {a.name: a.role for a in launch.args if a.kind == "buffer"}

    def place(name, data):
        addr = mem.map(name, data)
        mem.regions[-1].watch = roles[name] not in ("out", "inout")   # stores there are reported
        return addr
    prep = prepare_launch(module, kernel_name, launch, place)
    kernel, cfg, block, grid = prep.kernel, prep.cfg, prep.block, prep.grid
    addresses, kernarg = prep.addresses, prep.kernarg
    ka_addr = mem.map("__kernarg", kernarg)
    mem.regions[-1].watch = True
    dp_addr = mem.map("__dispatch_packet", dispatch_packet(launch, cfg, ka_addr))
    mem.regions[-1].watch = True
    q_addr = mem.map("__queue", 256)
    mem.regions[-1].watch = True
    prog = _program(kernel, mem)
    lds_bytes = cfg.f("group_segment_fixed_size") + launch.dynamic_lds
    priv = cfg.f("private_segment_fixed_size")
    nthreads = block[0] * block[1] * block[2]
    nwaves = (nthreads + 63) // 64
    packed = _packed_ids(block)
    t0 = time.perf_counter()
    total = 0
    waves_run = 0
    counters = [0, 0, 0]
    gc_was = gc.isenabled()
    gc.disable()   # the run allocates many short-lived arrays and builds no cycles
    try:
        if trace is not None:
            trace.begin(prog, grid, block)
        _run_all(prog, cfg, launch, grid, nwaves, lds_bytes, priv, kernarg, ka_addr, dp_addr,
                 q_addr, packed, counters, trace)
    finally:
        if gc_was:
            gc.enable()
    total, waves_run, lanes = counters
    dt = time.perf_counter() - t0
    outputs = {}
    for a in launch.args:
        if a.kind == "buffer":
            r = mem.region(a.name)
            n = np.ascontiguousarray(a.data).nbytes
            outputs[a.name] = r.data[:n].view(_dtype(a.dtype)).copy() if n else \
                np.zeros(0, _dtype(a.dtype))
    return RunResult(outputs, list(mem.writes_outside), waves_run, total, lanes, dt, kernarg,
                     addresses)


_PACKED: dict = {}


def _packed_ids(block) -> np.ndarray:
    """The work-item ids of a workgroup of shape ``block``, packed as v0 holds them (x | y << 10
    | z << 20), uint32; cached, read-only."""
    p = _PACKED.get(block)
    if p is None:
        tid = np.arange(block[0] * block[1] * block[2])
        tx, ty, tz = tid % block[0], (tid // block[0]) % block[1], tid // (block[0] * block[1])
        p = (tx | (ty << 10) | (tz << 20)).astype(np.uint32)
        p.setflags(write=False)
        if len(_PACKED) >= 64:
            _PACKED.clear()
        _PACKED[block] = p
    return p


def _run_all(prog, cfg, launch, grid, nwaves, lds_bytes, priv, kernarg, ka_addr, dp_addr, q_addr,
             packed, counters, trace=None):
    # with LOCKSTEP, the waves of up to LOCKSTEP_WAVES waves' worth of consecutive
    # workgroups run together (asmevo.emu.lockstep); each wave keeps its own workgroup/LDS
    chunk = max(1, LOCKSTEP_WAVES // max(nwaves, 1)) if LOCKSTEP else 1
    layout = _sgpr_layout(cfg, kernarg, ka_addr, dp_addr, q_addr, priv)
    with np.errstate(all="ignore"):
        ids = [(gx, gy, gz) for gz in range(grid[2]) for gy in range(grid[1])
               for gx in range(grid[0])]
        for part, traced in _parts(ids, chunk, trace):
            lock = LOCKSTEP and not traced      # traced workgroups run one wave at a time
            waves = []
            nw = len(part) * nwaves
            if lock and nw > 1:     # register files shared by the lockstep set
                nvr, nar = prog.register_rows()
                V = np.zeros((nvr, nw, 64), np.uint32)
                A = np.zeros((nar, nw, 64), np.uint32)
                S = np.zeros((nw, NUM_SGPR_SLOTS), np.uint32)
            seg = (max(lds_bytes, 0) + 3) // 4 * 4
            lds_all = np.zeros(seg * len(part), np.uint8) if lock and nw > 1 else None
            for g, wgid in enumerate(part):
                wg = Workgroup(wgid, lds_bytes,
                               lds_all[g * seg:(g + 1) * seg] if lds_all is not None else None)
                for w in range(nwaves):
                    k = len(waves)
                    regs = (V[:, k], A[:, k], S[k]) if lock and nw > 1 else None
                    wv = Wave(wg, w, ScratchMemory(priv) if priv > 0 else None, regs)
                    if regs is None:
                        _start_wave(wv, layout, wgid, packed[w * 64:(w + 1) * 64])
                    waves.append(wv)
            if lock and nw > 1:
                _start_set(waves, V, S, layout, part, nwaves, packed)
            if traced:
                trace.run_group(prog, waves, launch.max_instructions_per_wave)
            elif lock and nw > 1:
                from .lockstep import lds_layout
                lds = lds_layout(lds_all, seg, len(part), nwaves, max(lds_bytes, 0))
                _run_group(prog, waves, launch.max_instructions_per_wave, (V, A, S, lds))
            else:
                _run_group(prog, waves, launch.max_instructions_per_wave)
            counters[0] += sum(wv.count for wv in waves)
            counters[1] += len(waves)
            counters[2] += sum(wv.lanes for wv in waves)


def _parts(ids, chunk, trace):
    """``(workgroup ids, traced)`` in launch order: the workgroups ``trace`` wants (an
    :class:`asmevo.emu.trace.Tracer`) one at a time, the others in sets of up to ``chunk``."""
    if trace is None:
        for c in range(0, len(ids), chunk):
            yield ids[c:c + chunk], False
        return
    cur = []
    for wgid in ids:
        if trace.wants(wgid):
            if cur:
                yield cur, False
                cur = []
            yield [wgid], True
        else:
            cur.append(wgid)
            if len(cur) == chunk:
                yield cur, False
                cur = []
    if cur:
        yield cur, False


_PROGRAMS: "OrderedDict" = None  # kernel shape -> compiled Program (LRU)
_PROGRAM_CACHE_SIZE = 16
#: id(kernel) -> (kernel, (its name, its blocks' labels and instruction objects), Program): the last
#: Program of a kernel object, reused without rebuilding the structural key while the
#: kernel holds the same instruction objects (instructions are values: asmevo.ir.instruction)
_BY_ID: dict = {}


def _program(kernel, mem) -> Program:
    """The compiled Program of ``kernel`` bound to ``mem``; reused across runs while the
    kernel's blocks, instructions (by value) and addresses are unchanged (differential
    testing runs one kernel many times)."""
    global _PROGRAMS
    from collections import OrderedDict
    if _PROGRAMS is None:
        _PROGRAMS = OrderedDict()
    blocks = kernel.blocks
    snap = (kernel.name, tuple((b.label, len(b.instructions)) for b in blocks),
            [i for b in blocks for i in b.instructions])
    seen = _BY_ID.get(id(kernel))
    if seen is not None and seen[0] is kernel and seen[1][:2] == snap[:2] and \
            all(map(operator.is_, seen[1][2], snap[2])):
        prog = seen[2]
        prog.kernel = kernel
        prog.ctx.mem = mem
        return prog
    key = (kernel.name, tuple((b.label, tuple((i.key(), i.address) for i in b.instructions))
                              for b in kernel.blocks))
    try:
        hash(key)
    except TypeError:   # an operand that is not hashable: compile afresh
        return Program(kernel, mem)
    prog = _PROGRAMS.get(key)
    if prog is None:
        prog = Program(kernel, mem)
        _PROGRAMS[key] = prog
        if len(_PROGRAMS) > _PROGRAM_CACHE_SIZE:
            _PROGRAMS.popitem(last=False)
    else:
        _PROGRAMS.move_to_end(key)
        prog.kernel = kernel
        prog.ctx.mem = mem
    if len(_BY_ID) >= _PROGRAM_CACHE_SIZE:
        _BY_ID.clear()
    _BY_ID[id(kernel)] = (kernel, snap, prog)
    return prog


_LAYOUT_CACHE: dict = {}


def _sgpr_layout(cfg, kernarg, ka_addr, dp_addr, q_addr, priv):
    """(initial SGPRs of every wave (uint32 (NUM_SGPR_SLOTS,)), [(SGPR, axis) of the
    workgroup ids]): computed once per launch shape (see :func:`_init_wave`); read-only."""
    try:
        key = (tuple(sorted(cfg.fields.items())), kernarg, ka_addr, dp_addr, q_addr, priv)
        hit = _LAYOUT_CACHE.get(key)
    except TypeError:   # a descriptor field that is not hashable
        key = hit = None
    if hit is not None:
        return hit

    class _W:
        pass
    probe = _W()
    probe.s = np.zeros(NUM_SGPR_SLOTS, np.uint32)
    probe.v = np.zeros((1, 64), np.uint32)
    probe.set_exec = lambda mask: None
    _init_wave(probe, cfg, kernarg, ka_addr, dp_addr, q_addr, (0, 0, 0), (), priv)
    base = probe.s.copy()
    _init_wave(probe, cfg, kernarg, ka_addr, dp_addr, q_addr, (1, 2, 3), (), priv)
    ids = [(int(i), int(probe.s[i]) - 1) for i in np.flatnonzero(probe.s != base)]
    base.setflags(write=False)
    out = (base, ids)
    if key is not None:
        if len(_LAYOUT_CACHE) >= 64:
            _LAYOUT_CACHE.clear()
        _LAYOUT_CACHE[key] = out
    return out


def _start_wave(wv, layout, wgid, ids):
    """Initial state of a wave: SGPRs from ``layout`` (:func:`_sgpr_layout`) with its
    workgroup id ``wgid``, v0 = the work-item ``ids``, EXEC = their lanes."""
    base, wg = layout
    s = wv.s
    s[:] = base
    for i, axis in wg:
        s[i] = wgid[axis]
    nl = len(ids)
    wv.v[0, :nl] = ids
    e = (1 << nl) - 1
    s[EXEC] = e & 0xFFFFFFFF
    s[EXEC + 1] = e >> 32
    wv.sync_exec()


def _start_set(waves, V, S, layout, part, nwaves, packed):
    """:func:`_start_wave` for the waves of a lockstep set at once (their registers are
    rows of ``V`` / ``S``; ``part``: the workgroup ids, ``nwaves`` waves each)."""
    base, wg = layout
    S[:] = base
    for i, axis in wg:
        S[:, i] = np.repeat(np.array([g[axis] for g in part], np.uint32), nwaves)
    ids, ew, es = _set_start(packed.tobytes(), nwaves)
    nw = S.shape[0]     # (nwaves, ...) blocks repeated over the workgroups of the set
    V[0].reshape(nw // nwaves, nwaves, 64)[:] = ids
    S.reshape(nw // nwaves, nwaves, S.shape[1])[:, :, EXEC:EXEC + 2] = ew
    k = 0
    for wv in waves:
        wv.exec_mask, wv.exec_all, wv.exec_any, wv.exec_n = es[k]
        k = k + 1 if k + 1 < nwaves else 0


_STARTS: dict = {}


def _set_start(packed: bytes, nwaves: int):
    """(v0 of the waves of one workgroup (nwaves, 64), their EXEC words (nwaves, 2), their
    cached EXEC (mask, all, any, popcount) as :meth:`Wave.sync_exec` sets them) for the packed
    work-item ids ``packed`` (uint32 bytes); cached, read-only."""
    key = (packed, nwaves)
    hit = _STARTS.get(key)
    if hit is None:
        ids = np.zeros(nwaves * 64, np.uint32)
        p = np.frombuffer(packed, np.uint32)
        n = len(p)
        ids[:n] = p
        es = [(1 << max(0, min(64, n - 64 * w))) - 1 for w in range(nwaves)]
        ew = np.array(es, np.uint64).view(np.uint32).reshape(nwaves, 2)
        hit = (ids.reshape(nwaves, 64), ew,
               [(lane_mask(e), e == 0xFFFFFFFFFFFFFFFF, e != 0, e.bit_count()) for e in es])
        if len(_STARTS) >= 64:
            _STARTS.clear()
        _STARTS[key] = hit
    return hit


def _init_wave(wv, cfg, kernarg, ka_addr, dp_addr, q_addr, wgid, ids, priv):
    s = wv.s
    i = 0

    def put64(v):
        nonlocal i
        s[i] = v & 0xFFFFFFFF
        s[i + 1] = v >> 32
        i += 2
    if cfg.f("enable_sgpr_private_segment_buffer"):
        # V# of the private segment: base 0 (scratch is per-lane in the emulator)
        s[i:i + 4] = 0
        i += 4
    if cfg.f("enable_sgpr_dispatch_ptr"):
        put64(dp_addr)
    if cfg.f("enable_sgpr_queue_ptr"):
        put64(q_addr)
    if cfg.f("enable_sgpr_kernarg_segment_ptr"):
        put64(ka_addr)
    if cfg.f("enable_sgpr_dispatch_id"):
        put64(0)
    if cfg.f("enable_sgpr_flat_scratch_init"):
        put64(0)
    if cfg.f("enable_sgpr_private_segment_size"):
        s[i] = priv
        i += 1
    n = cfg.f("kernarg_preload_spec_length")
    if n:
        off = cfg.f("kernarg_preload_spec_offset") * 4
        words = np.frombuffer(kernarg[off:off + 4 * n].ljust(4 * n, b"\0"), "<u4")
        s[i:i + n] = words
        i += n
    j = cfg.f("user_sgpr_count") if cfg.f("user_sgpr_count") else i
    for axis, en in enumerate(("enable_sgpr_workgroup_id_x", "enable_sgpr_workgroup_id_y",
                               "enable_sgpr_workgroup_id_z")):
        if cfg.f(en):
            s[j] = wgid[axis]
            j += 1
    if cfg.f("enable_sgpr_workgroup_info"):
        s[j] = 0
        j += 1
    if cfg.f("enable_private_segment"):
        s[j] = 0  # private segment wave offset: scratch is per-lane storage here
        j += 1
    nl = len(ids)
    wv.v[0, :nl] = ids
    mask = np.zeros(64, bool)
    mask[:nl] = True
    wv.set_exec(mask)


#: run the waves of a workgroup in lockstep where they execute the same code
#: (:mod:`asmevo.emu.lockstep`); False: one wave at a time
LOCKSTEP = True
#: waves run in one lockstep set (several workgroups when they are small); barriers then
#: release when every wave of the set has reached one, which gives the same results as
#: per-workgroup release because every wave runs to its next barrier in each round
LOCKSTEP_WAVES = 64


def _one_round(prog, live, limit):
    """Run each wave of ``live`` until s_barrier / s_endpgm; the waves at the barrier."""
    at_barrier = []
    for wv in live:
        r = prog.run_wave(wv, limit)
        if r == BARRIER:
            at_barrier.append(wv)
        elif r != ENDPGM:
            raise EmuError(f"kernel {prog.kernel.name}: wave stopped unexpectedly")
    return at_barrier


def _run_group(prog, waves, limit, shared=None):
    """Run the waves of one workgroup: in lockstep while they share a pc, else round-robin
    between barriers.  ``shared``: the lockstep set's register files and LDS layout
    (:func:`asmevo.emu.lockstep.run_lockstep`) when :func:`_run_all` built them."""
    live = list(waves)
    if LOCKSTEP and len(live) > 1:
        from .lockstep import run_lockstep
        run_lockstep(prog, live, limit, _one_round, shared)
        return
    while live:
        live = _one_round(prog, live, limit)
