"""``asmevo evolve`` ends with a clean stderr: no z3 object outlives z3 into the interpreter's
teardown, where its ``AstRef.__del__`` ran with z3's module globals already cleared and
printed "Exception ignored in: <function AstRef.__del__ ...>" with an ``AttributeError``
traceback after the run (asmevo.semantics.z3backend.release_z3_objects, an atexit handler)."""

from __future__ import annotations

import os
import subprocess
import sys

from evolve_helpers import EXAMPLES, ROOT

#: the command as scripts/demo.sh runs it (a small budget), then, after the exit handlers
#: (what runs before the teardown), the z3 objects still alive (none may be left for it)
SCRIPT = """
import atexit, gc, sys
from asmevo.cli import main
status = main(["evolve", {k0!r}, "--harness", {harness!r}, "--out", {out!r},
               "--budget", "2", "--seed", "0", "--quiet"])
atexit._run_exitfuncs()
import z3
print("status", status, "live-z3", sum(isinstance(o, (z3.AstRef, z3.Solver, z3.ModelRef))
                                        for o in gc.get_objects()))
"""


def test_no_z3_object_left_for_the_teardown(tmp_path):
    code = SCRIPT.format(k0=str(EXAMPLES / "vadd_f32_O0.co"),
                         harness=str(EXAMPLES / "vadd_f32_O0.json"), out=str(tmp_path / "x"))
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.pop("ASMEVO_DEBUG", None)
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=600, env=env, cwd=str(ROOT))
    assert "Traceback" not in p.stderr and "Exception ignored" not in p.stderr, p.stderr
    assert p.returncode == 0, p.stderr
    assert p.stdout.split()[-4:] == ["status", "0", "live-z3", "0"], p.stdout
