"""A run directory is user data: its lineage.sqlite must not run code when read back.

The store keeps each candidate's IR blocks pickled; ``pickle.loads`` of crafted bytes calls
whatever callable they name (here ``os.system``).  :func:`asmevo.evolve.candidate.load_blocks`
builds only the IR's own classes."""

from __future__ import annotations

import os
import pickle

import pytest

from asmevo.evolve.candidate import content_hash, kernel_blocks, load_blocks


class _Payload:
    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def _vadd_kernel():
    from evolve_helpers import VADD_CO
    from asmevo.frontend.loader import load
    m = load(str(VADD_CO))
    return m.kernels[0]


def test_real_blocks_round_trip():
    k = _vadd_kernel()
    blocks = load_blocks(kernel_blocks(k))
    import copy
    k2 = copy.copy(k)
    k2.blocks = blocks
    assert content_hash(k2) == content_hash(k)


@pytest.mark.parametrize("wrap", [lambda p: p, lambda p: [p], lambda p: {"x": [p]}])
def test_crafted_bytes_run_nothing(tmp_path, wrap):
    marker = tmp_path / "pwned"
    data = pickle.dumps(wrap(_Payload(marker)))
    with pytest.raises(pickle.UnpicklingError, match="not an asmevo IR class"):
        load_blocks(data)
    assert not marker.exists()


def test_resume_on_a_crafted_store_exits_2_without_running_it(tmp_path):
    import sqlite3
    from evolve_helpers import VADD_CO, VADD_JSON, evolve_cli
    run = tmp_path / "run"
    r = evolve_cli(VADD_CO, "--harness", VADD_JSON, "--out", run, "--budget", 2, "--quiet",
                   timeout=600)
    assert r.returncode == 0, r.stderr
    marker = tmp_path / "pwned"
    db = sqlite3.connect(str(run / "lineage.sqlite"))
    db.execute("UPDATE candidates SET blocks=?", (pickle.dumps([_Payload(marker)]),))
    db.commit()
    db.close()
    r = evolve_cli(VADD_CO, "--harness", VADD_JSON, "--out", run, "--budget", 4, "--quiet",
                   "--resume", timeout=600)
    assert not marker.exists()
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert "lineage.sqlite" in r.stderr and "unreadable" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr
