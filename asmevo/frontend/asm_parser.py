"""gfx942 assembly text -> asmevo IR.

The syntax of one line (labels, a directive or an instruction, comments) is
defined once, in ``grammar.lark`` (Lark LALR, contextual lexer).  The
:class:`_ToIR` transformer runs during the parse (no parse tree is built), and
results are memoised per distinct line text: real kernels repeat a handful of
thousand distinct lines tens of thousands of times.

File structure (functions, basic blocks, ``.amdhsa_kernel`` and
``.amdgpu_metadata`` blocks) is assembled from the per-line results by
:func:`parse_asm`:

* a function's code starts at the label of a symbol declared
  ``.type NAME,@function`` (or, in a file without any ``.type ...,@function``,
  at any non-local label in a text section that is followed by an
  instruction and is not a branch target) and ends at its ``.size``
  directive, a section change, or the next function; instructions before any
  function label (a snippet) form a function named ``.Lasmevo_func<N>`` (a
  local label, so printing adds no symbol);
* blocks split at labels, after branches (``s_branch``, ``s_cbranch_*``,
  ``s_setpc_b64``) and ``s_endpgm``, and where a directive sits between
  instructions (that directive belongs to the next block's ``directives``);
* directives between functions stay top-level :class:`Directive` items;
* the IR holds nothing it does not model (:func:`_code_directive`): a directive that
  repeats or conditionally includes lines (``.rept``/``.irp``/``.endr``, ``.if*``/
  ``.else``/``.endif``, ``.macro``, ``.include``) is refused anywhere, and inside a
  function's code only directives that emit no bytes are kept (``.loc``, ``.cfi_*``,
  ``.set``...) and alignment without a fill value (``s_nop`` padding); ``.long``/``.int``/``.4byte`` words there become raw instructions (the
  bytes they are: ``asmevo dis``'s ``.long WORDS ; INSTRUCTION`` form with the comment's
  instruction, else one opaque word each, as the disassembler keeps a word it cannot
  decode); any other data, fill or alignment directive in code is refused.  Every error is
  located at ``file:line:column``.

Outside the grammar, Python only (a) blanks ``/* */`` comments that span
lines, (b) cuts a trailing ``;``/``//`` comment to form the memo key, and (c)
collects the verbatim YAML lines of ``.amdgpu_metadata``.

Syntax follows LLVM's AMDGPUAsmParser / AMDGPUInstPrinter (LLVM 19, gfx942).
Speed (benchmarks/parse.py, largest AITer kernel, ~33k instructions): about
185,000 instructions/s of CPU time with a cold memo (llvm-mc: ~140,000), instruction
lines through :func:`_fast_line`.
"""

from __future__ import annotations

import pathlib
import re
import sys

from ..errors import AsmSyntaxError, NotModelledError
from ..ir.instruction import Instruction
from ..ir.module import (AmdhsaKernel, BasicBlock, Directive, Kernel, LabelDef, MetadataBlock,
                         Module)
from ..ir.operands import Expr, Func, FuncList, Imm, Label, Reg, Special, Src

__all__ = ["parse_asm", "parse_instruction", "parse_line", "GRAMMAR_PATH", "ANON_PREFIX"]

GRAMMAR_PATH = pathlib.Path(__file__).with_name("grammar.lark")

#: Name given to a function made for instructions that appear before any
#: function label (e.g. a snippet); a local label, so printing it adds no symbol.
ANON_PREFIX = ".Lasmevo_func"

_intern = sys.intern


_VARIANTS = ("_e32", "_e64", "_dpp", "_sdwa")


def _int(text: str) -> int:
    t = text.lower()
    if t.startswith("0x"):
        return int(t, 16)
    if t.startswith("0b"):
        return int(t[2:], 2)
    return int(t, 10)


# ---------------------------------------------------------------------------
# Transformer: tokens/rules -> IR values.  Expression nodes are carried as
# (text, kind, value) triples so that a plain label or number becomes a Label
# or Imm and anything else an Expr with normalised text.
# ---------------------------------------------------------------------------

class _LineError(ValueError):
    """A well-formed but invalid construct found by the transformer (column is 1-based)."""

    def __init__(self, message: str, column: int = 1):
        super().__init__(message)
        self.column = column


_E_INT, _E_FLOAT, _E_IDENT, _E_LABEL, _E_OTHER = range(5)


