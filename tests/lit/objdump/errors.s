; Block-assembly errors are located (file:line:col, the line, a caret) and nothing is written.
; RUN: not pto-as %s -o %t.o 2>&1 | FileCheck %s --strict-whitespace
; RUN: not test -e %t.o
.arch a2a3
.function @k entry kernel=vector
.tile T#1 %a vec 16x16xf32 valid=17x16
BSTART.VEC TFOO, FP32
B.DIM zero, 200000, ->LB0
FOO a0
       0:	08019182	BSTART.VEC TADD, FP32
.event @e PIPE_Q PIPE_V
.reloc 0x100 tile T#9

; CHECK:      errors.s:6:28: error: valid shape 17x16 exceeds the tile shape 16x16
; CHECK-NEXT: {{^}}.tile T#1 %a vec 16x16xf32 valid=17x16
; CHECK-NEXT: {{^}}                           ^~~~~~~~~~~
; CHECK-NEXT: errors.s:7:12: error: unknown tile op 'TFOO'
; CHECK-NEXT: {{^}}BSTART.VEC TFOO, FP32
; CHECK-NEXT: {{^}}           ^~~~
; CHECK-NEXT: errors.s:8:1: error: bad field value: B_DIM_LB0: value 200000 does not fit field uimm17
; CHECK-NEXT: {{^}}B.DIM zero, 200000, ->LB0
; CHECK-NEXT: {{^}}^~~~~~~~~~~~~~~~~~~~~~~~~
; CHECK-NEXT: errors.s:9:1: error: unknown mnemonic 'FOO'
; CHECK-NEXT: {{^}}FOO a0
; CHECK-NEXT: {{^}}^~~
; CHECK-NEXT: errors.s:10:11: error: hex column '08019182' disagrees with the encoding of 'BSTART.VEC TADD, FP32' (08019181)
; CHECK-NEXT: {{^}}       0:	08019182	BSTART.VEC TADD, FP32
; CHECK-NEXT: {{^}}         	^~~~~~~~
; CHECK-NEXT: errors.s:11:11: error: unknown pipe 'PIPE_Q'
; CHECK-NEXT: {{^}}.event @e PIPE_Q PIPE_V
; CHECK-NEXT: {{^}}          ^~~~~~
; CHECK-NEXT: errors.s:12:1: error: relocation offset 0x100 is not the start of a word in .text (size 0x0)
; CHECK-NEXT: {{^}}.reloc 0x100 tile T#9
; CHECK-NEXT: {{^}}^~~~~~
; CHECK-NEXT: errors.s:12:19: error: relocation names T#9, which @k does not define
; CHECK-NEXT: {{^}}.reloc 0x100 tile T#9
; CHECK-NEXT: {{^}}                  ^~~
; CHECK-NEXT: 8 errors generated.
