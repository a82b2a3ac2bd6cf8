"""A broken evolve.toml through the CLI: one message naming the file, the line:column of a
syntax error, the key of an unknown / mistyped / bad value; exit status 2; no traceback.
A bad value given by a flag names the flag.  (In process: ``asmevo.cli.main``; every case
fails before K0 is loaded.)"""

import pytest

from asmevo.cli import main
from evolve_helpers import VADD_CO, VADD_JSON


def _evolve(tmp_path, capsys, toml: bytes | str | None, *flags):
    args = ["evolve", str(VADD_CO), "--harness", str(VADD_JSON), "--out", str(tmp_path / "r"),
            "--quiet", *flags]
    cfg = tmp_path / "evolve.toml"
    if toml is not None:
        cfg.write_bytes(toml if isinstance(toml, bytes) else toml.encode())
        args += ["--config", str(cfg)]
    rc = main(args)
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.strip()]
    return rc, lines, cfg


@pytest.mark.parametrize("toml,where,words", [
    # syntax errors: line:column from tomllib
    ("budget = 10\nseed = [\n", ":3:1:", ["not valid TOML", "Invalid value"]),
    ("budget = 3 3\n", ":1:12:", ["not valid TOML", "Expected newline"]),
    ("seed = 1\n[islands\n", ":2:9:", ["not valid TOML"]),
    (b'budget = "\xff"\n', ":1:11:", ["not UTF-8"]),
    # unknown keys: the key as written, its line
    ("seed = 1\nbogus_key = 1\n", ":2:1:", ["unknown config key 'bogus_key'", "budget"]),
    ("[islands]\ncount = 2\n[islands.ring]\nevery = 2\n", ":4:1:",
     ["unknown config key 'islands.ring.every'"]),
    ("evolve = 3\n", ":1:1:", ["config key 'evolve'", "table"]),
    # wrong types: key, expected and found type
    ("budget = \"x\"\n", ":1:1:", ["config key 'budget'", "expected an integer", "a string"]),
    ("[islands]\ncount = \"a\"\n", ":2:1:", ["config key 'islands.count'", "an integer"]),
    ("  target_speedup = \"fast\"\n", ":1:3:", ["config key 'target_speedup'", "a number"]),
    ("operators = [[1]]\n", ":1:1:", ["config key 'operators'", "operator names"]),
    ("kernel = 5\n", ":1:1:", ["config key 'kernel'", "a string"]),
    # bad values: key and what is allowed
    ("require = \"maybe\"\n", ":1:1:", ["config key 'require'", "'proved' or 'tested'"]),
    ("[evolve]\nseed = 1\njobs = 0\n", ":3:1:", ["config key 'evolve.jobs'", "positive integer"]),
    ("time = \"soon\"\n", ":1:1:", ["config key 'time'", "bad duration 'soon'"]),
    ("time = -5\n", ":1:1:", ["config key 'time'", "positive"]),
    ("operators = [\"nope\"]\n", ":1:1:", ["config key 'operators'", "unknown operator 'nope'"]),
])
def test_broken_config_names_file_and_key(tmp_path, capsys, toml, where, words):
    rc, lines, cfg = _evolve(tmp_path, capsys, toml)
    assert rc == 2
    assert len(lines) == 1, lines
    msg = lines[0]
    assert msg.startswith(f"asmevo evolve: {cfg}{where} error: "), msg
    for w in words:
        assert w in msg, (w, msg)
    assert "Traceback" not in msg and not (tmp_path / "r").exists()


def test_missing_config_file(tmp_path, capsys):
    rc = main(["evolve", str(VADD_CO), "--harness", str(VADD_JSON), "--out",
               str(tmp_path / "r"), "--config", str(tmp_path / "none.toml")])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "none.toml" in err[0] and "cannot read" in err[0]


def test_bad_flag_value_names_the_flag(tmp_path, capsys):
    rc, lines, _ = _evolve(tmp_path, capsys, None, "--budget", "-2")
    assert rc == 2 and lines == ["asmevo evolve: error: --budget: must be a non-negative "
                                 "integer, not -2"]
    rc, lines, _ = _evolve(tmp_path, capsys, None, "--time", "soon")
    assert rc == 2 and len(lines) == 1 and lines[0].startswith("asmevo evolve: error: --time: ")


def test_flag_overrides_a_bad_file_value(tmp_path):
    """The flag wins over the file; the file's value is then never used or reported."""
    from asmevo.evolve.config import load_config
    p = tmp_path / "c.toml"
    p.write_text("budget = -1\n")
    assert load_config(str(p), {"budget": 3}).budget == 3