class _ToIRMethods:
    """Build IR values while parsing (the methods of the transformer passed to Lark as
    ``transformer=``; Lark itself is imported only when a line needs it)."""

    # -- line ------------------------------------------------------------
    def start(self, *items):
        labels = []
        stmt = None
        for it in items:
            if isinstance(it, str):  # LABEL_DEF (a lark Token)
                labels.append(_intern(it.value[:-1].rstrip()))
            else:
                stmt = it
        return tuple(labels), stmt

    def directive(self, name, args=None):
        return ("d", _intern(str(name)), str(args).strip() if args is not None else "")

    def instruction(self, mnemonic, *rest):
        operands = ()
        mods = []
        for r in rest:
            if type(r) is list:
                operands = tuple(r)
            else:
                mods.append(r)
        opcode = _intern(mnemonic.value.lower())
        if opcode.startswith("v_") and not opcode.endswith(_VARIANTS):
            # the encoding llvm-mc picks (v_cmp_le_u32 s[0:1], ... -> v_cmp_le_u32_e64)
            from .typecheck import select_encoding
            opcode = _intern(select_encoding(opcode, operands, mods))
        return ("i", opcode, operands, tuple(mods), _is_terminator(opcode))

    def operands(self, *ops):
        return list(ops)

    # -- operands --------------------------------------------------------
    def src(self, b):
        return b

    def src_neg(self, b):
        if type(b) is Imm:
            v = b.value
            return Imm(-v, "-" + b.text)
        if type(b) is Src:  # -sext(x)
            return Src(b.base, neg=True, abs=b.abs, sext=b.sext)
        return Src(b, neg=True)

    def abs_negconst(self, b):
        if type(b) is not Imm:
            raise _LineError(f"'-' inside |...| applies only to a constant, not {b}")
        return Imm(-b.value, "-" + b.text)

    def src_abs(self, b):
        if type(b) is Src:  # |sext(x)|
            return Src(b.base, abs=True, sext=b.sext)
        return Src(b, abs=True)

    def src_negabs(self, b):
        if type(b) is Src:
            return Src(b.base, neg=True, abs=True, sext=b.sext)
        return Src(b, neg=True, abs=True)

    def src_fneg(self, _tok, s):
        if type(s) is Src:
            if s.neg or s.style == "bar" and s.abs:
                raise _LineError("neg() applied to an operand that already has a modifier")
            return Src(s.base, neg=True, abs=s.abs, sext=s.sext, style="func")
        return Src(s, neg=True, style="func")

    def src_fabs(self, _tok, s):
        if type(s) is Src:
            if s.neg or s.abs:
                raise _LineError("abs() applied to an operand that already has a modifier")
            return Src(s.base, abs=True, sext=s.sext, style="func")
        return Src(s, abs=True, style="func")

    def src_sext(self, _tok, s):
        if type(s) is Src:
            raise _LineError("sext() applies to a plain operand")
        return Src(s, sext=True)

    def reg(self, t):
        v = t.value
        if v[0] == "t":
            return Reg("ttmp", int(v[4:]))
        return Reg(v[0], int(v[1:]))

    def regrange(self, t):
        v = t.value
        f = "ttmp" if v[0] == "t" else v[0]
        inner = v[v.index("[") + 1:-1]
        if ":" in inner:
            lo, hi = inner.split(":")
            lo, hi = int(lo), int(hi)
        else:
            lo = hi = int(inner)
        if hi < lo:
            raise _LineError(f"register range {v} ends before it starts", t.column)
        return Reg(f, lo, hi - lo + 1)

    def special(self, t):
        return Special(_intern(t.value))

    def func(self, name, *args):
        if len(args) == 1 and args[0] is None:
            args = ()
        return Func(_intern(name.value), tuple(args))

    def funclist(self, *funcs):
        return FuncList(tuple(funcs))

    def farg_int(self, t):
        return _int(t.value)

    def farg_negint(self, t):
        return -_int(t.value)

    def farg_ident(self, t):
        return t.value

    def farg_string(self, t):
        return t.value

    def expr_operand(self, e):
        text, kind, value = e
        if kind == _E_INT or kind == _E_FLOAT:
            return Imm(value, text)
        if kind == _E_IDENT:
            return Label(value)
        if kind == _E_LABEL:
            return Label(*value)
        return Expr(text)

    # -- expressions -----------------------------------------------------
    def e_int(self, t):
        return (t.value, _E_INT, _int(t.value))

    def e_float(self, t):
        return (t.value, _E_FLOAT, float(t.value))

    def e_ident(self, t):
        v = t.value
        # sym@rel32@lo is a relocation expression, not a code label
        return (v, _E_OTHER if "@" in v else _E_IDENT, v)

    def e_paren(self, e):
        return (f"({e[0]})", _E_OTHER, None)

    def e_paren_neg(self, e):
        return (f"(-{e[0]})", _E_OTHER, None)

    def e_not(self, e):
        return (f"~{e[0]}", _E_OTHER, None)

    def _bin(op):  # noqa: N805 - helper building methods
        def f(self, a, b):
            return (f"{a[0]}{op}{b[0]}", _E_OTHER, None)
        return f

    e_mul = _bin("*")
    e_div = _bin("/")
    e_mod = _bin("%")
    e_shl = _bin("<<")
    e_shr = _bin(">>")
    e_and = _bin("&")
    e_xor = _bin("^")

    def e_add(self, a, b):
        if a[1] == _E_IDENT and b[1] == _E_INT:
            return (f"{a[0]}+{b[0]}", _E_LABEL, (a[2], b[2]))
        return (f"{a[0]}+{b[0]}", _E_OTHER, None)

    def e_sub(self, a, b):
        if a[1] == _E_IDENT and b[1] == _E_INT:
            return (f"{a[0]}-{b[0]}", _E_LABEL, (a[2], -b[2]))
        return (f"{a[0]}-{b[0]}", _E_OTHER, None)

    del _bin

    # -- modifiers -------------------------------------------------------
    def mod_flag(self, t):
        return (_intern(t.value), True)

    def mod_kv(self, key, value):
        return (_intern(key.value[:-1]), value)

    def mv_int(self, t):
        return _int(t.value)

    def mv_negint(self, t):
        return -_int(t.value)

    def mv_ident(self, t):
        return _intern(t.value)

    def mv_list(self, *items):
        if len(items) == 1 and items[0] is None:
            return ()
        return tuple(items)

    def mv_func(self, f):
        return f


_PARSER = None


