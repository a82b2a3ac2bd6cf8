"""CFG: edges for every branch kind, dominators, post-dominators, natural loops, dot output."""

from asmevo.analysis.cfg import CFG, EXIT


def test_diamond_and_loop(kern):
    k, am = kern("""
        k:
            s_cmp_eq_u32 s0, 0
            s_cbranch_scc1 .Lelse
            v_mov_b32_e32 v1, 1
            s_branch .Ljoin
        .Lelse:
            v_mov_b32_e32 v1, 2
        .Ljoin:
            s_add_u32 s1, s1, 1
            s_cmp_lg_u32 s1, 10
            s_cbranch_scc1 .Ljoin
            s_endpgm
    """)
    cfg = am.get(CFG, k)
    names = [cfg.block_name(i) for i in range(len(cfg.blocks))]
    e, t, els, join, tail = 0, 1, names.index(".Lelse"), names.index(".Ljoin"), len(names) - 1
    g = cfg.graph
    assert g[e][els]["kind"] == "taken" and g[e][t]["kind"] == "fallthrough"
    assert set(g.successors(t)) == {join}          # s_branch: no fall-through
    assert set(g.successors(join)) == {join, tail}  # self loop + fall-through
    assert set(g.successors(tail)) == {EXIT}
    assert cfg.idom[join] == e and cfg.dominates(e, tail) and not cfg.dominates(t, join)
    assert cfg.postdominates(join, e) and not cfg.postdominates(t, e)
    assert len(cfg.loops) == 1 and cfg.loops[0].header == join
    assert cfg.loops[0].blocks == {join} and cfg.loop_depth(join) == 1 and cfg.loop_depth(e) == 0
    dot = cfg.to_dot()
    assert dot.startswith('digraph "k"') and "-> exit" in dot and dot.count("->") == g.number_of_edges()


def test_cbranch_kinds_and_indirect(kern):
    k, am = kern("""
        k:
            s_cbranch_execz .La
            s_cbranch_vccnz .Lb
            s_cbranch_cdbgsys .Lb
        .La:
            s_setpc_b64 s[0:1]
        .Lb:
            s_endpgm
    """)
    cfg = am.get(CFG, k)
    n = len(cfg.blocks)
    la = cfg.label_index[".La"]
    # s_setpc_b64 reaches every block and the exit (conservative)
    assert set(cfg.graph.successors(la)) == set(range(n)) | {EXIT}
    assert all(cfg.graph[la][s]["kind"] == "indirect" for s in cfg.graph.successors(la))
    assert cfg.graph[0][la]["kind"] == "taken"
    assert cfg.indirect_sources == [la]


def test_nested_loops_and_unreachable(kern):
    k, am = kern("""
        k:
            s_mov_b32 s0, 0
        .Louter:
            s_mov_b32 s1, 0
        .Linner:
            s_add_u32 s1, s1, 1
            s_cmp_lt_u32 s1, 4
            s_cbranch_scc1 .Linner
            s_add_u32 s0, s0, 1
            s_cmp_lt_u32 s0, 4
            s_cbranch_scc1 .Louter
            s_endpgm
        .Ldead:
            s_endpgm
    """)
    cfg = am.get(CFG, k)
    outer, inner = cfg.label_index[".Louter"], cfg.label_index[".Linner"]
    assert [lp.header for lp in cfg.loops] == [outer, inner]
    assert cfg.loop_depth(inner) == 2 and cfg.loop_depth(outer) == 1
    assert cfg.unreachable == [cfg.label_index[".Ldead"]]
    assert cfg.rpo()[0] == 0
