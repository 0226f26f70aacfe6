; A bare block without a .function directive is rejected at its first word.
; RUN: not pto-as %s -o %t.o 2>&1 | FileCheck %s --strict-whitespace
BSTART.VEC TADD, FP32
B.DIM zero, 16, ->LB0
BSTOP
; CHECK:      missing-function.s:3:1: error: instruction before any .function directive (missing .function)
; CHECK-NEXT: {{^}}BSTART.VEC TADD, FP32
; CHECK-NEXT: {{^}}^~~~~~~~~~~~~~~~~~~~~
; CHECK-NEXT: 1 error generated.