def _parser():
    """The Lark line parser, built once per process (and cached on disk by Lark); lark is
    imported here, on the first line the fast path (:func:`_fast_line`) leaves to it."""
    global _PARSER
    if _PARSER is None:
        from lark import Lark, Transformer, v_args

        # lark decorates only a class's own methods (not inherited ones): copy them
        methods = {k: v for k, v in vars(_ToIRMethods).items() if not k.startswith("__")}
        _ToIR = v_args(inline=True)(type("_ToIR", (Transformer,), methods))
        _PARSER = Lark(GRAMMAR_PATH.read_text(), parser="lalr", lexer="contextual",
                       transformer=_ToIR(), maybe_placeholders=True, cache=True,
                       propagate_positions=False)
    return _PARSER


# ---------------------------------------------------------------------------
# Error messages
# ---------------------------------------------------------------------------

_TERMINAL_NAMES = {
    "LABEL_DEF": "a label", "DIRECTIVE_NAME": "a directive",
    "DIRECTIVE_ARGS": "directive arguments",
    "MNEMONIC": "a mnemonic", "REG": "a register", "REGRANGE": "a register range",
    "SPECIAL": "a special register", "FLAG": "a modifier", "MODKEY": "a modifier 'name:'",
    "NEG": "neg(", "ABS": "abs(", "SEXT": "sext(", "IDENT": "an identifier",
    "INT": "an integer", "FLOAT": "a float", "STRING": "a string", "$END": "end of line",
    "COMMA": "','", "LPAR": "'('", "RPAR": "')'", "LSQB": "'['", "RSQB": "']'",
    "MINUS": "'-'", "PLUS": "'+'", "VBAR": "'|'", "STAR": "'*'", "SLASH": "'/'",
    "PERCENT": "'%'", "TILDE": "'~'", "AMPERSAND": "'&'", "CIRCUMFLEX": "'^'",
    "__ANON_0": "'<<'", "__ANON_1": "'>>'",
}


_OPERAND_START = frozenset({"REG", "REGRANGE", "SPECIAL", "INT", "FLOAT", "IDENT", "NEG", "ABS",
                            "SEXT", "MINUS", "VBAR", "LPAR", "TILDE"})
_OPERATORS = frozenset({"PLUS", "MINUS", "STAR", "SLASH", "PERCENT", "AMPERSAND", "CIRCUMFLEX"})


def _readable(expected) -> str:
    """Lark's expected terminal set as words, grouped: "',' or a modifier or end of line"."""
    exp = set(expected)
    names: list[str] = []
    if len(exp & {"REG", "REGRANGE", "SPECIAL", "INT", "IDENT"}) >= 4:
        names.append("an operand (register, constant, label or expression)")
        exp -= _OPERAND_START
    ops = {e for e in exp if e in _OPERATORS or e.startswith("__ANON")}
    if len(ops) >= 3:
        names.append("an operator")
        exp -= ops
    if "FLAG" in exp or "MODKEY" in exp:
        names.append("a modifier")
        exp -= {"FLAG", "MODKEY"}
    names += sorted(_TERMINAL_NAMES.get(e, e) for e in exp if e != "$END")
    if "$END" in exp:
        names.append("end of line")
    if len(names) <= 2:
        return " or ".join(names)
    return ", ".join(names[:-1]) + " or " + names[-1]


def _shown(value: str) -> str:
    """The start of an unexpected token, for messages (up to a blank or comma)."""
    m = re.match(r"[^\s,]{1,24}", value)
    return m.group(0) if m else value[:1]


def _syntax_error(err: Exception, line_text: str, filename: str, lineno: int) -> AsmSyntaxError:
    from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedToken, VisitError
    if isinstance(err, UnexpectedCharacters):
        col = err.column
        ch = line_text[col - 1:col] if 0 < col <= len(line_text) else ""
        msg = f"unexpected character {ch!r}"
        allowed = getattr(err, "allowed", None)
        if allowed:
            msg += f"; expected {_readable(allowed)}"
    elif isinstance(err, UnexpectedToken):
        tok = err.token
        if tok.type == "$END":
            col = len(line_text.rstrip()) + 1
            msg = "unexpected end of line"
        else:
            col = tok.column
            msg = f"unexpected {_shown(tok.value)!r}"
        msg += f"; expected {_readable(getattr(err, 'accepts', None) or err.expected)}"
    elif isinstance(err, UnexpectedEOF):
        col = len(line_text.rstrip()) + 1
        msg = f"unexpected end of line; expected {_readable(err.expected)}"
    elif isinstance(err, _LineError):
        col = err.column
        msg = str(err)
    elif isinstance(err, VisitError):
        col = 1
        msg = str(err.orig_exc)
    else:
        col = 1
        msg = str(err)
    return AsmSyntaxError(f"{msg}\n{source_excerpt(line_text, col)}", file=filename, line=lineno,
                          column=col)


def source_excerpt(line: str, column: int) -> str:
    """The source line and a caret under 1-based ``column`` (tabs kept for alignment)."""
    line = line.rstrip()
    pad = "".join(c if c == "\t" else " " for c in line[:max(column - 1, 0)])
    return f"{line}\n{pad}^"


