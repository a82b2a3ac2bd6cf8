"""Control-flow graph of one kernel: blocks, edges, dominators, natural loops.

Nodes of :attr:`CFG.graph` (a ``networkx.DiGraph``) are block indices
``0..n-1`` (layout order, 0 is the entry) plus the virtual node :data:`EXIT`.
Edges carry ``kind``: ``"taken"``, ``"fallthrough"``, ``"exit"`` or
``"indirect"``.

Branch semantics (CDNA3 ISA guide, "Program flow control"):

* ``s_branch L`` -> L only;
* ``s_cbranch_{scc0,scc1,vccz,vccnz,execz,execnz,cdbgsys,cdbguser,cdbgsys_or_user,
  cdbgsys_and_user} L`` -> L and the next block;
* ``s_setpc_b64`` -> an unknown address: conservatively every block and EXIT;
* ``s_swappc_b64`` / ``s_call_b64`` (calls) -> the next block, plus, conservatively,
  every block and EXIT;
* ``s_endpgm*`` -> EXIT; the last block falling off the end -> EXIT.

A branch to a label that is not in the kernel, or to ``label+addend``, is
treated as indirect.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import networkx as nx

from ..ir.operands import Label
from . import Analysis

#: The virtual exit node.
EXIT = "exit"

_COND_BRANCHES = ("s_cbranch_scc0", "s_cbranch_scc1", "s_cbranch_vccz", "s_cbranch_vccnz",
                  "s_cbranch_execz", "s_cbranch_execnz", "s_cbranch_cdbgsys",
                  "s_cbranch_cdbguser", "s_cbranch_cdbgsys_or_user",
                  "s_cbranch_cdbgsys_and_user")


def is_branch(op: str) -> bool:
    """Whether ``op`` changes control flow (branches, calls, ``s_setpc``, ``s_endpgm``)."""
    return (op == "s_branch" or op.startswith("s_cbranch_") or op in (
        "s_setpc_b64", "s_swappc_b64", "s_call_b64") or op.startswith("s_endpgm"))


@dataclass(frozen=True)
class Loop:
    """A natural loop: ``header`` block, ``blocks`` (header included), back-edge ``latches``."""

    header: int
    blocks: frozenset
    latches: tuple

    def __contains__(self, b) -> bool:
        return b in self.blocks


class CFG(Analysis):
    """The control-flow graph (see module docstring) with dominators and loops.

    Attributes:
        graph: ``networkx.DiGraph`` over block indices and :data:`EXIT`.
        blocks: the kernel's blocks (``graph`` node ``i`` is ``blocks[i]``).
        label_index: label -> block index.
        idom: immediate dominators of reachable blocks (entry maps to itself).
        ipdom: immediate post-dominators (EXIT maps to itself); blocks that cannot
            reach EXIT are absent.
        loops: natural loops, outermost first.
        unreachable: blocks not reachable from the entry.
    """

    name = "cfg"

    def __init__(self, kernel, manager=None):
        super().__init__(kernel, manager)
        self.blocks = list(kernel.blocks)
        n = len(self.blocks)
        self.label_index = {b.label: i for i, b in enumerate(self.blocks) if b.label}
        g = nx.DiGraph()
        g.add_nodes_from(range(n))
        g.add_node(EXIT)
        self.indirect_sources: list[int] = []
        for i, b in enumerate(self.blocks):
            falls = True
            for inst in b.instructions:
                op = inst.opcode
                if not is_branch(op):
                    continue
                if op.startswith("s_endpgm"):
                    g.add_edge(i, EXIT, kind="exit")
                    falls = False
                    break
                if op == "s_branch" or op in _COND_BRANCHES:
                    tgt = self._target(inst)
                    if tgt is None:
                        self._indirect(g, i)
                    else:
                        g.add_edge(i, tgt, kind="taken")
                    if op == "s_branch":
                        falls = False
                        break
                elif op.startswith("s_cbranch_"):  # unknown conditional branch kind
                    self._indirect(g, i)
                elif op == "s_setpc_b64":
                    self._indirect(g, i)
                    falls = False
                    break
                else:  # calls return to the next instruction
                    self._indirect(g, i)
            if falls:
                if i + 1 < n:
                    if not g.has_edge(i, i + 1):
                        g.add_edge(i, i + 1, kind="fallthrough")
                else:
                    g.add_edge(i, EXIT, kind="exit")
        self.graph = g
        self.entry = 0
        reach = nx.descendants(g, 0) | {0} if n else set()
        self.unreachable = sorted(i for i in range(n) if i not in reach)
        self._pos = {id(inst): (bi, ii) for bi, b in enumerate(self.blocks)
                     for ii, inst in enumerate(b.instructions)}

    # dominators and loops are computed on first use (kernel_flow and liveness need neither)
    @functools.cached_property
    def idom(self) -> dict:
        """Immediate dominators of reachable blocks (entry maps to itself)."""
        idom = dict(nx.immediate_dominators(self.graph, 0)) if self.blocks else {}
        if self.blocks:
            idom[0] = 0  # networkx >= 3.5 leaves the start out
        return idom

    @functools.cached_property
    def ipdom(self) -> dict:
        """Immediate post-dominators (EXIT maps to itself)."""
        ipdom = dict(nx.immediate_dominators(self.graph.reverse(copy=False), EXIT))
        ipdom[EXIT] = EXIT
        return ipdom

    @functools.cached_property
    def loops(self) -> list[Loop]:
        """Natural loops, outermost first."""
        return self._natural_loops()

    @functools.cached_property
    def _depth(self) -> dict:
        depth = {i: 0 for i in range(len(self.blocks))}
        for lp in self.loops:
            for b in lp.blocks:
                depth[b] += 1
        return depth

    # -- construction helpers -----------------------------------------------------------------
    def _target(self, inst) -> int | None:
        for o in inst.operands:
            if isinstance(o, Label):
                if o.addend == 0 and o.name in self.label_index:
                    return self.label_index[o.name]
                return None
        return None

    def _indirect(self, g: nx.DiGraph, i: int) -> None:
        self.indirect_sources.append(i)
        for j in range(len(self.blocks)):
            if not g.has_edge(i, j):
                g.add_edge(i, j, kind="indirect")
        if not g.has_edge(i, EXIT):
            g.add_edge(i, EXIT, kind="indirect")

    def _natural_loops(self) -> list[Loop]:
        by_header: dict[int, tuple[set, list]] = {}
        for u, h in self.graph.edges():
            if u == EXIT or h == EXIT or u not in self.idom:
                continue
            if self.dominates(h, u):
                body = {h}
                stack = [u]
                while stack:
                    x = stack.pop()
                    if x in body:
                        continue
                    body.add(x)
                    stack.extend(p for p in self.graph.predecessors(x) if p != EXIT)
                blocks, latches = by_header.setdefault(h, (set(), []))
                blocks |= body
                latches.append(u)
        loops = [Loop(h, frozenset(bl), tuple(sorted(la))) for h, (bl, la) in by_header.items()]
        loops.sort(key=lambda lp: (-len(lp.blocks), lp.header))
        return loops

    # -- queries ---------------------------------------------------------------------------------
    def successors(self, b: int) -> list:
        """Successor nodes of block ``b`` (block indices and possibly :data:`EXIT`)."""
        return list(self.graph.successors(b))

    def predecessors(self, b) -> list[int]:
        """Predecessor block indices of node ``b``."""
        return list(self.graph.predecessors(b))

    def dominates(self, a, b) -> bool:
        """Whether block ``a`` dominates block ``b`` (every entry path to ``b`` passes ``a``)."""
        if b not in self.idom:
            return False
        while True:
            if a == b:
                return True
            p = self.idom[b]
            if p == b:
                return False
            b = p

    def postdominates(self, a, b) -> bool:
        """Whether node ``a`` post-dominates node ``b`` (every path from ``b`` to EXIT passes ``a``)."""
        if b not in self.ipdom:
            return False
        while True:
            if a == b:
                return True
            p = self.ipdom[b]
            if p == b:
                return False
            b = p

    def loop_depth(self, b: int) -> int:
        """Number of natural loops containing block ``b``."""
        return self._depth.get(b, 0)

    def rpo(self) -> list[int]:
        """Reachable blocks in reverse post-order (good order for forward dataflow)."""
        if not self.blocks:
            return []
        order = list(nx.dfs_postorder_nodes(self.graph, 0))
        return [b for b in reversed(order) if b != EXIT]

    def position(self, inst) -> tuple[int, int]:
        """``(block index, instruction index)`` of ``inst`` (by identity).

        Raises:
            KeyError: ``inst`` was not in the kernel when the CFG was built.
        """
        return self._pos[id(inst)]

    def block_name(self, b) -> str:
        """Printable name of a node: its label, or ``bb<N>``, or ``exit``."""
        if b == EXIT:
            return "exit"
        lab = self.blocks[b].label
        return lab if lab else f"bb{b}"

    def to_dot(self) -> str:
        """Graphviz text of the CFG (``dot -Tsvg``), one node per block with its size."""
        lines = [f'digraph "{self.kernel.name}" {{', "  node [shape=box fontname=monospace];"]
        for i, b in enumerate(self.blocks):
            first = b.instructions[0].text() if b.instructions else ""
            last = b.instructions[-1].text() if len(b.instructions) > 1 else ""
            lab = f"{self.block_name(i)} ({len(b.instructions)} inst)\\l{_esc(first)}\\l"
            if last:
                lab += f"...\\l{_esc(last)}\\l"
            lines.append(f'  n{i} [label="{lab}"];')
        lines.append('  exit [shape=oval label="exit"];')
        for u, v, d in self.graph.edges(data=True):
            su = "exit" if u == EXIT else f"n{u}"
            sv = "exit" if v == EXIT else f"n{v}"
            style = {"taken": "solid", "fallthrough": "dashed", "exit": "solid",
                     "indirect": "dotted"}.get(d.get("kind"), "solid")
            lines.append(f'  {su} -> {sv} [label="{d.get("kind", "")}" style={style}];')
        lines.append("}")
        return "\n".join(lines) + "\n"

    def to_json(self) -> dict:
        """Blocks, edges, dominators and loops as plain JSON data."""
        return {
            "blocks": [{"index": i, "name": self.block_name(i),
                        "instructions": len(b.instructions), "loop_depth": self.loop_depth(i)}
                       for i, b in enumerate(self.blocks)],
            "edges": [{"from": self.block_name(u), "to": self.block_name(v), "kind": d.get("kind")}
                      for u, v, d in self.graph.edges(data=True)],
            "idom": {self.block_name(b): self.block_name(d) for b, d in self.idom.items()},
            "ipdom": {self.block_name(b): self.block_name(d) for b, d in self.ipdom.items()},
            "loops": [{"header": self.block_name(lp.header),
                       "blocks": sorted(self.block_name(b) for b in lp.blocks),
                       "latches": [self.block_name(b) for b in lp.latches]} for lp in self.loops],
            "unreachable": [self.block_name(b) for b in self.unreachable],
        }


def _esc(s: str) -> str:
    return s.replace("\\", "\\\\").replace('"', '\\"')
