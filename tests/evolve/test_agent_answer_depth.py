"""An agent answer nested 5,000 deep is a malformed answer (a recorded agent failure), not a
RecursionError out of json (which the loop would record as an operator bug)."""

import sys

import pytest

from asmevo.evolve.agent import run_agent
from asmevo.evolve.operators import OperatorFailure


def test_deeply_nested_answer_is_malformed():
    cmd = f"{sys.executable} -c \"print('{{\\\"kind\\\": ' + '[' * 5000 + ']' * 5000 + '}}')\""
    with pytest.raises(OperatorFailure, match="malformed answer: JSON nested too deeply"):
        run_agent(cmd, {"schema": "x"}, timeout=30)
