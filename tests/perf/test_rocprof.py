"""read_att_stats: a rocprofv3 thread-trace stats_*.csv (documented columns) as a hardware
Profile mapped onto the module's instructions."""

import pytest

from asmevo.errors import AsmevoError
from asmevo.frontend.asm_parser import parse_asm
from asmevo.perf.compare import compare
from asmevo.perf.rocprof import read_att_stats
from asmevo.perf.static import estimate_static
from asmevo.perf.windows import kernel_pcs

HEADER = "CodeObj,Vaddr,Instruction,Hitcount,Latency,Stall,Idle,Source\n"


def text_module():
    body = ["s_load_dword s3, s[0:1], 0x18", "global_load_dword v1, v[2:3], off",
            "s_waitcnt vmcnt(0)", "v_add_f32_e32 v4, v1, v1", "s_endpgm"]
    lines = "\n".join("\t" + b for b in body)
    return parse_asm(f"\t.text\n\t.globl\tk\n\t.type\tk,@function\nk:\n{lines}\n.Le:\n\t.size\tk, .Le-k\n",
                     "k.s")


def write_csv(path, m, stats, offset=0, hex_addr=True):
    k = m.kernels[0]
    insts = list(k.instructions())
    pcs = kernel_pcs(k)
    out = [HEADER]
    for i, (hits, lat, stall, idle) in stats.items():
        a = (insts[i].address if insts[i].address is not None else pcs[i]) + offset
        va = hex(a) if hex_addr else str(a)
        out.append(f'1,{va},"{insts[i].text()}",{hits},{lat},{stall},{idle},kernel.cl:3\n')
    path.write_text("".join(out))


def test_synthetic_trace_maps_rows(tmp_path):
    m = text_module()
    f = tmp_path / "stats_0.csv"
    write_csv(f, m, {0: (64, 256, 0, 0), 1: (64, 512, 0, 0), 2: (64, 40000, 39000, 500),
                     3: (64, 256, 0, 0), 4: (64, 256, 0, 0)})
    p = read_att_stats(str(f), m)
    assert p.source == "hardware" and p.estimated is False
    kp = p.kernel("k")
    assert [r.index for r in kp.instructions] == [0, 1, 2, 3, 4]
    assert kp.instructions[2].stall == 39000 and kp.instructions[2].hits == 64
    assert kp.instructions[2].text == "s_waitcnt vmcnt(0)"
    assert kp.windows and kp.windows[0].bottleneck == "memory-latency"
    assert kp.extra["unmatched_rows"] == 0
    # a hardware profile compares with a model estimate
    c = compare(estimate_static(m, "k"), p)
    assert c.estimated and not c.both_estimated


def test_load_offset_is_found_from_instruction_text(tmp_path):
    m = text_module()
    f = tmp_path / "stats_1.csv"
    write_csv(f, m, {i: (1, 10 * (i + 1), 0, 0) for i in range(5)}, offset=0x7f0000001000,
              hex_addr=False)
    p = read_att_stats(str(f), m)
    kp = p.kernel("k")
    assert [r.latency for r in kp.instructions] == [10, 20, 30, 40, 50]
    assert kp.extra["vaddr_offset"] == 0x7f0000001000


def test_bad_csv(tmp_path):
    m = text_module()
    f = tmp_path / "bad.csv"
    f.write_text("Vaddr,Instruction\n0x0,s_endpgm\n")
    with pytest.raises(AsmevoError, match="missing column"):
        read_att_stats(str(f), m)
    f.write_text(HEADER + "1,0x0,s_endpgm,abc,1,0,0,\n")
    with pytest.raises(AsmevoError, match="Hitcount"):
        read_att_stats(str(f), m)
    f.write_text(HEADER + "1,0x99999,v_nop,1,1,0,0,\n")
    with pytest.raises(AsmevoError, match="no row"):
        read_att_stats(str(f), m)
    with pytest.raises(AsmevoError, match="cannot read"):
        read_att_stats(str(tmp_path / "missing.csv"), m)


@pytest.mark.corpus
def test_corpus_code_object_addresses(corpus_dir, tmp_path):
    from asmevo.frontend.loader import load
    m = load(str(corpus_dir / "vadd_f32.co"))
    k = m.kernels[0]
    n = k.num_instructions()
    f = tmp_path / "stats_v.csv"
    write_csv(f, m, {i: (4, 100, 50 if i == 16 else 0, 0) for i in range(n)})
    kp = read_att_stats(str(f), m).kernel("vadd_f32")
    assert len(kp.instructions) == n and kp.extra["vaddr_offset"] == 0
    assert kp.instructions[0].pc == 0


def test_several_stats_files_are_summed(tmp_path):
    m = text_module()
    f1, f2 = tmp_path / "stats_se0.csv", tmp_path / "stats_se1.csv"
    write_csv(f1, m, {i: (2, 10, 1, 0) for i in range(5)})
    write_csv(f2, m, {i: (3, 20, 2, 1) for i in range(5)})
    kp = read_att_stats([str(f1), f2], m).kernel("k")
    assert [(r.hits, r.latency, r.stall, r.idle) for r in kp.instructions] == [(5, 30, 3, 1)] * 5
    with pytest.raises(AsmevoError):
        read_att_stats([], m)
