"""Config file + flags."""

import pytest

from asmevo.errors import AsmevoError
from asmevo.evolve.config import load_config, parse_duration


def test_toml_then_flags(tmp_path):
    p = tmp_path / "evolve.toml"
    p.write_text('budget = 7\nseed = 3\noperators = ["mutate"]\n[islands]\ncount = 2\n')
    c = load_config(str(p), {"seed": 5, "time": "2m", "budget": None})
    assert (c.budget, c.seed, c.islands, c.time, c.operators) == (7, 5, 2, 120.0, ["mutate"])


@pytest.mark.parametrize("text", ["budget = \n", "bogus_key = 1\n", "budget = 'x'\n",
                                  "require = 'maybe'\n", "operators = ['nope']\n"])
def test_broken_config(tmp_path, text):
    p = tmp_path / "c.toml"
    p.write_text(text)
    with pytest.raises(AsmevoError):
        load_config(str(p))


def test_duration():
    assert parse_duration("30m") == 1800 and parse_duration("1.5h") == 5400
    with pytest.raises(AsmevoError):
        parse_duration("soon")
