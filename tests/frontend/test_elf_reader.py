"""asmevo.frontend.elf reads what pyelftools reads, or declines the file.

``read_code_object`` takes its sections and symbols from the small struct-based reader
(pyelftools' import alone was some 35 ms of every ``asmevo dis``/``asm``, issue 16) and falls
back to pyelftools for every file that reader declines.  So on every file, corrupt ones
included, the two paths must give equal sections and symbols, or the same error."""

from __future__ import annotations

import glob
import os
import pathlib
import random
import struct

import pytest

from asmevo.errors import CodeObjectError
from asmevo.frontend import codeobject as C
from asmevo.frontend import elf as E

ROOT = pathlib.Path(__file__).resolve().parents[2]


def _outcome(fn, path, data):
    try:
        return ("ok", fn(path, data))
    except CodeObjectError as e:
        return ("error", str(e))


def _elf_files(*roots) -> list[str]:
    out = []
    for root in roots:
        for p in glob.glob(os.path.join(str(root), "**", "*"), recursive=True):
            if "/.git/" in p or not os.path.isfile(p):
                continue
            with open(p, "rb") as f:
                if f.read(4) == b"\x7fELF":
                    out.append(p)
    return sorted(out)


def _same(path: str, data: bytes) -> bool:
    try:
        C._check_header(path, data)
    except CodeObjectError:
        return True  # rejected before either reader runs
    return _outcome(C._read_tables, path, data) == _outcome(C._read_tables_pyelftools, path, data)


def test_repository_code_objects_read_as_pyelftools_reads_them():
    files = _elf_files(ROOT / "tests", ROOT / "examples")
    assert files
    for p in files:
        data = pathlib.Path(p).read_bytes()
        assert _same(p, data), p


@pytest.mark.corpus
def test_corpus_code_objects_take_the_fast_reader(corpus_dir):
    files = _elf_files(corpus_dir)
    assert files
    for p in files:
        data = pathlib.Path(p).read_bytes()
        assert E.read_elf(data) is not None, p  # no corpus file needs pyelftools
        assert _same(p, data), p


def test_mutated_code_objects_read_or_fail_as_with_pyelftools():
    files = sorted(_elf_files(ROOT / "tests", ROOT / "examples"), key=os.path.getsize)[:12]
    assert files
    rng = random.Random(16)
    checked = 0
    for n in range(1500):
        p = rng.choice(files)
        data = bytearray(pathlib.Path(p).read_bytes())
        shoff, = struct.unpack_from("<Q", data, 40)
        shnum, = struct.unpack_from("<H", data, 60)
        for _ in range(rng.randint(1, 4)):
            if rng.random() < 0.6 and shnum and shoff + 64 * shnum <= len(data):
                pos = shoff + rng.randrange(64 * shnum)  # section headers: types, links, sizes
            else:
                pos = rng.randrange(64, len(data))
            data[pos] = rng.randrange(256) if rng.random() < 0.5 else data[pos] ^ (1 << rng.randrange(8))
        checked += 1
        assert _same(p, bytes(data)), (p, n)
    assert checked