# ---------------------------------------------------------------------------
# Fast path: instruction lines in the shape llvm-objdump and clang print them
# ---------------------------------------------------------------------------
#
# Real kernels are almost all lines like ``v_add_f32_e32 v0, v1, v2`` or
# ``buffer_load_dword v1, v2, s[0:3], 0 offen offset:16``.  :func:`_fast_line` parses
# those with the grammar's own terminal regexes (read from ``grammar.lark``) and builds
# exactly the values the Lark transformer builds; anything else (labels, directives,
# expressions, ``neg(``/``abs(``/``sext(``, comments, unusual spacing, errors) returns
# ``None`` and goes to Lark, which stays the definition of the syntax and of its error
# messages.  tests/frontend/test_fast_path.py compares the two on every corpus line.

def _grammar_terminals() -> dict[str, str]:
    out = {}
    for ln in GRAMMAR_PATH.read_text().splitlines():
        m = re.match(r"^([A-Z_]+)(?:\.\d+)?: /(.*)/$", ln)
        if m:
            out[m.group(1)] = m.group(2)
    return out


_T = _grammar_terminals()
# After the mnemonic and after an operand, the contextual lexer accepts the modifier
# terminals (FLAG, MODKEY), which outrank IDENT; after a comma it does not.
_F_MOD = re.compile(rf"(?P<flag>{_T['FLAG']})|(?P<key>{_T['MODKEY']})")
_F_BASE = re.compile(
    rf"(?P<rr>{_T['REGRANGE']})|(?P<reg>{_T['REG']})|(?P<sp>{_T['SPECIAL']})"
    rf"|(?P<fl>{_T['FLOAT']})|(?P<int>{_T['INT']})|(?P<id>{_T['IDENT']})")
_F_INT = re.compile(rf"-?(?:{_T['INT']})")
_F_IDENT = re.compile(_T["IDENT"])
_F_REG_NAME = re.compile(r"(?:ttmp|[vsa])\d+")
_F_SEP = re.compile(r"[ \t]*,[ \t]*")
_F_MNEMONIC = re.compile(r"[ \t]*([a-z][a-z0-9_]*)(?: |$)")
_F_BAD = re.compile(r"[\"/;*+%<>^~&\r\f\n]|neg\(|abs\(|sext\(")
_F_NOT_NAME = frozenset({"neg", "abs", "sext"})


def _fast_items(s: str, pos: int, close: str):
    """Integers and names separated by commas, from just after an opening bracket at ``pos``
    up to ``close``: (tuple, position after ``close``) or None."""
    items = []
    if s.startswith(close, pos):
        return (), pos + 1
    while True:
        m = _F_INT.match(s, pos)
        if m:
            t = m.group(0)
            items.append(-_int(t[1:]) if t[0] == "-" else _int(t))
        else:
            m = _F_IDENT.match(s, pos)
            if m is None:
                return None
            items.append(_intern(m.group(0)))
        pos = m.end()
        if s.startswith(close, pos):
            return tuple(items), pos + 1
        m = _F_SEP.match(s, pos)
        if m is None:
            return None
        pos = m.end()


def _fast_func_args(s: str, pos: int):
    """``(a, b, c)`` from the ``(`` at ``pos``: (args tuple, position after ``)``) or None."""
    return _fast_items(s, pos + 1, ")")


#: register operands made by :func:`_fast_base`, by their text (``v7``, ``s[4:7]``, ``vcc``):
#: operands are immutable values, so one object serves every line that names the register
#: (a large kernel names a few hundred registers in some 13,000 operands; making each anew
#: was a third of the fast path's time).  Bounded: at most one entry per register spelling.
_REG_MEMO: dict[str, object] = {}


def _fast_base(s: str, pos: int):
    """A base operand at ``pos``: (value, end) or None."""
    m = _F_BASE.match(s, pos)
    if m is None:
        return None
    kind = m.lastgroup
    end = m.end()
    if kind == "reg" or kind == "rr" or kind == "sp":
        v = m.group(0)
        op = _REG_MEMO.get(v)
        if op is None:
            op = _fast_register(kind, v)
            if op is None:
                return None
            _REG_MEMO[v] = op
        return op, end
    if kind == "id":
        v = m.group(0)
        if end < len(s) and s[end] == "(":
            if v in _F_NOT_NAME or _F_REG_NAME.fullmatch(v):
                return None
            r = _fast_func_args(s, end)
            if r is None:
                return None
            return Func(_intern(v), r[0]), r[1]
        return (Expr(v) if "@" in v else Label(v)), end
    if kind == "int":
        t = m.group(0)
        return Imm(_int(t), t), end
    t = m.group(0)
    return Imm(float(t), t), end


def _fast_register(kind: str, v: str):
    """The operand of register text ``v`` that :data:`_F_BASE` matched as ``kind`` (``reg``,
    ``rr`` or ``sp``), or None (a range that ends before it starts: Lark decides)."""
    if kind == "reg":
        if v[0] == "t":
            return Reg("ttmp", int(v[4:]))
        return Reg(v[0], int(v[1:]))
    if kind == "rr":
        f = "ttmp" if v[0] == "t" else v[0]
        inner = v[v.index("[") + 1:-1]
        if ":" in inner:
            lo, hi = inner.split(":")
            lo, hi = int(lo), int(hi)
        else:
            lo = hi = int(inner)
        if hi < lo:
            return None
        return Reg(f, lo, hi - lo + 1)
    return Special(_intern(v))


