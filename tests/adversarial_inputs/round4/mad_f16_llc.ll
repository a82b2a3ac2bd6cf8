declare half @llvm.fmuladd.f16(half, half, half)
define half @ieee(half %a, half %b, half %c) #0 { %r = call half @llvm.fmuladd.f16(half %a, half %b, half %c) ret half %r }
define half @flush(half %a, half %b, half %c) #1 { %r = call half @llvm.fmuladd.f16(half %a, half %b, half %c) ret half %r }
define half @ieee_fm(half %a, half %b, half %c) #0 { %m = fmul fast half %a, %b %r = fadd fast half %m, %c ret half %r }
define half @flush_fm(half %a, half %b, half %c) #1 { %m = fmul fast half %a, %b %r = fadd fast half %m, %c ret half %r }
attributes #0 = { "denormal-fp-math"="ieee,ieee" }
attributes #1 = { "denormal-fp-math"="preserve-sign,preserve-sign" }
