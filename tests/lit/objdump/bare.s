; Block assembly without address and hex columns: two kernels, a helper, the 1.5 worked encodings
; (reference/pto-spec-encoding.md), quoted names; -S interleaves the .loc source lines.
; RUN: pto-as %s -o %t.o
; RUN: pto-objdump -d %t.o | FileCheck %s
; RUN: cd %S/Inputs && pto-objdump -S %t.o | FileCheck %s --check-prefix=SRC
; RUN: pto-objdump -d %t.o > %t.s && pto-as %t.s -o %t2.o && cmp %t.o %t2.o
; RUN: sed -e 's/^ *[0-9a-f]*:\t[0-9a-f ]*\t//' %t.s > %t.bare.s && pto-as %t.bare.s -o %t3.o && cmp %t.o %t3.o
; RUN: pto-objdump --raw %t.o > %t.r1 && pto-objdump --raw %t2.o > %t.r2 && diff %t.r1 %t.r2
; RUN: readelf -a %t.o > /dev/null && readelf -n %t.o > /dev/null
.function @dequant entry kernel=vector
.tile T#1 %dst vec 16x16xf32
.tile T#2 %src vec 16x16xi8
.loc kernel.pto:3:3
BSTART.SFU TDEQUANT, S8
B.DATR {NORM, FP32, Zero, EQ, RNE, 0, 0}
B.DIM zero, 16, ->LB0
B.IOT T#2, mask=1111, last, ->T<1>
BSTOP
.loc kernel.pto:4:3
BSTART.EXT SET_FLAG, PIPE_V, PIPE_MTE3
B.DIM zero, 3, ->LB0
BSTOP

.function @"load kernel" entry kernel=cube
.param %gm ptr ui8
.param %stride index i64
.tile T#1 %t mat 8x64xui8 addr=0x0
BSTART.TLOAD U8
B.DIM zero, 64, ->LB0
B.DIM zero, 8, ->LB1
B.DIM zero, 64, ->LB2
B.IOR zero, a0, zero, ->zero
B.IOT mask=1111, last, ->T<1>
BSTOP

; CHECK:      .function @dequant entry kernel=vector
; CHECK:      .loc kernel.pto:3:3
; CHECK-NEXT:  0:	9eb19181	BSTART.SFU TDEQUANT, S8
; CHECK-NEXT:  4:	00109023	B.DATR {NORM, FP32, Zero, EQ, RNE, 0, 0}
; CHECK-NEXT:  8:	01000043	B.DIM zero, 16, ->LB0
; CHECK-NEXT:  c:	0018de13	B.IOT T#2, mask=1111, last, ->T<1>
; CHECK-NEXT: 10:	00000001	BSTOP
; CHECK-NEXT: .loc kernel.pto:4:3
; CHECK-NEXT: 14:	{{[0-9a-f]+}}	BSTART.EXT SET_FLAG, PIPE_V, PIPE_MTE3
; CHECK-NEXT: 18:	{{[0-9a-f]+}}	B.DIM zero, 3, ->LB0
; CHECK:      .function @"load kernel" entry kernel=cube
; CHECK-NEXT: .param %gm ptr ui8
; CHECK-NEXT: .param %stride index i64
; CHECK-NEXT: .tile T#1 %t mat 8x64xui8 valid=8x64 addr=0x0
; CHECK-NEXT: 0000000000000020 <"load kernel">:
; CHECK-NEXT: 20:	d8011181	BSTART.TLOAD U8
; CHECK-NEXT: 24:	04000043	B.DIM zero, 64, ->LB0
; CHECK-NEXT: 28:	00801043	B.DIM zero, 8, ->LB1
; CHECK-NEXT: 2c:	04002043	B.DIM zero, 64, ->LB2
; CHECK-NEXT: 30:	00200013	B.IOR zero, a0, zero, ->zero
; CHECK-NEXT: 34:	0008ee13	B.IOT mask=1111, last, ->T<1>
; CHECK-NEXT: 38:	00000001	BSTOP

; SRC:      ; kernel.pto:3:   pto.tadd ins(%a, %b : !pto.tile_buf<vec, 16x16xf32>) outs(%c : !pto.tile_buf<vec, 16x16xf32>)
; SRC-NEXT: .loc kernel.pto:3:3
; SRC-NEXT:  0:	9eb19181	BSTART.SFU TDEQUANT, S8
; SRC:      ; kernel.pto:4:   pto.set_flag[<PIPE_V>, <PIPE_MTE3>, @ev]
; SRC-NEXT: .loc kernel.pto:4:3
