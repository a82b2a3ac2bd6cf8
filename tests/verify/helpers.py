"""Shared helpers for the verifier tests: load a corpus .s and edit its text."""

from __future__ import annotations

import pathlib
import re

from asmevo.frontend.asm_parser import parse_asm


def load_text(path: pathlib.Path) -> str:
    return path.read_text()


def parse(text: str, name: str = "cand.s"):
    return parse_asm(text, name)


def sub1(text: str, pattern: str, repl: str) -> str:
    """Replace exactly the first match of ``pattern`` (regex, multiline); fail if absent."""
    new, n = re.subn(pattern, repl, text, count=1, flags=re.M)
    assert n == 1, f"pattern {pattern!r} not found"
    return new
