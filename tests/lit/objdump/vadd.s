; A hand-written block-assembly file using every directive: pto-as assembles it into an object,
; pto-objdump lists it, and the -d listing assembles back to the same bytes.
; RUN: pto-as %s -o %t.o
; RUN: pto-objdump -d %t.o | FileCheck %s --check-prefix=DIS --strict-whitespace
; RUN: pto-objdump -h %t.o | FileCheck %s --check-prefix=HDR
; RUN: pto-objdump -t %t.o | FileCheck %s --check-prefix=SYM
; RUN: pto-objdump -r %t.o | FileCheck %s --check-prefix=REL
; RUN: pto-objdump --tiles %t.o | FileCheck %s --check-prefix=TILES
; RUN: pto-objdump --raw %t.o | FileCheck %s --check-prefix=RAW
; RUN: readelf -a %t.o > %t.readelf
; RUN: readelf -n %t.o | FileCheck %s --check-prefix=NOTE
; RUN: pto-objdump -d %t.o > %t.s && pto-as %t.s -o %t2.o
; RUN: pto-objdump --raw %t.o > %t.r1 && pto-objdump --raw %t2.o > %t.r2 && diff %t.r1 %t.r2
; RUN: pto-objdump -d -h -t -r --tiles %t.o | tail -n +2 > %t.all1
; RUN: pto-objdump -d -h -t -r --tiles %t2.o | tail -n +2 > %t.all2
; RUN: diff %t.all1 %t.all2
; RUN: cmp %t.o %t2.o

.arch a5

.function @vadd entry kernel=vector frame=16
.param %x ptr f32
.param %v tensor_view 64x?xf16
.param %n index i64
.tile T#1 %a vec 16x64xf32 valid=16x?
.tile T#2 %b vec 16x64xf32 addr=0x2000
.tile T#3 %bv vec 16x64xf32 view=T#2+256
.event @e0 PIPE_MTE2 PIPE_V
.loc vadd.pto:3:5
BSTART.VEC TADD, FP32
.reloc tile T#1
B.DIM zero, 16, ->LB0
B.IOT T#1, T#2, mask=1111, last, ->T<1>
BSTOP
.loc vadd.pto:4:5
BSTART.EXT SET_FLAG, PIPE_MTE2, PIPE_V
.reloc event @e0
B.DIM zero, 0, ->LB0
BSTOP
addi a0, 7, ->a1
hl.lis 305419896, ->a0
C.BSTOP
L.BSTOP
.reloc call @helper
BSTART.CALL pc+8, rt(uimm5=3), ->ra
.word 0xdeadbeef

.function @helper declaration

; DIS:      {{.*}}.o:     file format elf64-pto (a5)
; DIS-EMPTY:
; DIS-NEXT: .arch a5
; DIS-NEXT: .extensions pto-toolchain-ext-v1
; DIS-EMPTY:
; DIS-NEXT: .function @vadd entry kernel=vector frame=16
; DIS-NEXT: .param %x ptr f32
; DIS-NEXT: .param %v tensor_view 64x?xf16
; DIS-NEXT: .param %n index i64
; DIS-NEXT: .tile T#1 %a vec 16x64xf32 valid=16x?
; DIS-NEXT: .tile T#2 %b vec 16x64xf32 valid=16x64 addr=0x2000
; DIS-NEXT: .tile T#3 %bv vec 16x64xf32 valid=16x64 view=T#2+256
; DIS-NEXT: .event @e0 PIPE_MTE2 PIPE_V
; DIS-NEXT: .reloc 0x4 tile T#1
; DIS-NEXT: .reloc 0x14 event @e0
; DIS-NEXT: .reloc 0x30 call @helper
; DIS-NEXT: 0000000000000000 <vadd>:
; DIS-NEXT: .loc vadd.pto:3:5
; DIS-NEXT: {{^}}       0:	08019181	BSTART.VEC TADD, FP32{{$}}
; DIS-NEXT: {{^}}       4:	01000043	B.DIM zero, 16, ->LB0	; R_PTO_TILE vadd:T#1 (%a){{$}}
; DIS-NEXT: {{^}}       8:	0408ce13	B.IOT T#1, T#2, mask=1111, last, ->T<1>{{$}}
; DIS-NEXT: {{^}}       c:	00000001	BSTOP{{$}}
; DIS-NEXT: .loc vadd.pto:4:5
; DIS-NEXT: {{^}}      10:	0cc39181	BSTART.EXT SET_FLAG, PIPE_MTE2, PIPE_V{{$}}
; DIS-NEXT: {{^}}      14:	00000043	B.DIM zero, 0, ->LB0	; R_PTO_EVENT vadd:@e0{{$}}
; DIS-NEXT: {{^}}      18:	00000001	BSTOP{{$}}
; DIS-NEXT: {{^}}      1c:	00710195	addi a0, 7, ->a1{{$}}
; DIS-NEXT: {{^}}      20:	123e 4567810d	hl.lis 305419896, ->a0{{$}}
; DIS-NEXT: {{^}}      26:	0000	C.BSTOP{{$}}
; DIS-NEXT: {{^}}      28:	0000000f 00000001	L.BSTOP{{$}}
; DIS-NEXT: {{^}}      30:	50d60042	BSTART.CALL pc+8, rt(uimm5=3), ->ra	; R_PTO_CALL helper{{$}}
; DIS-NEXT: {{^}}      34:	deadbeef	.word 0xdeadbeef	; 0xDEADBEEF: no PTO ISA 0.58.3 form at 32 bits{{$}}
; DIS-EMPTY:
; DIS-NEXT: .function @helper declaration
; DIS-NOT: {{.}}

