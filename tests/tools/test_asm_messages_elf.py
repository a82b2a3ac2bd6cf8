"""asmevo asm takes assembly text only: its messages say so, and an ELF file of another
machine is not called a code object (newcomer findings)."""

import shutil

import pytest

from asmevo.cli import main


def _asm(tmp_path, capsys, data: bytes, name="in.s"):
    p = tmp_path / name
    p.write_bytes(data)
    rc = main(["asm", str(p), "-o", str(tmp_path / "out.co")])
    err = capsys.readouterr().err
    assert rc == 2 and "Traceback" not in err
    return err


def test_not_utf8_expects_assembly_text_only(tmp_path, capsys):
    err = _asm(tmp_path, capsys, b"s_nop 0\n\xff\xfe")
    assert err.rstrip().endswith("not UTF-8 text at byte 8; expected assembly text"), err


def test_foreign_elf_is_not_called_a_code_object(tmp_path, capsys):
    elf = shutil.which("ls")
    if elf is None:
        pytest.skip("no ls binary")
    err = _asm(tmp_path, capsys, open(elf, "rb").read())
    assert "an ELF file for another machine (e_machine 62" in err or \
        "an ELF file for another machine (e_machine 183" in err, err
    assert "this is a code object" not in err


def test_amdgpu_code_object_points_to_dis(tmp_path, capsys):
    import pathlib
    co = pathlib.Path(__file__).resolve().parents[2] / "examples" / "vadd_f32.co"
    err = _asm(tmp_path, capsys, co.read_bytes())
    assert "this is a code object (ELF); expected assembly text (use 'asmevo dis' first)" in err
