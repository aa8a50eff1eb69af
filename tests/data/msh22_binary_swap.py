#!/usr/bin/env python3
"""Rewrites a little-endian binary Gmsh MSH 2.2 file with the other byte order (exercises the reader's
endianness handling). Usage: msh22_binary_swap.py cube_v22_binary.msh cube_v22_binary_be.msh"""
import struct
import sys

NODES = {1: 2, 2: 3, 3: 4, 4: 4, 15: 1}
data = open(sys.argv[1], "rb").read()
out = bytearray()
pos = 0


def text_line():
    global pos
    end = data.index(b"\n", pos) + 1
    line = data[pos:end]
    out.extend(line)
    pos = end
    return line.strip()


def swap(fmt, count):
    global pos
    size = struct.calcsize("<" + fmt)
    values = struct.unpack_from("<%d%s" % (count, fmt), data, pos)
    out.extend(struct.pack(">%d%s" % (count, fmt), *values))
    pos += size * count
    return values


while pos < len(data):
    line = text_line()
    if line == b"$MeshFormat":
        assert text_line().split()[1] == b"1"
        swap("i", 1)
    elif line == b"$Nodes":
        for _ in range(int(text_line())):
            swap("i", 1)
            swap("d", 3)
    elif line == b"$Elements":
        total = int(text_line())
        while total > 0:
            etype, n, ntags = swap("i", 3)
            swap("i", n * (1 + ntags + NODES[etype]))
            total -= n
open(sys.argv[2], "wb").write(out)
