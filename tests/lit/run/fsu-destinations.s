; The scalar unit converts to FP64, FP32, FP16 and BF16 (isa/ScalarSemantics.inc, the definition
; the runtime and the exported C++ share): an fcvt to an 8-bit float assembles and links (the
; encoding has the code) but the runtime refuses the word at load, on both backends, with the
; instruction named.
; RUN: pto-as %s -o %t.o
; RUN: pto-ld %t.o -o %t.img
; RUN: not pto-run %t.img 2>&1 | FileCheck %s
; RUN: not pto-run %t.img --backend npu 2>&1 | FileCheck %s
; RUN: sed -e 's/fcvt.fs2e4m3/fcvt.fs2bf16/' %s > %t.ok.s
; RUN: pto-as %t.ok.s -o %t.ok.o && pto-ld %t.ok.o -o %t.ok.img && pto-run %t.ok.img -q
; CHECK: error: {{.*}}scalar instruction fcvt.fs2e4m3 a0, ->a1 converts to a type the scalar unit does not have
.function @k entry
BSTART.STD FALL
fcvt.fs2e4m3 a0, ->a1
BSTART.STD RET
