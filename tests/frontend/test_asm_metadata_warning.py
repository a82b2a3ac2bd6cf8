"""``asmevo asm`` warns when the code object it writes cannot be loaded by the HIP runtime
because the text has no ``.amdgpu_metadata`` block (issue 14)."""

import pathlib

import pytest

from asmevo.cli import main

EXAMPLE = pathlib.Path(__file__).resolve().parents[2] / "examples" / "vadd_f32.s"


def _strip_metadata(text: str) -> str:
    out, skip = [], False
    for line in text.splitlines(keepends=True):
        s = line.strip()
        if s.startswith(".amdgpu_metadata"):
            skip = True
        if not skip:
            out.append(line)
        if s.startswith(".end_amdgpu_metadata"):
            skip = False
    return "".join(out)


@pytest.mark.usefixtures("llvm_mc")
def test_warns_without_metadata(tmp_path, capsys):
    src = tmp_path / "k.s"
    src.write_text(_strip_metadata(EXAMPLE.read_text()))
    out = tmp_path / "k.co"
    assert main(["asm", str(src), "-o", str(out)]) == 0
    assert out.exists()
    err = capsys.readouterr().err
    assert "warning" in err and ".amdgpu_metadata" in err and "NT_AMDGPU_METADATA" in err
    assert "HIP runtime" in err and str(src) in err


@pytest.mark.usefixtures("llvm_mc")
def test_silent_with_metadata(tmp_path, capsys):
    out = tmp_path / "k.co"
    assert ".amdgpu_metadata" in EXAMPLE.read_text()
    assert main(["asm", str(EXAMPLE), "-o", str(out)]) == 0
    assert "warning" not in capsys.readouterr().err
