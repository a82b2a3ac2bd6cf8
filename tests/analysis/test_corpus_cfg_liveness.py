"""CFG and liveness on every clang/Triton assembly file of the corpus."""

import re

from asmevo.analysis import AnalysisManager
from asmevo.analysis.cfg import CFG
from asmevo.analysis.liveness import Liveness
from asmevo.frontend.asm_parser import parse_asm


def _asm_files(corpus):
    return sorted(corpus.glob("*.s")) + sorted((corpus / "triton").glob("*.amdgcn"))


def test_cfg_liveness_corpus(corpus_dir):
    files = _asm_files(corpus_dir)
    assert len(files) >= 40
    for p in files:
        text = p.read_text()
        m = parse_asm(text, str(p))
        am = AnalysisManager(m)
        for k in m.kernels:
            cfg = am.get(CFG, k)
            lv = am.get(Liveness, k)
            # every block reachable in compiler output, and every path ends at EXIT
            assert cfg.unreachable == [], p
            assert all(b in cfg.ipdom for b in range(len(cfg.blocks))), p
            # clang's own count of VGPRs bounds the live VGPRs at any point
            nv = re.search(r"\.amdhsa_next_free_vgpr (\d+)", text)
            acc = re.search(r"\.amdhsa_accum_offset (\d+)", text)
            assert lv.max_pressure["v"] <= min(int(nv.group(1)), int(acc.group(1))), p
            # reads of registers nobody wrote: only what clang marks implicit-def
            # (a spill slot AGPR at -O0, the high half of v_mad_u64_u32's addend)
            for u in lv.undefined_at_entry:
                assert u in {("a", 0), ("v", 13), ("v", 3)}, (p, u)