def _fast_operand(s: str, pos: int):
    """One operand (a base, ``-x``, ``|x|``, ``-|x|``, ``|-N|`` or ``f(..) g(..)``)."""
    c = s[pos:pos + 1]
    neg = c == "-"
    if neg:
        pos += 1
        c = s[pos:pos + 1]
    if c == "|":
        r = _fast_operand_in_bars(s, pos + 1)
        if r is None:
            return None
        b, pos = r
        return Src(b, neg=neg, abs=True), pos
    r = _fast_base(s, pos)
    if r is None:
        return None
    b, pos = r
    if neg:
        if type(b) is Imm:
            return Imm(-b.value, "-" + b.text), pos
        return Src(b, neg=True), pos
    if type(b) is Func and s.startswith(" ", pos):
        # a FuncList: f(..) g(..)
        items = [b]
        while s.startswith(" ", pos):
            m = _F_IDENT.match(s, pos + 1)
            if m is None or not s.startswith("(", m.end()) or _F_MOD.match(s, pos + 1):
                break
            r = _fast_base(s, pos + 1)
            if r is None or type(r[0]) is not Func:
                return None
            items.append(r[0])
            pos = r[1]
        if len(items) > 1:
            return FuncList(tuple(items)), pos
    return b, pos


def _fast_operand_in_bars(s: str, pos: int):
    neg = s.startswith("-", pos)
    r = _fast_base(s, pos + neg)
    if r is None:
        return None
    b, pos = r
    if not s.startswith("|", pos) or type(b) is Func:
        return None
    if neg:
        if type(b) is not Imm:
            return None
        b = Imm(-b.value, "-" + b.text)
    return b, pos + 1


def _fast_modval(s: str, pos: int):
    m = _F_INT.match(s, pos)
    if m:
        t = m.group(0)
        return (-_int(t[1:]) if t[0] == "-" else _int(t)), m.end()
    if s.startswith("[", pos):
        return _fast_items(s, pos + 1, "]")
    m = _F_IDENT.match(s, pos)
    if m is None:
        return None
    v = m.group(0)
    end = m.end()
    if s.startswith("(", end):
        if v in _F_NOT_NAME:
            return None
        r = _fast_func_args(s, end)
        if r is None:
            return None
        return Func(_intern(v), r[0]), r[1]
    return _intern(v), end


def _fast_line(key: str):
    """:func:`parse_line`'s result for a plain instruction line, or None (use Lark)."""
    m = _F_MNEMONIC.match(key)
    if m is None or _F_BAD.search(key):
        return None
    s = key
    pos = m.end()
    n = len(s)
    operands = []
    mods = []
    after_comma = False
    while pos < n:
        if not after_comma:
            mm = _F_MOD.match(s, pos)
            if mm is not None:
                break
        r = _fast_operand(s, pos)
        if r is None:
            return None
        op, pos = r
        operands.append(op)
        if pos == n:
            break
        c = s[pos]
        if c == ",":
            if not s.startswith(", ", pos):
                return None
            pos += 2
            after_comma = True
            if pos >= n:
                return None
        elif c == " ":
            pos += 1
            if pos >= n or _F_MOD.match(s, pos) is None:
                return None
            break
        else:
            return None
    while pos < n:
        mm = _F_MOD.match(s, pos)
        if mm is None:
            return None
        end = mm.end()
        if mm.lastgroup == "flag":
            mods.append((_intern(mm.group(0)), True))
        else:
            r = _fast_modval(s, end)
            if r is None:
                return None
            mods.append((_intern(mm.group(0)[:-1]), r[0]))
            end = r[1]
        if end == n:
            break
        if s[end] != " " or end + 1 >= n:
            return None
        pos = end + 1
    opcode = _intern(m.group(1))
    ops = tuple(operands)
    if opcode.startswith("v_") and not opcode.endswith(_VARIANTS):
        from .typecheck import select_encoding
        opcode = _intern(select_encoding(opcode, ops, mods))
    return (), ("i", opcode, ops, tuple(mods), _is_terminator(opcode))


# ---------------------------------------------------------------------------
# Per-line parsing with memoisation
# ---------------------------------------------------------------------------

_LINE_CACHE: dict[str, tuple] = {}
_CACHE_LIMIT = 200_000


def _strip_comment(line: str) -> str:
    """Cut a trailing ``;``/``//`` comment for the cache key (not when the line has a
    string or a ``/* */`` comment, which may contain those characters)."""
    if '"' in line or "/*" in line:
        return line
    i = line.find(";")
    j = line.find("//")
    if j >= 0 and (i < 0 or j < i):
        i = j
    if i >= 0:
        line = line[:i]
    return line.rstrip()


def parse_line(line: str, filename: str = "<input>", lineno: int = 1) -> tuple:
    """Parse one line of assembly.

    Returns ``(labels, stmt)``: ``labels`` is a tuple of label names defined on
    the line; ``stmt`` is ``None``, ``("d", name, args)`` for a directive, or
    ``("i", opcode, operands, modifiers, is_terminator)`` for an instruction.

    Raises:
        AsmSyntaxError: with ``filename:lineno:column`` and the expected tokens.
    """
    key = _strip_comment(line)
    r = _LINE_CACHE.get(key)
    if r is not None:
        return r
    r = _fast_line(key)
    if r is None:
        parser = _parser()
        from lark.exceptions import UnexpectedInput, VisitError
        try:
            r = parser.parse(key)
        except (UnexpectedInput, VisitError, _LineError) as e:
            raise _syntax_error(e, key, filename, lineno) from None
    if len(_LINE_CACHE) >= _CACHE_LIMIT:
        _LINE_CACHE.clear()
    _LINE_CACHE[key] = r
    return r


