#!/usr/bin/env python3
"""Test helper: rewrite the placement of one tile record in a PTO object's .pto.tiles section.
usage: set-placement.py IN OUT TILE_RECORD_INDEX PLACEMENT"""
import struct, sys

data = bytearray(open(sys.argv[1], "rb").read())
index, placement = int(sys.argv[3], 0), int(sys.argv[4], 0)
shoff, = struct.unpack_from("<Q", data, 0x28)
shnum, shstrndx = struct.unpack_from("<HH", data, 0x3C)
def shdr(i):
    return struct.unpack_from("<IIQQQQIIQQ", data, shoff + 64 * i)
names = shdr(shstrndx)[4]
for i in range(shnum):
    h = shdr(i)
    name = data[names + h[0]:data.index(0, names + h[0])].decode()
    if name == ".pto.tiles":
        struct.pack_into("<q", data, h[4] + 16 + 48 * index + 32, placement)
open(sys.argv[2], "wb").write(data)
