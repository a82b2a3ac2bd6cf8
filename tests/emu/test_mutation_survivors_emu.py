"""Tests for mutants of asmevo/emu that survived the mutation probe
(scripts/mutation_probe.py, seed 14; docs/verify.md, "Mutation pass").  Each names the
mutant it kills."""

from __future__ import annotations

import numpy as np
import pytest

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


@pytest.mark.parametrize("soff", [2, 4, 6])
def test_uniform_scratch_store_at_any_offset_reads_back_per_lane(snippet, soff):
    # exec_mem scratch store with an SGPR offset and no VGPR address: an unaligned offset
    # takes the per-lane path (mutant: `o is None` -> `o is not None`, which sent the
    # unaligned offset to the aligned fast path and the aligned one to the per-lane path)
    s = snippet([f"s_mov_b32 s5, {soff}",
                 "scratch_store_dword off, v1, s5",
                 f"v_mov_b32_e32 v2, {soff}",
                 "scratch_load_dword v3, v2, off"],          # per-lane address: another path
                scratch=64)
    vals = (np.arange(64, dtype=np.uint32) * 0x01010101 + 0x10203040).astype(np.uint32)
    s.w.v[1] = vals
    s.run()
    assert s.w.v[3].tolist() == vals.tolist()
    lane5 = s.w.scratch.data[5, soff:soff + 4].tobytes()
    assert int.from_bytes(lane5, "little") == int(vals[5])