def parse_instruction(text: str, filename: str = "<input>", line: int = 1) -> Instruction:
    """Parse one instruction (``"v_add_f32_e32 v0, v1, v2"``) into an :class:`Instruction`.

    Raises:
        AsmSyntaxError: the text is not exactly one instruction.
    """
    labels, stmt = parse_line(text, filename, line)
    if labels or stmt is None or stmt[0] != "i":
        raise AsmSyntaxError(f"expected one instruction, got {text.strip()!r}",
                             file=filename, line=line, column=1)
    return Instruction(stmt[1], stmt[2], stmt[3], line=line)


# ---------------------------------------------------------------------------
# File structure
# ---------------------------------------------------------------------------

_BLOCK_COMMENT = re.compile(r'"(?:[^"\\\n]|\\.)*"|/\*.*?\*/', re.S)
_SECTION_DIRECTIVES = frozenset({".text", ".data", ".bss", ".rodata", ".section",
                                 ".pushsection", ".popsection", ".previous", ".subsection"})
_TERMINATORS = frozenset({"s_branch", "s_setpc_b64", "s_endpgm", "s_endpgm_saved",
                          "s_endpgm_ordered_ps_done"})


def _is_terminator(opcode: str) -> bool:
    return opcode in _TERMINATORS or opcode.startswith("s_cbranch_")


def _blank_block_comments(text: str) -> str:
    """Replace ``/* ... */`` comments that span lines by blanks, keeping line numbers."""
    def sub(m: re.Match) -> str:
        s = m.group(0)
        if s[0] == '"':
            return s
        return re.sub(r"[^\n]", " ", s)
    return _BLOCK_COMMENT.sub(sub, text)


def _is_text_section(name: str, args: str) -> bool:
    if name == ".text":
        return True
    if name in (".section", ".pushsection"):
        sec = args.split(",")[0].strip().strip('"')
        return sec == ".text" or sec.startswith(".text.")
    return False


def parse_asm(text: str, filename: str = "<input>", *, check: bool = False) -> Module:
    """Parse a whole assembly file into a :class:`Module`.

    Accepts clang ``-S`` output, Triton ``.amdgcn`` and instruction listings.
    With ``check=True`` every instruction is also type-checked against the ISA
    table (:func:`asmevo.frontend.typecheck.check_module`).

    Raises:
        AsmSyntaxError: with ``filename:line:column`` and what was expected.
    """
    source = text
    if "/*" in text:
        text = _blank_block_comments(text)
    lines = text.split("\n")

    # Pass 1: parse lines; collect records (lineno, labels, stmt) and raw YAML.
    recs: list[tuple] = []
    func_syms: set[str] = set()
    amdhsa_names: set[str] = set()
    in_meta = False
    meta_lines: list[str] = []
    meta_start = 0
    get = _LINE_CACHE.get
    for n, raw in enumerate(lines, 1):
        if in_meta:
            s = raw.strip()
            if s.startswith(".end_amdgpu_metadata"):
                recs.append((n, (), ("meta", "\n".join(meta_lines) + ("\n" if meta_lines else ""),
                                     meta_start)))
                in_meta = False
            else:
                meta_lines.append(raw)
            continue
        r = get(raw)
        if r is None:
            s = raw.lstrip()
            if not s or s[0] == ";" or s.startswith("//"):
                continue
            r = parse_line(raw, filename, n)
        labels, stmt = r
        if stmt is None:
            if labels:
                recs.append((n, labels, None))
            continue
        if stmt[0] == "d":
            name = stmt[1]
            if name in _CONTROL_DIRECTIVES:   # here: before the lines it governs are parsed
                raise _refuse(name, f"{name} is not supported: asmevo's IR does not model "
                              "directives that repeat, conditionally include or define lines "
                              "(only the assembler knows what code they make); expected the "
                              "lines written out (or work on the code object: asmevo asm, "
                              "then asmevo dis)", filename, n, raw)
            if name == ".amdgpu_metadata":
                in_meta, meta_lines, meta_start = True, [], n
                if labels:
                    recs.append((n, labels, None))
                continue
            if name == ".type":
                parts = [p.strip() for p in stmt[2].split(",")]
                if len(parts) >= 2 and parts[1] in ("@function", "%function", "STT_FUNC"):
                    func_syms.add(parts[0])
            elif name == ".amdhsa_kernel":
                amdhsa_names.add(stmt[2].strip())
        recs.append((n, labels, stmt))
    if in_meta:
        raise AsmSyntaxError(".amdgpu_metadata without .end_amdgpu_metadata", file=filename,
                             line=meta_start, column=1)

    if not func_syms:
        func_syms = _implicit_functions(recs)

    module = _build(recs, func_syms, amdhsa_names, filename, lines)
    if check:
        from .typecheck import check_module
        check_module(module, filename, source)
    return module


def _implicit_functions(recs: list[tuple]) -> set[str]:
    """Non-local labels in a text section directly followed by an instruction, except
    labels that a branch (``s_branch``/``s_cbranch_*``) targets: those are blocks."""
    targets = {op.name for _n, _l, st in recs if st is not None and st[0] == "i"
               and (st[1] == "s_branch" or st[1].startswith("s_cbranch_"))
               for op in st[2] if type(op) is Label}
    out: set[str] = set()
    in_text = True
    pending: list[str] = []
    for _n, labels, stmt in recs:
        for lab in labels:
            pending.append(lab)
        if stmt is None:
            continue
        if stmt[0] == "i":
            if in_text:
                out.update(l for l in pending if (not l.startswith(".L") and l not in targets)
                           or l.startswith(ANON_PREFIX))
            pending = []
        elif stmt[0] == "d":
            if stmt[1] in _SECTION_DIRECTIVES:
                in_text = _is_text_section(stmt[1], stmt[2]) if stmt[1] != ".popsection" else True
            pending = []
        else:
            pending = []
    return out


