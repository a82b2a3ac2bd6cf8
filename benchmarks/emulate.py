"""Emulator throughput: lane- and wave-instructions per second, against a reference build.

Usage: python benchmarks/emulate.py [--kernels A,B,...] [--repeat R] [--ref DIR] [--modes]
                                    [--corpus DIR]

A *lane-instruction* is one executed instruction times the lanes active when it issued
(popcount(EXEC), scalar instructions included); a *wave-instruction* is one instruction
issued by one wave.  Both counts come from this checkout's emulator (the reference may
count lanes differently): the same work is divided by each build's time.

``--ref DIR`` (default ``$ASMEVO_REF``): the root of another copy of asmevo (e.g. the
previous commit: ``mkdir /tmp/asmevo_ref && git archive HEAD~1 asmevo isa_specs | tar -x -C
/tmp/asmevo_ref``).  Each build runs in its own worker process; runs alternate between the
two after a warm-up, and each figure is the median of R runs, so both columns of a row
see the same machine load.  ``--modes`` adds one-wave-at-a-time mode (``LOCKSTEP =
False``) of this checkout as a third column.

Kernels: corpus entries (their manifest launch and inputs, seed 0; Triton ones by name too)
and :data:`VARIANTS`
(corpus kernels on larger launches: 65,536-element vadd in 256-item workgroups, a
1,024-element-per-workgroup LDS-tree reduction, a 256-step dependent FMA loop).  The
default set covers the kinds of work of issue 16: an elementwise kernel (vadd_f32), LDS-tree
reductions with barriers (row_sum, row_max, softmax_row, layernorm, scan_inclusive_i32),
LDS tiles with ds_read2 (sgemm_tiled -O3), a long dependent FMA loop (sgemm_tiled_O0),
cross-lane (wave_reduce_dpp), atomics (histogram_atomic).  Timing covers ``run_kernel``
(launch set-up included) in CPU time of the worker process (time.process_time: steadier
than wall time on a shared machine); loading and closure compilation happen in the warm-up
(:data:`WARMUP` rounds: asmevo compiles a straight run of instructions into one function
when a lockstep group comes to it the second time, :mod:`asmevo.emu.lockstep_block`).
Each timed run follows the other worker's run, so it starts with cold caches: a kernel of a
few thousand instructions then takes about twice its time in a loop of back-to-back runs
(both emulators pay this), and with the load average above the CPU count the ratio of such
a kernel moves by a third from one invocation to the next.  ``cachegrind``'s instruction
count of a loop of runs is the steady figure for comparing two builds of asmevo.

``--tinygrad DIR`` (default ``$ASMEVO_TINYGRAD``): the root of a checkout of tinygrad's
repository.  Its Python AMD emulator (``test/mockgpu/amd/emu.py``, ``run_asm(...,
arch="cdna")``: wave64, CDNA pcode; not in tinygrad's wheel) becomes a column, run in its own
worker process on the same kernels and inputs, alternating with asmevo after a warm-up.
The adapter (:func:`tinygrad_worker`; only this file, tinygrad's code is imported from DIR)
drives ``run_asm`` with the raw gfx942 code: the kernel's ``.text`` bytes from the code
object, ``COMPUTE_PGM_RSRC2`` from its descriptor with the LDS size of the launch
(``group_segment_fixed_size`` + dynamic LDS, in 512-byte granules, as the packet processor
sets it), ``private_segment_fixed_size`` as scratch, and the user SGPRs (dispatch packet,
kernarg pointer, ...) that the descriptor enables, given as ``user_data``.  Buffers are
numpy arrays whose process addresses go into the kernarg segment (asmevo's own
:func:`~asmevo.emu.launch.prepare_launch` builds it): tinygrad's emulator maps global memory
1:1 onto the process' address space.  Each run starts from fresh copies of the inputs, and
its outputs are compared with asmevo's (column ``tg ok``).  Lane- and wave-instruction
counts are asmevo's (the same work), divided by each emulator's CPU time.  tinygrad
compiles every instruction through its UOp pipeline and its CPU backend, which calls
``clang``: the worker puts the LLVM bin directory asmevo uses (``llvm-mc``'s) on PATH, so
LLVM's clang is found.  Python packages: tinygrad itself needs none beyond the standard
library and numpy.  (``git --git-dir=MIRROR worktree add /tmp/tinygrad HEAD``, or
``git archive HEAD | tar -x -C /tmp/tinygrad``, gives the checkout.)  Seen with tinygrad
a9069c177a (2026-12-01): it segfaults on softmax_row and layernorm (in a ``ds_read_b32``
after ``v_mov_b32 v4, 0``; the worker is restarted and the row says ``tg failed``), and its
outputs differ from asmevo's on sgemm_tiled_O0 and wave_reduce_dpp, where tinygrad's emulator
is the wrong one (asmevo's outputs equal the numpy reference; traced instruction by
instruction in both emulators, pinned by tests/emu/test_inplace_dpp_private_scratch.py).
wave_reduce_dpp (all 16 sums 1.4-1.6x too large): tinygrad runs ``v_add_u32_dpp v1, v1, v1
quad_perm:[1,0,3,2] ... bound_ctrl:1`` (vdst = vsrc0) as a loop over lanes that sees its own
writes, so lane 1 adds lane 0's new value (0x3f + 0x94 = 0xd3 instead of 0x3f + 0x55 = 0x94);
with the destination renamed (``v_add_u32_dpp v6, v1, v1`` + ``v_mov_b32 v1, v6``) it gives
asmevo's sums.  sgemm_tiled_O0 (all 1,024 outputs: 768 zero, the other 256 in rows 12-15 and
28-31 wrong; no NaN or denormal anywhere): tinygrad gives all waves of a dispatch one 64-lane
scratch buffer (``scratch_buf`` in ``run_asm``; address lane * stride + offset, no wave term),
so after the first ``s_barrier`` wave 0's ``scratch_load_dword v1, off, s33 offset:40`` reads
wave 3's spilled ty (12, not 0); with a scratch buffer per wave it gives asmevo's C bit for bit
(DAZ/FTZ plays no part).  Seen on the way, not affecting outputs here: tinygrad leaves the SDST
of ``v_mad_u64_u32`` unwritten (its pcode's ``D1.u1`` carry has no store), and it writes
``old vdst op vsrc1`` in DPP lanes of disabled rows/banks or, without bound_ctrl, with an
out-of-row source, which the ISA leaves unwritten.  Every other default kernel gives asmevo's
outputs bit for bit.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
#: untimed rounds before the timed ones (every column runs each kernel this often first)
WARMUP = 2
#: corpus kernels on larger launches (issue 16's kernel kinds): base entry, grid, and the
#: arguments' new ``count`` (buffers) or ``value`` (scalars)
VARIANTS = {
    # elementwise over 65,536 floats in 256-work-item workgroups
    "vadd_64k": ("vadd_f32", [256, 1, 1], {"a": 65536, "b": 65536, "c": 65536, "n": 65536}),
    # a 1,024-element reduction per workgroup with an LDS tree and barriers
    "row_sum_1k": ("row_sum", [8, 1, 1], {"x": 8 * 1024, "cols": 1024}),
    # a 256-step dependent FMA loop per work item
    "sgemm_naive_k256": ("sgemm_naive", [1, 4, 1], {"A": 32 * 256, "B": 256 * 32, "K": 256}),
}
#: issue 16: asmevo's lane-instructions per second at least this many times tinygrad's, per
#: kernel (printed, never asserted: a shared machine's timings vary)
TARGET = 2.5
DEFAULT = ("vadd_64k,row_sum_1k,sgemm_naive_k256,vadd_f32,row_sum,row_max,softmax_row,layernorm,"
           "scan_inclusive_i32,transpose_lds,sgemm_tiled,sgemm_tiled_O0,wave_reduce_dpp,"
           "histogram_atomic,conv2d_3x3,matvec")


def harness(man, name):
    """The harness of corpus entry ``name`` or of a :data:`VARIANTS` entry."""
    from asmevo.emu import harness as H
    if name not in VARIANTS:
        return H.load_harness(man, name)
    base, grid, over = VARIANTS[name]
    h = H.load_harness(man, base)
    h["grid"] = list(grid)
    for a in h["args"]:
        if a["name"] in over:
            a["count" if a["kind"] == "buffer" else "value"] = over[a["name"]]
    return h


def worker(root: str, corpus: str) -> None:
    """Serve ``run NAME LOCKSTEP`` lines: print ``seconds instructions lanes`` (lanes -1
    when this build does not count them honestly)."""
    sys.path.insert(0, root)
    import time
    import warnings
    warnings.simplefilter("ignore")
    from asmevo.emu import harness as H
    from asmevo.emu import launch as L
    from asmevo.emu import run_kernel
    from asmevo.frontend.loader import load
    import asmevo
    here = pathlib.Path(asmevo.__file__).resolve().parent.parent
    if here != pathlib.Path(root).resolve():
        raise SystemExit(f"worker for {root} imported asmevo from {here}")
    cache = {}
    man = os.path.join(corpus, "manifest.json")
    tri = os.path.join(corpus, "triton", "manifest.json")
    tri_names = {e["name"] for e in json.load(open(tri))} if os.path.isfile(tri) else set()
    honest = "popcount" in (L.RunResult.__doc__ or "")
    for line in sys.stdin:
        _, name, ls = line.split()
        if name not in cache:
            h = harness(tri if name in tri_names else man, name)
            m = load(os.path.join(h["_dir"], h["code_object"]))
            cache[name] = (h, m, H.make_inputs(h, 0))
        h, m, inputs = cache[name]
        L.LOCKSTEP = ls == "1"
        launch = H.make_launch(h, inputs)
        t0 = time.process_time()
        r = run_kernel(m, h["kernel"], launch)
        dt = time.process_time() - t0
        L.LOCKSTEP = True
        print(dt, r.instructions, r.lane_instructions if honest else -1, flush=True)


def tinygrad_worker(tg_root: str, corpus: str) -> None:
    """Serve ``run NAME LOCKSTEP`` lines with tinygrad's emulator: print ``seconds -1 -1
    OK`` (OK: 1 when its outputs equal asmevo's, 0 when not).  asmevo (this checkout) only
    prepares the launch and gives the expected outputs, once per kernel, untimed."""
    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, tg_root)
    os.chdir(tg_root)
    import ctypes
    import time
    import warnings
    warnings.simplefilter("ignore")
    import numpy as np
    from asmevo.emu import harness as H
    from asmevo.emu import launch as L
    from asmevo.emu import run_kernel
    from asmevo.frontend.loader import load
    from test.mockgpu.amd.emu import run_asm  # tinygrad's repository, not its wheel
    cache = {}
    man = os.path.join(corpus, "manifest.json")
    tri = os.path.join(corpus, "triton", "manifest.json")
    tri_names = {e["name"] for e in json.load(open(tri))} if os.path.isfile(tri) else set()
    for line in sys.stdin:
        _, name, _ls = line.split()
        if name not in cache:
            h = harness(tri if name in tri_names else man, name)
            m = load(os.path.join(h["_dir"], h["code_object"]))
            inputs = H.make_inputs(h, 0)
            want = run_kernel(m, h["kernel"], H.make_launch(h, inputs)).outputs
            cache[name] = (h, m, inputs, want)
        h, m, inputs, want = cache[name]
        launch = H.make_launch(h, inputs)
        arrays = {}

        def place(aname, arr):
            a = np.array(arr, copy=True)  # fresh, writable, owned by this run
            arrays[aname] = a
            return a.ctypes.data
        prep = L.prepare_launch(m, h["kernel"], launch, place)
        cfg = prep.cfg
        co = m.code_object
        text = co.text
        code = (ctypes.c_char * len(text.data)).from_buffer_copy(text.data)
        entry = ctypes.addressof(code) + (prep.kernel.address - text.addr)
        ka = (ctypes.c_char * max(len(prep.kernarg), 8)).from_buffer_copy(
            prep.kernarg.ljust(max(len(prep.kernarg), 8), b"\0"))
        ka_addr = ctypes.addressof(ka)
        bx, by, bz = prep.block
        gx, gy, gz = prep.grid
        lds = cfg.f("group_segment_fixed_size") + prep.dynamic_lds
        # hsa_kernel_dispatch_packet_t: header, setup, workgroup size, grid size (work items),
        # segment sizes, kernel object, kernarg address
        pkt = bytearray(64)
        import struct
        struct.pack_into("<HHHHHHIIIIIQQ", pkt, 0, 0, 3, bx, by, bz, 0, bx * gx, by * gy, bz * gz,
                         cfg.f("private_segment_fixed_size"), lds, 0, ka_addr)
        dp = (ctypes.c_char * 64).from_buffer_copy(bytes(pkt))
        user = []
        if cfg.f("enable_sgpr_private_segment_buffer"):
            user += [0, 0, 0, 0]
        for flag, v in (("enable_sgpr_dispatch_ptr", ctypes.addressof(dp)),
                        ("enable_sgpr_queue_ptr", 0), ("enable_sgpr_kernarg_segment_ptr", ka_addr),
                        ("enable_sgpr_dispatch_id", 0), ("enable_sgpr_flat_scratch_init", 0)):
            if cfg.f(flag):
                user += [v & 0xFFFFFFFF, v >> 32]
        if cfg.f("enable_sgpr_private_segment_size"):
            user.append(cfg.f("private_segment_fixed_size"))
        n_pre = cfg.f("kernarg_preload_spec_length")
        if n_pre:
            off = cfg.f("kernarg_preload_spec_offset") * 4
            user += list(np.frombuffer(prep.kernarg[off:off + 4 * n_pre].ljust(4 * n_pre, b"\0"),
                                       "<u4").tolist())
        user = (user + [0] * cfg.f("user_sgpr_count"))[:max(cfg.f("user_sgpr_count"), len(user))]
        rsrc2 = 0
        for fld, sh in (("enable_private_segment", 0), ("user_sgpr_count", 1),
                        ("enable_sgpr_workgroup_id_x", 7), ("enable_sgpr_workgroup_id_y", 8),
                        ("enable_sgpr_workgroup_id_z", 9), ("enable_sgpr_workgroup_info", 10),
                        ("enable_vgpr_workitem_id", 11)):
            rsrc2 |= cfg.f(fld) << sh
        rsrc2 |= ((lds + 511) // 512) << 15
        t0 = time.process_time()
        rc = run_asm(entry, len(text.data) - (prep.kernel.address - text.addr), gx, gy, gz,
                     bx, by, bz, ka_addr, rsrc2, cfg.f("private_segment_fixed_size"), arch="cdna",
                     user_data=user or None)
        dt = time.process_time() - t0
        ok = int(rc == 0 and all(
            np.array_equal(np.asarray(arrays[k]).view(np.uint8),
                           np.asarray(v).view(np.uint8)) for k, v in want.items() if k in arrays))
        print(dt, -1, -1, ok, flush=True)


class Worker:
    def __init__(self, root, corpus, tinygrad=None):
        env = None
        if tinygrad:
            env = dict(os.environ)
            sys.path.insert(0, str(ROOT))
            from asmevo.llvm import find_tool
            import shutil
            if shutil.which("clang") is None:  # tinygrad's CPU backend runs `clang`
                env["PATH"] = os.path.dirname(find_tool("llvm-mc")) + os.pathsep + env["PATH"]
        cmd = [sys.executable, __file__, "--worker", str(root), "--corpus", str(corpus)]
        if tinygrad:
            cmd += ["--tinygrad-worker"]
        self.cmd, self.env = cmd, env
        self.p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                  env=env)
        self.ok = {}

    def restart(self):
        """A new worker process (after the last one died, e.g. tinygrad's emulator crashed)."""
        try:
            self.p.kill()
            self.p.wait()
        except OSError:
            pass
        self.p = subprocess.Popen(self.cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  text=True, env=self.env)

    def run(self, name, lockstep=True):
        try:
            self.p.stdin.write(f"run {name} {int(lockstep)}\n")
            self.p.stdin.flush()
            line = self.p.stdout.readline()
        except BrokenPipeError:
            line = ""
        if not line:
            raise RuntimeError(f"worker failed on {name} (exit status {self.p.wait()})")
        t, n, ln, *ok = line.split()
        if ok:
            self.ok[name] = self.ok.get(name, True) and ok[0] == "1"
        return float(t), int(n), int(ln)

    def close(self):
        self.p.stdin.close()
        self.p.wait()



def main(argv=None) -> int:
    sys.path.insert(0, str(ROOT))
    from asmevo.tools.run import positive_int
    ap = argparse.ArgumentParser(
        description=__doc__.splitlines()[0],
        epilog="Columns: 'X ms' is the median CPU time (time.process_time of the worker) of one "
               "run_kernel call; 'M lane/s' and 'M wave/s' divide this checkout's lane- and "
               "wave-instruction counts by it; 'new/X' is X's time over this checkout's, i.e. "
               "how many times faster this checkout is (above 1: faster).  The issue 16 target "
               f"(with --tinygrad): new/tg >= {TARGET} on every kernel.  The module docstring "
               "(benchmarks/emulate.py) has the details.")
    ap.add_argument("--kernels", default=DEFAULT,
                    help="comma-separated corpus entry names (Triton ones too) or variants "
                         f"({', '.join(VARIANTS)}); default: {DEFAULT}")
    ap.add_argument("--repeat", type=positive_int, default=5,
                    help=f"timed runs per kernel and column, after {WARMUP} untimed ones; "
                         "the median is printed (default 5)")
    ap.add_argument("--ref", default=os.environ.get("ASMEVO_REF"),
                    help="root of another copy of asmevo to compare with, e.g. the previous "
                         "commit (default $ASMEVO_REF)")
    ap.add_argument("--modes", action="store_true",
                    help="add this checkout with one wave at a time (LOCKSTEP = False) as a column")
    ap.add_argument("--corpus", default=os.environ.get("ASMEVO_CORPUS",
                                                       str(ROOT.parent / "shared" / "corpus")),
                    help="the shared corpus (default $ASMEVO_CORPUS, else ../shared/corpus)")
    ap.add_argument("--tinygrad", default=os.environ.get("ASMEVO_TINYGRAD"),
                    help="root of a tinygrad repository checkout (default $ASMEVO_TINYGRAD)")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--tinygrad-worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker and args.tinygrad_worker:
        tinygrad_worker(args.worker, args.corpus)
        return 0
    if args.worker:
        worker(args.worker, args.corpus)
        return 0
    corpus = pathlib.Path(args.corpus)
    if not (corpus / "manifest.json").is_file():
        print(f"no corpus at {corpus}", file=sys.stderr)
        return 2
    names = [n for n in args.kernels.split(",") if n]
    known = {e["name"] for e in json.load(open(corpus / "manifest.json"))} | set(VARIANTS)
    if (corpus / "triton" / "manifest.json").is_file():
        known |= {e["name"] for e in json.load(open(corpus / "triton" / "manifest.json"))}
    unknown = [n for n in names if n not in known]
    if unknown or not names:
        print(f"unknown kernel name(s): {', '.join(unknown) or '(none given)'}; expected corpus "
              f"entry names or variants ({', '.join(sorted(VARIANTS))})", file=sys.stderr)
        return 2
    if args.ref and not (pathlib.Path(args.ref) / "asmevo" / "__init__.py").is_file():
        # (else the worker imports the installed asmevo and the 'ref' column times this one)
        print(f"--ref {args.ref}: no asmevo package there (asmevo/__init__.py); expected the "
              "root of another copy of asmevo", file=sys.stderr)
        return 2
    cols = [("new", Worker(ROOT, corpus), True)]
    if args.ref:
        cols.append(("ref", Worker(args.ref, corpus), True))
    if args.tinygrad:
        if not (pathlib.Path(args.tinygrad) / "test" / "mockgpu" / "amd" / "emu.py").is_file():
            print(f"no tinygrad repository at {args.tinygrad} (test/mockgpu/amd/emu.py)",
                  file=sys.stderr)
            return 2
        cols.append(("tg", Worker(args.tinygrad, corpus, tinygrad=True), True))
    if args.modes:
        cols.append(("1-wave", cols[0][1], False))
    head = f"{'kernel':20s} {'wave-inst':>9s} {'lane-inst':>10s} {'lanes/inst':>10s}"
    for c, _, _ in cols:
        head += f" | {c + ' ms':>9s} {'M lane/s':>8s} {'M wave/s':>8s}"
    if len(cols) > 1:
        head += " | " + " ".join(f"{'new/' + c:>9s}" for c, _, _ in cols[1:])
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())} "
          f"({os.cpu_count()} CPUs)")
    print(head)
    tot = {c: 0.0 for c, _, _ in cols}
    below = []          # kernels under the target ratio against tinygrad
    unmet = []          # kernels tinygrad failed on or whose outputs differ: no ratio to judge
    tot_ln = tot_n = 0
    for name in names:
        times = {c: [] for c, _, _ in cols}
        n = ln = None
        failed = {}
        for rep in range(args.repeat + WARMUP):     # the first rounds are the warm-up
            order = cols if rep % 2 == 0 else cols[::-1]
            for c, w, ls in order:
                if c in failed:
                    continue
                try:
                    t, n_, ln_ = w.run(name, ls)
                except RuntimeError as e:
                    if c != "tg":
                        raise
                    failed[c] = str(e)  # tinygrad's emulator died on this kernel (segfault...)
                    w.restart()
                    continue
                if c == "new":
                    n, ln = n_, ln_
                if rep >= WARMUP:
                    times[c].append(t)
        med = {c: statistics.median(v) if v else float("nan") for c, v in times.items()}
        complete = not failed  # the summed row: kernels every column ran
        if complete:
            tot_ln += ln
            tot_n += n
        row = f"{name:20s} {n:9d} {ln:10d} {ln / n:10.1f}"
        for c, _, _ in cols:
            if complete:
                tot[c] += med[c]
            row += f" | {med[c] * 1e3:9.2f} {ln / med[c] / 1e6:8.2f} {n / med[c] / 1e6:8.3f}"
        if len(cols) > 1:
            row += " | " + " ".join(f"{med[c] / med['new']:9.2f}" for c, _, _ in cols[1:])
        for c, w, _ in cols:
            if c == "tg":
                row += (f" | tg failed: {failed[c]}" if c in failed else
                        f" | tg {'ok' if w.ok.get(name) else 'MISMATCH'}")
                if c in failed or not w.ok.get(name):
                    unmet.append(name)
                elif med[c] / med["new"] < TARGET:
                    below.append(name)
        print(row, flush=True)
    row = f"{'(all ran, summed)':20s} {tot_n:9d} {tot_ln:10d} {tot_ln / tot_n:10.1f}"
    for c, _, _ in cols:
        row += f" | {tot[c] * 1e3:9.2f} {tot_ln / tot[c] / 1e6:8.2f} {tot_n / tot[c] / 1e6:8.3f}"
    if len(cols) > 1:
        row += " | " + " ".join(f"{tot[c] / tot['new']:9.2f}" for c, _, _ in cols[1:])
    print(row)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if any(c == "tg" for c, _, _ in cols):
        print(f"issue 16 target: new/tg >= {TARGET} on every kernel; below: "
              f"{', '.join(below) if below else 'none'}"
              + (f"; not judged (tinygrad failed or its outputs differ): {', '.join(unmet)}"
                 if unmet else ""))
    for _, w, _ in cols:
        if w.p.poll() is None:
            w.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
