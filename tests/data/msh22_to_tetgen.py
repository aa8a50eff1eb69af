#!/usr/bin/env python3
"""Converts an ASCII Gmsh MSH 2.2 tetrahedral mesh into a TetGen .node/.ele pair (1-based, as TetGen
writes by default). Node boundary marker: 1 on x = 0, 2 on x = 1, 0 elsewhere (the cube's "left" and
"right" physical surfaces). Usage: msh22_to_tetgen.py cube_v22_ascii.msh cube"""
import sys

src, base = sys.argv[1], sys.argv[2]
lines = open(src).read().split("\n")
i = lines.index("$Nodes")
n = int(lines[i + 1])
nodes = [lines[i + 2 + k].split() for k in range(n)]
index = {tag: k + 1 for k, (tag, *_) in enumerate(nodes)}
i = lines.index("$Elements")
m = int(lines[i + 1])
tets = []
for k in range(m):
    f = lines[i + 2 + k].split()
    if f[1] == "4":
        nt = int(f[2])
        tets.append([index[t] for t in f[3 + nt:]])
with open(base + ".node", "w") as out:
    out.write("# %s converted by msh22_to_tetgen.py\n%d 3 0 1\n" % (src, n))
    for k, (tag, x, y, z) in enumerate(nodes):
        marker = 1 if float(x) == 0.0 else 2 if float(x) == 1.0 else 0
        out.write("%d %s %s %s %d\n" % (k + 1, x, y, z, marker))
with open(base + ".ele", "w") as out:
    out.write("# %s converted by msh22_to_tetgen.py\n%d 4 0\n" % (src, len(tets)))
    for k, t in enumerate(tets):
        out.write("%d %d %d %d %d\n" % (k + 1, *t))
