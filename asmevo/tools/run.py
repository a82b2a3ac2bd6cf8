"""``asmevo run K.co --harness H.json [--entry NAME] [--seed N] [--out DIR] [--check]``.

Runs one kernel in the embedded gfx942 emulator with inputs drawn from the
harness (corpus manifest-entry schema, see :mod:`asmevo.emu.harness`), writes
every output buffer as ``DIR/<arg>.npy`` when ``--out`` is given, and prints
waves, wave-instructions and lane-instructions executed and the emulator's own wall time
(not an estimate of the GPU's: ``asmevo profile`` gives that).  ``--check`` compares the outputs with
the entry's reference and exits 1 on a mismatch, naming the buffer, the first
differing index and both values.  Bad input exits 2.
"""

from __future__ import annotations

import io
import os

import numpy as np

from ..errors import AsmevoError
from ..fileio import write_output


def non_negative_int(text: str) -> int:
    """argparse type: an integer >= 0 (a seed of ``np.random.default_rng``)."""
    import argparse
    try:
        v = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {text!r}") from None
    if v < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {text}")
    return v


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1 (a repeat count)."""
    import argparse
    try:
        v = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text}")
    return v


def add_arguments(p) -> None:
    """Arguments: kernel file, ``--harness``, ``--entry``, ``--kernel``, ``--seed``, ``--out``,
    ``--check``, ``--lds``."""
    p.epilog = ("Prints the waves, the wave-instructions executed, the lane-instructions (the sum "
                "over executed instructions of popcount(EXEC) at issue, scalar instructions "
                "included) and the emulator's own wall time on this machine: not a GPU time "
                "('asmevo profile' estimates that). Exit status: 0, 1 on a --check mismatch, "
                "2 for bad input.")
    p.add_argument("input", help="code object (.co/.hsaco) or assembly (.s/.amdgcn)")
    p.add_argument("--harness", required=True, help="harness JSON: one manifest entry or a manifest list")
    p.add_argument("--entry", help="entry name when the harness holds several")
    p.add_argument("--kernel", help="kernel symbol (default: the entry's 'kernel', else the only kernel)")
    p.add_argument("--seed", type=non_negative_int, default=0, help="seed of np.random.default_rng for inputs (0)")
    p.add_argument("--out", help="directory for <buffer>.npy outputs")
    p.add_argument("--check", action="store_true", help="compare with the reference; exit 1 on mismatch")
    p.add_argument("--lds", type=non_negative_int, default=None,
                   help="dynamic LDS bytes (default: the rest of the 64 KiB)")
    from ..device import add_device_argument
    add_device_argument(p)


def run(args) -> int:
    """Run the kernel; 0 on success, 1 on a --check mismatch."""
    from ..emu import harness as H
    from ..frontend.loader import load_bytes
    if args.out and os.path.exists(args.out) and not os.path.isdir(args.out):
        raise AsmevoError("--out must be a directory", file=args.out)  # before any work
    # what runs is the bytes: assembly text is assembled and linked, then loaded back
    # (a parse of the text ignores .rept, .if, .long words...)
    module = load_bytes(args.input)
    # the entry, its kernel, its launch against the kernel's metadata and (--check) its
    # reference, before any work
    h = H.checked_entry(args.harness, args.entry, args.input, module=module, kernel=args.kernel,
                        fits=True, reference=args.check)
    if args.check and not h.get("reference"):
        raise AsmevoError(f"--check: entry {h.get('name')!r} has no 'reference' "
                          "(\"FILE.py:FUNCTION\") to compare with", file=args.harness)
    from ..device import get_device
    device = get_device(args.device)       # a missing HIP runtime: exit 2 before any work
    name = args.kernel or h.get("kernel")
    if name is None:
        ks = [k.name for k in module.kernels if k.is_kernel]
        if len(ks) != 1:
            raise AsmevoError(f"choose a kernel with --kernel ({', '.join(ks)})", file=args.input)
        name = ks[0]
    inputs = H.make_inputs(h, args.seed)
    launch = H.make_launch(h, inputs)
    if args.lds is not None:
        launch.dynamic_lds = args.lds
    try:
        with device.load(module) as loaded:     # the emulator (default) or a GPU
            res = loaded.run(name, launch)
    except AsmevoError as e:
        if e.file is None:  # a launch/harness mismatch: name the harness
            e.file = args.harness
        raise
    entry = h.get("name")
    who = name if not entry or entry == name else f"{name} (entry {entry})"
    if device.hardware:
        print(f"{who}: ran on {device.name}, {res.seconds:.3f} s wall (load, copies, launch)")
    else:
        rate = res.lane_instructions / res.seconds / 1e6 if res.seconds > 0 else 0.0
        # the seconds are the emulator's own wall time on this machine, not a GPU time (no
        # timing model runs here: 'asmevo profile' gives the estimate)
        print(f"{who}: {res.waves} waves, {res.instructions} wave-instructions "
              f"({res.lane_instructions} lane-instructions), emulated in {res.seconds:.3f} s "
              f"wall ({rate:.2f} M lane-inst/s; not a GPU time: see 'asmevo profile')")
    if res.writes_outside:
        regs = sorted({r for r, _, _ in res.writes_outside})
        print(f"warning: stores into non-output buffers: {', '.join(regs)}")
    if args.out:
        if os.path.exists(args.out) and not os.path.isdir(args.out):
            raise AsmevoError("--out must be a directory", file=args.out)
        os.makedirs(args.out, exist_ok=True)
        for a in h["args"]:
            if a["kind"] == "buffer" and a.get("role", "in") in ("out", "inout"):
                bio = io.BytesIO()
                np.save(bio, res.outputs[a["name"]])
                write_output(os.path.join(args.out, a["name"] + ".npy"), bio.getvalue(),
                             inputs=(args.input, args.harness))
    if args.check:
        want = H.reference(h, inputs)
        errs = H.compare(h, res.outputs, want)
        if errs:
            for e in errs:
                print(f"MISMATCH {e}")
            return 1
        print(f"check: {H.match_sentence(h, want)}")
    return 0