class _Builder:
    """Assembles records into module items (see :func:`parse_asm`)."""

    def __init__(self, filename: str, amdhsa_names: set[str]):
        self.filename = filename
        self.amdhsa_names = amdhsa_names
        self.items: list = []
        self.kernel: Kernel | None = None
        self.block: BasicBlock | None = None
        self.pending: list[Directive] = []
        self.anon = 0
        self.taken: set[str] = set()  # labels defined in the file (anonymous names avoid them)
        self.label_lines: dict[str, int] = {}

    def is_kernel(self, name: str) -> bool:
        return name in self.amdhsa_names if self.amdhsa_names else True

    def start_kernel(self, name: str) -> None:
        self.end_kernel()
        self.kernel = Kernel(name, is_kernel=self.is_kernel(name))
        self.items.append(self.kernel)
        self.block = BasicBlock(name)
        self.kernel.blocks.append(self.block)

    def end_kernel(self) -> None:
        k = self.kernel
        if k is None:
            return
        # Trailing labels without code (.Lfunc_end0) and directives go top-level.
        tail: list = []
        while len(k.blocks) > 1 and not k.blocks[-1].instructions:
            b = k.blocks.pop()
            tail[:0] = list(b.directives) + (
                [LabelDef(b.label, self.label_lines.get(b.label))] if b.label else [])
        tail.extend(self.pending)
        self.items.extend(tail)
        self.pending = []
        self.kernel = None
        self.block = None

    def add_label(self, name: str, line: int) -> None:
        if self.kernel is None:
            self.items.extend(self.pending)
            self.pending = []
            self.items.append(LabelDef(name, line))
            return
        self.label_lines[name] = line
        self.block = BasicBlock(name, [], self.pending)
        self.pending = []
        self.kernel.blocks.append(self.block)

    def add_instruction(self, inst: Instruction) -> None:
        if self.kernel is None:
            self.anon += 1
            while f"{ANON_PREFIX}{self.anon}" in self.taken:
                self.anon += 1
            self.start_kernel(f"{ANON_PREFIX}{self.anon}")
        b = self.block
        if b is None or self.pending:
            b = self.block = BasicBlock(None, [], self.pending)
            self.pending = []
            self.kernel.blocks.append(b)
        b.instructions.append(inst)
        if _is_terminator(inst.opcode):
            self.block = None

    def add_directive(self, d: Directive) -> None:
        if self.kernel is None:
            self.items.append(d)
        else:
            self.pending.append(d)


#: directives that repeat, conditionally include or define lines: what they make of the text
#: only the assembler knows, so the IR would hold other code than the bytes (refused anywhere)
_CONTROL_DIRECTIVES = frozenset({
    ".if", ".ifdef", ".ifndef", ".ifnotdef", ".ifb", ".ifnb", ".ifc", ".ifnc", ".ifeq",
    ".ifeqs", ".ifne", ".ifnes", ".ifge", ".ifgt", ".ifle", ".iflt", ".else", ".elseif",
    ".endif", ".rept", ".rep", ".irp", ".irpc", ".endr", ".macro", ".endm", ".endmacro",
    ".exitm", ".purgem", ".include", ".altmacro", ".noaltmacro"})
#: directives that emit no bytes into the code and leave the meaning of every instruction as
#: written: kept in a function's code (as block directives)
_NO_CODE_DIRECTIVES = frozenset({
    ".loc", ".file", ".globl", ".global", ".type", ".protected", ".hidden", ".weak", ".local",
    ".internal", ".ident", ".addrsig", ".addrsig_sym", ".size", ".set", ".equ", ".equiv",
    ".amdgpu_hsa_kernel", ".amdgpu_lds", ".end_amdgpu_lds"})
#: alignment in code with no fill value: llvm-mc pads with ``s_nop 0`` (Triton aligns the
#: block after its kernarg-preload prologue so); kept as block directives, the padding is
#: no-ops the IR leaves out (the backend rebuilds rather than patches such a function).
#: A fill value (``.p2align 8, 0x0``) would execute as whatever it encodes: refused.
_ALIGN_DIRECTIVES = frozenset({".p2align", ".balign", ".align"})
#: 4-byte word directives: in a function's code, raw instruction words
_WORD_DIRECTIVES = frozenset({".long", ".int", ".4byte"})


def _column_of(line: str | None, word: str) -> int | None:
    if line is None:
        return None
    i = line.find(word)
    return i + 1 if i >= 0 else None


def _refuse(name: str, what: str, filename: str, n: int, line: str | None) -> NotModelledError:
    return NotModelledError(what, file=filename, line=n, column=_column_of(line, name) or 1)


def _line_comment(line: str | None) -> str | None:
    """The text after a ``;`` or ``//`` comment mark of ``line`` (None when it has none)."""
    if line is None or '"' in line:
        return None
    i, j = line.find(";"), line.find("//")
    if j >= 0 and (i < 0 or j < i):
        i, k = j, 2
    else:
        k = 1
    return line[i + k:].strip() if i >= 0 else None


