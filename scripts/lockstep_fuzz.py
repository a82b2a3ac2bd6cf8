#!/usr/bin/env python3
"""Differential fuzzing of the emulator's lockstep mode against one wave at a time.

Random race-free programs (tests/emu/lsfuzz.py: SALU/SOPC/VOPC, saveexec, lane-mask
readers, VALU with per-wave SGPRs, readlane/writelane, DPP/SDWA, LDS, global/buffer/scalar
memory, scratch, uniform / per-wave / lane-divergent ifs, counted self-loops, pointer-walking
loops, lane loops, barriers, several waves and workgroups) run with the waves one at a
time, in lockstep with compiled blocks and in lockstep without them; every wave's
registers, SCC, EXEC, counts, LDS, memory and scratch must be identical.  A mismatch is
shrunk (fewer lines, waves, workgroups) and written to ``--out`` as a text reproducer.

    nice python3 scripts/lockstep_fuzz.py --seeds 0:2000               # seeds 0..1999
    nice python3 scripts/lockstep_fuzz.py --seeds 5:6 --show           # print one program
    nice python3 scripts/lockstep_fuzz.py --corpus --inputs 4          # corpus kernels

``--corpus`` runs every kernel of the shared corpus (manifest.json, triton/manifest.json)
on ``--inputs`` random input seeds with LOCKSTEP off, on with blocks, on without blocks,
and compares the outputs, instruction and lane counts.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def fuzz(args):
    from tests.emu import lsfuzz as F
    a, b = (int(x) for x in args.seeds.split(":"))
    os.makedirs(args.out, exist_ok=True)
    t = time.time()
    bad = softs = 0
    for seed in range(a, b):
        case = F.generate(seed)
        if args.show:
            print(f"# seed {seed}: {case.groups} workgroup(s) x {case.nwaves} waves, "
                  f"partial EXEC {case.partial}\n{case.text()}")
        diffs, _ = F.check(case, soft=True)
        if diffs and all(x.startswith("soft:") for d in diffs.values() for x in d):
            softs += 1
            print(f"seed {seed}: both modes fail, with other faults (the schedules meet the "
                  f"waves' faults in another order?): {next(iter(diffs.values()))[0][:300]}",
                  flush=True)
            continue
        if diffs:
            bad += 1
            mode = sorted(diffs)[0]
            print(f"seed {seed}: MISMATCH {mode}: {diffs[mode][:3]}", flush=True)
            if not args.no_shrink:
                small = F.shrink(case, mode)
                d, _ = F.check(small)
                path = os.path.join(args.out, f"seed{seed}.txt")
                with open(path, "w") as f:
                    f.write(f"# seed {seed} {mode}: {small.groups} workgroup(s) x "
                            f"{small.nwaves} waves, partial {small.partial}\n# {d}\n")
                    f.write(small.text() + "\n")
                print(f"  shrunk to {len(small.flat())} lines: {path}", flush=True)
        if (seed - a + 1) % 100 == 0:
            print(f"{seed - a + 1} programs, {bad} mismatches, {time.time() - t:.0f}s",
                  flush=True)
    print(f"done: {b - a} programs, {bad} mismatches, {softs} with other faults in the two "
          f"modes, {time.time() - t:.0f}s")
    return 1 if bad else 0


def corpus(args):
    import numpy as np
    from asmevo.emu import harness as H
    from asmevo.emu import launch as L
    from asmevo.emu import lockstep as LS
    from asmevo.emu import lockstep_block as LB
    from asmevo.emu import run_kernel
    from asmevo.frontend.loader import load
    root = args.corpus_dir or os.environ.get("ASMEVO_CORPUS") or "/work/shared/corpus"
    entries = []
    for sub in ("", "triton"):
        p = os.path.join(root, sub, "manifest.json")
        if os.path.isfile(p):
            entries += [(p, e["name"]) for e in json.load(open(p))]
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    aiter = os.path.join(root, "aiter", "gfx942")
    if os.path.isdir(aiter):        # (tests/emu/test_corpus.py's AITer kernels)
        for n in ("aiter_topksoftmax", "aiter_bwd_odo_fp16", "aiter_bwd_dq_convert_fp16",
                  "aiter_i8gemm_16x128", "aiter_i8gemm_16x128_splitk2"):
            entries.append((os.path.join(here, "tests", "emu", "data", n + ".json"), None))
    if args.only:
        entries = [e for e in entries if (e[1] or os.path.basename(e[0])[:-5])
                   in args.only.split(",")]
    races = 0
    bad = 0
    LS._CHECK_EXEC = True

    def run(module, h, inputs, lock, blocks):
        old = L.LOCKSTEP, LB.ENABLED
        L.LOCKSTEP, LB.ENABLED = lock, blocks
        try:
            with np.errstate(all="ignore"):
                return run_kernel(module, h["kernel"], H.make_launch(h, inputs)), None
        except Exception as e:      # noqa: BLE001
            return None, f"{type(e).__name__}: {e}"
        finally:
            L.LOCKSTEP, LB.ENABLED = old

    def shared_bytes(module, h, inputs):
        """{buffer: bool per byte} of the bytes that more than one wave stores to in a run
        one wave at a time: their final value depends on the order of the waves' stores (a
        race of the kernel at these inputs; a lockstep difference only there is no bug)."""
        from asmevo.emu.memory import GlobalMemory
        from asmevo.emu.program import Program
        cur = [0]
        who: dict = {}
        o_run, o_w, o_ww = Program.run_wave, GlobalMemory.write, GlobalMemory.write_words

        ids: dict = {}

        def run_wave(self, wv, limit):
            # (a number per wave: ids of finished workgroups' Wave objects are reused)
            cur[0] = ids.setdefault((wv.group.id, wv.index), len(ids) + 1)
            return o_run(self, wv, limit)

        def mark(mem, addrs, size):
            for r in mem.regions:
                off = addrs.astype(np.int64) - r.addr
                sel = (off >= 0) & (off + size <= r.data.size)
                if sel.any():
                    w = who.setdefault(r.name, np.zeros(r.data.size, np.int64))
                    i = (off[sel][:, None] + np.arange(size)).reshape(-1)
                    prev = w[i]
                    w[i] = np.where((prev == 0) | (prev == cur[0]), cur[0], -1)

        def write(mem, addrs, data, lanes):
            mark(mem, addrs, data.shape[1])
            return o_w(mem, addrs, data, lanes)

        def write_words(mem, addrs, words, lanes):
            mark(mem, addrs, 4 * words.shape[1])
            return o_ww(mem, addrs, words, lanes)
        Program.run_wave, GlobalMemory.write, GlobalMemory.write_words = \
            run_wave, write, write_words
        try:
            run(module, h, inputs, False, False)
        finally:
            Program.run_wave, GlobalMemory.write, GlobalMemory.write_words = o_run, o_w, o_ww
        return {k: v == -1 for k, v in who.items()}

    modes = ((False, False, "one-wave"), (True, True, "lockstep"), (True, False, "noblocks"))
    for manifest, name in entries:
        t = time.time()
        if name is None:            # an AITer harness beside the tests
            h = H.load_harness(manifest)
            name = h["name"] if "name" in h else os.path.basename(manifest)[:-5]
            module = load(os.path.join(aiter, h["code_object"]))
        else:
            h = H.load_harness(manifest, name)
            module = load(os.path.join(h["_dir"], h["code_object"]))
        inputs = [_perturb(h, H.make_inputs(h, 100 + s), s) for s in range(args.inputs)]
        got = {}
        for lock, blocks, tag in modes:
            # a fresh Program per mode (it caches its blocks), kept across the input seeds
            # as for the launches of one candidate
            L._PROGRAMS = None
            L._BY_ID.clear()
            got[tag] = [run(module, h, x, lock, blocks) for x in inputs]
        for tag in ("lockstep", "noblocks"):
            for seed, ((ref, e0), (res, e1)) in enumerate(zip(got["one-wave"], got[tag])):
                why = []
                if e0 or e1:
                    if e0 != e1:
                        why.append(f"error {e1!r} vs {e0!r}")
                else:
                    for f in ("instructions", "waves", "lane_instructions", "writes_outside"):
                        if getattr(ref, f) != getattr(res, f):
                            why.append(f"{f} {getattr(res, f)} vs {getattr(ref, f)}")
                    racy = None
                    for k in ref.outputs:
                        x = np.frombuffer(res.outputs[k].tobytes(), np.uint8)
                        y = np.frombuffer(ref.outputs[k].tobytes(), np.uint8)
                        d = np.flatnonzero(x != y)
                        if d.size:
                            if racy is None:
                                racy = shared_bytes(module, h, inputs[seed])
                            race = bool(k in racy and racy[k][d].all())
                            why.append((f"output {k}: {d.size} bytes", race))
                if why and all(r is True for _, r in (w if isinstance(w, tuple) else (w, False)
                                                      for w in why)):
                    races += 1
                    print(f"{name} input seed {seed} {tag}: race only (every differing byte "
                          f"is stored by several waves: the kernel races at these inputs): "
                          f"{[w for w, _ in why]}", flush=True)
                elif why:
                    bad += 1
                    print(f"{name} input seed {seed} {tag}: {why}", flush=True)
        print(f"{name}: {args.inputs} input seeds x 3 modes, {time.time() - t:.1f}s", flush=True)
    print(f"done: {len(entries)} kernels x {args.inputs} input seeds, {bad} mismatches, "
          f"{races} differences only where the kernel races (stores of several waves)")
    return 1 if bad else 0


def _perturb(h, inputs, s):
    """Input seed ``s`` > 0: float buffers get special values in a fifth of their elements
    (NaNs with payloads, signaling NaNs, infinities, subnormals, -0) and, from seed 2, integer
    scalars are made smaller (other trip counts, partial last waves; an access the smaller
    size makes invalid must fail the same way in every mode)."""
    import numpy as np
    if s == 0:
        return inputs
    rng = np.random.default_rng(1000 + s)
    out = dict(inputs)
    special = {"float32": (np.uint32, [0x7FC00001, 0xFFBFFB77, 0x7F800001, 0x7F800000,
                                       0xFF800000, 0x00000001, 0x807FFFFF, 0x80000000]),
               "float16": (np.uint16, [0x7E01, 0xFD01, 0x7C00, 0x0001, 0x8000, 0x7C01]),
               "float64": (np.uint64, [0x7FF8000000000001, 0xFFF4000000000000,
                                       0x7FF0000000000000, 0x0000000000000001])}
    for a in h["args"]:
        x = out[a["name"]]
        if a["kind"] == "buffer" and isinstance(x, np.ndarray):
            sp = special.get(str(x.dtype))
            if sp is not None and x.size:
                y = x.copy()
                v = y.view(sp[0]).reshape(-1)
                m = rng.random(v.size) < 0.2
                v[m] = np.array(sp[1], sp[0])[rng.integers(0, len(sp[1]), int(m.sum()))]
                out[a["name"]] = y
        elif a["kind"] == "scalar" and s >= 2 and "int" in str(a.get("dtype")) and \
                isinstance(x, int) and x > 2:
            out[a["name"]] = int(rng.integers(1, x))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="0:500", help="first:end (end excluded)")
    ap.add_argument("--out", default="benchmarks/lockstep_fuzz", help="reproducer directory")
    ap.add_argument("--no-shrink", action="store_true")
    ap.add_argument("--show", action="store_true", help="print each program")
    ap.add_argument("--corpus", action="store_true", help="the corpus kernels instead")
    ap.add_argument("--corpus-dir")
    ap.add_argument("--only", help="corpus kernel names, comma-separated")
    ap.add_argument("--inputs", type=int, default=3, help="input seeds per corpus kernel")
    args = ap.parse_args(argv)
    import warnings
    warnings.simplefilter("ignore", RuntimeWarning)
    return corpus(args) if args.corpus else fuzz(args)


if __name__ == "__main__":
    sys.exit(main())
