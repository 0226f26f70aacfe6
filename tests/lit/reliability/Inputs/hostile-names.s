// vadd with hostile names (issue 34, items 1 and 2): a parameter name that closes a C++ string
// literal and calls std::system, a source file name and a frontend location with newlines, a
// backslash and a trigraph, each of which would end a // comment.
.arch a2a3
.extensions pto-toolchain-ext-v1

.function @vadd entry
.param %"a\"+(std::system(\"echo INJECTED\")&0),true,\"\n//" tensor_view 64x64xf32
.param %y tensor_view 64x64xf32
.param %z tensor_view 64x64xf32
.tile T#1 %a vec 16x64xf32 valid=16x64
.tile T#2 %b vec 16x64xf32 valid=16x64
.tile T#3 %c vec 16x64xf32 valid=16x64
.event @la PIPE_MTE2 PIPE_V
.event @lb PIPE_MTE2 PIPE_V
.event @done PIPE_V PIPE_MTE3
.reloc 0x40 tile T#1
.reloc 0x4c event @la
.reloc 0x7c tile T#2
.reloc 0x88 event @lb
.reloc 0x94 event @la
.reloc 0xa0 event @lb
.reloc 0xb4 tile T#3
.reloc 0xb4 tile T#1
.reloc 0xb8 tile T#2
.reloc 0xc4 event @done
.reloc 0xe8 event @done
.reloc 0x100 tile T#3
0000000000000000 <vadd>:
.loc "f\nint injected = 1; \\":7:3 "py\n?\?/"
       0:	00001001	BSTART.STD FALL
       4:	00000295	addi zero, 0, ->a3
       8:	00028315	addi a3, 0, ->a4
       c:	00004221	BSTART COND, pc+264
      10:	04000295	addi zero, 64, ->a3
      14:	00535065	setc.ge a4, a3
      18:	00001001	BSTART.STD FALL
      1c:	04000295	addi zero, 64, ->a3
      20:	005303c7	mul a4, a3, ->a5
      24:	10710285	add a0, a5<<2, ->a3
      28:	04000395	addi zero, 64, ->a5
      2c:	0023f415	slli a5, 2, ->a6
      30:	08011181	BSTART.TLOAD FP32
      34:	04000043	B.DIM zero, 64, ->LB0
      38:	01001043	B.DIM zero, 16, ->LB1
      3c:	00828013	B.IOR a3, a6, zero, ->zero
      40:	00085e13	B.IOT T#1, mask=1111, last	; R_PTO_TILE vadd:T#1 (%a)
      44:	00000001	BSTOP
      48:	0cc39181	BSTART.EXT SET_FLAG, PIPE_MTE2, PIPE_V
      4c:	00000043	B.DIM zero, 0, ->LB0	; R_PTO_EVENT vadd:@la
      50:	00000001	BSTOP
      54:	00001001	BSTART.STD FALL
      58:	04000295	addi zero, 64, ->a3
      5c:	005303c7	mul a4, a3, ->a5
      60:	10718285	add a1, a5<<2, ->a3
      64:	04000395	addi zero, 64, ->a5
      68:	0023f415	slli a5, 2, ->a6
      6c:	08011181	BSTART.TLOAD FP32
      70:	04000043	B.DIM zero, 64, ->LB0
      74:	01001043	B.DIM zero, 16, ->LB1
      78:	00828013	B.IOR a3, a6, zero, ->zero
      7c:	00185e13	B.IOT T#2, mask=1111, last	; R_PTO_TILE vadd:T#2 (%b)
      80:	00000001	BSTOP
      84:	0cc39181	BSTART.EXT SET_FLAG, PIPE_MTE2, PIPE_V
      88:	00000043	B.DIM zero, 0, ->LB0	; R_PTO_EVENT vadd:@lb
      8c:	00000001	BSTOP
      90:	0d439181	BSTART.EXT WAIT_FLAG, PIPE_MTE2, PIPE_V
      94:	00000043	B.DIM zero, 0, ->LB0	; R_PTO_EVENT vadd:@la
      98:	00000001	BSTOP
      9c:	0d439181	BSTART.EXT WAIT_FLAG, PIPE_MTE2, PIPE_V
      a0:	00000043	B.DIM zero, 0, ->LB0	; R_PTO_EVENT vadd:@lb
      a4:	00000001	BSTOP
      a8:	08019181	BSTART.VEC TADD, FP32
      ac:	04000043	B.DIM zero, 64, ->LB0
      b0:	01001043	B.DIM zero, 16, ->LB1
      b4:	00204e13	B.IOT T#3, T#1, mask=1111	; R_PTO_TILE vadd:T#3 (%c); R_PTO_TILE vadd:T#1 (%a)
      b8:	00185e13	B.IOT T#2, mask=1111, last	; R_PTO_TILE vadd:T#2 (%b)
      bc:	00000001	BSTOP
      c0:	2c939181	BSTART.EXT SET_FLAG, PIPE_V, PIPE_MTE3
      c4:	00000043	B.DIM zero, 0, ->LB0	; R_PTO_EVENT vadd:@done
      c8:	00000001	BSTOP
      cc:	00001001	BSTART.STD FALL
      d0:	04000295	addi zero, 64, ->a3
      d4:	005303c7	mul a4, a3, ->a5
      d8:	10720285	add a2, a5<<2, ->a3
      dc:	04000395	addi zero, 64, ->a5
      e0:	0023f415	slli a5, 2, ->a6
      e4:	2d139181	BSTART.EXT WAIT_FLAG, PIPE_V, PIPE_MTE3
      e8:	00000043	B.DIM zero, 0, ->LB0	; R_PTO_EVENT vadd:@done
      ec:	00000001	BSTOP
      f0:	08111181	BSTART.TSTORE FP32
      f4:	04000043	B.DIM zero, 64, ->LB0
      f8:	01001043	B.DIM zero, 16, ->LB1
      fc:	00828013	B.IOR a3, a6, zero, ->zero
     100:	00285e13	B.IOT T#3, mask=1111, last	; R_PTO_TILE vadd:T#3 (%c)
     104:	00000001	BSTOP
     108:	ffffc111	BSTART DIRECT, pc-252
     10c:	01000295	addi zero, 16, ->a3
     110:	00530305	add a4, a3, ->a4
     114:	00007001	BSTART.STD RET