def _word_instructions(name: str, args: str, line: str | None, filename: str,
                       n: int, kernel: str) -> list[Instruction]:
    """The raw instruction(s) of a ``.long``/``.int``/``.4byte`` line in ``kernel``'s code: with
    a comment that is one instruction (``asmevo dis``'s ``.long 0x7e0002ff, 0x3f800000 ;
    v_mov_b32_e32 v0, 0x3f800000``), that instruction with these words as its bytes (the
    comment names what the analyses and passes see; every layer that judges or runs code
    reads the bytes, :func:`asmevo.frontend.loader.load_bytes`); else one opaque word per
    value (opcode ``.long``, what the disassembler keeps for a word it cannot decode; every
    analysis treats it as any instruction).

    Raises:
        AsmSyntaxError: a value that is not an integer literal of 32 bits.
    """
    words = []
    for v in (x.strip() for x in args.split(",")):
        try:
            w = int(v, 0)
        except ValueError:
            w = None
        if w is None or not -(1 << 31) <= w < (1 << 32):
            raise _refuse(name, f"{name} {v or '(nothing)'} in the code of {kernel}: expected "
                          "integer literals of 32 bits (instruction words); symbols and "
                          "expressions in code are not modelled", filename, n, line)
        words.append(w & 0xFFFFFFFF)
    enc = b"".join(w.to_bytes(4, "little") for w in words)
    comment = _line_comment(line)
    if comment and not comment.startswith("."):
        try:
            labels, stmt = parse_line(comment, filename, n)
        except AsmSyntaxError:
            labels, stmt = (), None
        if not labels and stmt is not None and stmt[0] == "i":
            return [Instruction(stmt[1], stmt[2], stmt[3], encoding=enc, raw=True, line=n)]
    return [Instruction(".long", [Expr(f"{w:#010x}")], encoding=w.to_bytes(4, "little"),
                        raw=True, line=n) for w in words]


def _build(recs: list[tuple], func_syms: set[str], amdhsa_names: set[str],
           filename: str, lines: list[str] | None = None) -> Module:
    bld = _Builder(filename, amdhsa_names)
    bld.taken = {lab for _n, labels, _s in recs if labels for lab in labels}
    items = bld.items
    amdhsa: AmdhsaKernel | None = None
    for n, labels, stmt in recs:
        for lab in labels:
            if amdhsa is not None:
                raise AsmSyntaxError(f"label {lab!r} inside .amdhsa_kernel", file=filename,
                                     line=n, column=1)
            if lab in func_syms or lab.startswith(ANON_PREFIX):
                bld.start_kernel(lab)
            else:
                bld.add_label(lab, n)
        if stmt is None:
            continue
        kind = stmt[0]
        if kind == "i":
            if amdhsa is not None:
                raise AsmSyntaxError("instruction inside .amdhsa_kernel", file=filename,
                                     line=n, column=1)
            # fast path of _Builder.add_instruction (the common case: same block)
            b = bld.block
            if b is not None and not bld.pending:
                b.instructions.append(Instruction(stmt[1], stmt[2], stmt[3], line=n))
                if stmt[4]:
                    bld.block = None
            else:
                bld.add_instruction(Instruction(stmt[1], stmt[2], stmt[3], line=n))
        elif kind == "d":
            name, args = stmt[1], stmt[2]
            if amdhsa is not None:
                if name == ".end_amdhsa_kernel":
                    amdhsa = None
                elif name.startswith(".amdhsa_"):
                    amdhsa.fields[name] = args
                else:
                    raise AsmSyntaxError(f"unexpected {name} inside .amdhsa_kernel; expected "
                                         ".amdhsa_* fields or .end_amdhsa_kernel",
                                         file=filename, line=n, column=1)
                continue
            if name == ".amdhsa_kernel":
                bld.end_kernel()
                amdhsa = AmdhsaKernel(args.strip(), {}, n)
                items.append(amdhsa)
                continue
            if name == ".end_amdhsa_kernel":
                raise AsmSyntaxError(".end_amdhsa_kernel without .amdhsa_kernel",
                                     file=filename, line=n, column=1)
            d = Directive(name, args, n)
            if bld.kernel is not None:
                if name in _SECTION_DIRECTIVES:
                    bld.end_kernel()
                elif name == ".size" and args.split(",")[0].strip() == bld.kernel.name:
                    bld.end_kernel()
                elif name in _WORD_DIRECTIVES:
                    for inst in _word_instructions(name, args, lines[n - 1] if lines else None,
                                                   filename, n, bld.kernel.name):
                        bld.add_instruction(inst)
                    continue
                elif name not in _NO_CODE_DIRECTIVES and not name.startswith(".cfi_") \
                        and not (name in _ALIGN_DIRECTIVES and "," not in args):
                    raise _refuse(name, f"{name} in the code of {bld.kernel.name}: asmevo's IR "
                                  "does not model directives that emit, pad or align bytes "
                                  "among instructions; expected instructions, labels, "
                                  ".long instruction words, directives that emit nothing "
                                  "(.loc, .cfi_*, .set...) or .p2align N without a fill value; "
                                  "or the directive after the "
                                  "function's .size", filename, n,
                                  lines[n - 1] if lines else None)
            bld.add_directive(d)
        else:  # metadata
            bld.end_kernel()
            items.append(MetadataBlock(stmt[1], stmt[2]))
    if amdhsa is not None:
        raise AsmSyntaxError(f".amdhsa_kernel {amdhsa.name} without .end_amdhsa_kernel",
                             file=filename, line=amdhsa.line, column=1)
    bld.end_kernel()
    return Module(items, source=filename)
