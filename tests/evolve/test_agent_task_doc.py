"""docs/evolve.md's agent protocol stays true: every JSON block in it parses, and the full
example task has the keys of a task the loop really sends (schema, last_answer, lineage
with per-operator counts, limits...)."""

import json
import pathlib
import re

from asmevo.evolve.agent import TASK_SCHEMA

DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "evolve.md"


def _json_blocks():
    return re.findall(r"```json\n(.*?)```", DOC.read_text(), re.S)


def test_every_json_block_of_the_doc_parses():
    blocks = _json_blocks()
    assert len(blocks) >= 3
    for b in blocks:
        json.loads(b)


def _shape(x, depth=0):
    """The key structure of a task: nested dict keys (lists: the shape of their first item)."""
    if isinstance(x, dict):
        return {k: _shape(v, depth + 1) for k, v in x.items()}
    if isinstance(x, list) and x and isinstance(x[0], dict):
        return [_shape(x[0], depth + 1)]
    return None


def test_full_example_task_matches_a_real_task(repeating_agent_run):
    doc = next(json.loads(b) for b in _json_blocks() if '"schema": "asmevo.evolve.task/' in b)
    assert doc["schema"] == TASK_SCHEMA
    _, state = repeating_agent_run
    real = json.loads((state / "task_2.json").read_text())   # after an evaluated, rejected edit
    assert real["schema"] == TASK_SCHEMA
    assert set(doc) == set(real)
    for key in ("k0", "parent", "lineage", "last_answer", "limits"):
        assert set(doc[key]) == set(real[key]), key
    assert set(doc["last_answer"]["candidate"]) == set(real["last_answer"]["candidate"])
    assert _shape(doc["lineage"]["operators"]) == _shape(real["lineage"]["operators"])
    assert set(doc["lineage"]["last_failures"][0]) == set(real["lineage"]["last_failures"][0])
    assert set(doc["parent"]["listing"][0]) == set(real["parent"]["listing"][0])
    text = DOC.read_text()
    for field in ("`last_answer`", "`repeats`", "`no-op`", "`duplicates`", "`no_ops`"):
        assert field in text, field