; HDR:      Sections:
; HDR-NEXT: Idx Name            Size      Offset    Align  Type
; HDR-NEXT:   1 .text           00000038  {{[0-9a-f]+}}  4      PROGBITS
; HDR-NEXT:   2 .pto.tiles      {{.*}}PROGBITS
; HDR-NEXT:   3 .pto.kernels    {{.*}}PROGBITS
; HDR-NEXT:   4 .pto.events     {{.*}}PROGBITS
; HDR-NEXT:   5 .pto.lines      {{.*}}PROGBITS
; HDR-NEXT:   6 .note.pto.isa   {{.*}}NOTE
; HDR-NEXT:   7 .rela.text      00000048  {{.*}}RELA
; HDR-NEXT:   8 .symtab         {{.*}}SYMTAB
; HDR-NEXT:   9 .strtab         {{.*}}STRTAB
; HDR-NEXT:  10 .shstrtab       {{.*}}STRTAB

; SYM:      SYMBOL TABLE:
; SYM-NEXT: 0000000000000000 l    d  .text   	0000000000000000 .text
; SYM-NEXT: 0000000000000000 g     F .text   	0000000000000038 vadd
; SYM-NEXT: 0000000000000000 g     F *UND*   	0000000000000000 helper

; REL:      RELOCATION RECORDS FOR [.text]:
; REL-NEXT: OFFSET           TYPE              VALUE
; REL-NEXT: 0000000000000004 R_PTO_TILE        vadd:T#1 (%a)
; REL-NEXT: 0000000000000014 R_PTO_EVENT       vadd:@e0
; REL-NEXT: 0000000000000030 R_PTO_CALL        helper

; TILES:      TILES FOR @vadd (3):
; TILES-NEXT: Idx   Name         Loc      Shape          Valid      BLayout    SLayout    Fractal Pad   Compact       Addr
; TILES-NEXT: T#1   %a           vec      16x64xf32      16x?       row_major  none_box   512     null  null          unplaced
; TILES-NEXT: T#2   %b           vec      16x64xf32      16x64      row_major  none_box   512     null  null          0x2000
; TILES-NEXT: T#3   %bv          vec      16x64xf32      16x64      row_major  none_box   512     null  null          unplaced view of T#2+256
; TILES:      TILES FOR @helper (0):

; RAW:      08019181
; RAW-NEXT: 01000043
; RAW-NEXT: 0408ce13
; RAW-NEXT: 00000001
; RAW-NEXT: 0cc39181
; RAW-NEXT: 00000043
; RAW-NEXT: 00000001
; RAW-NEXT: 00710195
; RAW-NEXT: 123e 4567810d
; RAW-NEXT: 0000
; RAW-NEXT: 0000000f 00000001
; RAW-NEXT: 50d60042
; RAW-NEXT: deadbeef

; NOTE: Displaying notes found in: .note.pto.isa
; NOTE-NEXT: Owner
; NOTE-NEXT: PTO{{ +}}0x000000cb
; NOTE-NEXT: description data: 7b 22 65 6e 63 6f 64 69 6e 67 5f 61 62 69 22
