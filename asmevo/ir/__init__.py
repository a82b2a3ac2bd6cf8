"""The asmevo IR: operands, instructions, basic blocks, kernels, modules, printer."""

from .instruction import Instruction, format_modifier
from .module import (AmdhsaKernel, BasicBlock, Directive, Item, Kernel, LabelDef,
                     MetadataBlock, Module)
from .operands import (Expr, Func, FuncList, Imm, Label, Operand, Reg, Special, Src,
                       base_of, reg_units)
from .printer import print_instruction, print_module

__all__ = [
    "AmdhsaKernel", "BasicBlock", "Directive", "Expr", "Func", "FuncList", "Imm", "Instruction",
    "Item", "Kernel", "Label", "LabelDef", "MetadataBlock", "Module", "Operand", "Reg", "Special",
    "Src", "base_of", "format_modifier", "print_instruction", "print_module", "reg_units",
]
