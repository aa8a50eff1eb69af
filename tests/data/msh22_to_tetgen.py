#!/usr/bin/env python3
"""Converts an ASCII Gmsh MSH 2.2 mesh of 4-node or 10-node tetrahedra (types 4, 11) into a TetGen
.node/.ele pair (1-based, as TetGen writes by default). Node boundary marker: 1 on x = 0, 2 on x = 1,
0 elsewhere (the "left" and "right" physical surfaces of cube.geo and box_tet.geo). 10-node
tetrahedra get their edge nodes in TetGen's -o2 order, which differs from Gmsh's: the point of the
pair is that the reader's mapping back to Gmsh's order is tested (docs/high_order.md).
Usage: msh22_to_tetgen.py cube_v22_ascii.msh cube"""
import sys

# Edges of the six edge nodes, in each program's order (corners 0-3 come first in both).
GMSH_EDGES = [(0, 1), (1, 2), (2, 0), (3, 0), (3, 2), (3, 1)]
TETGEN_EDGES = [(2, 3), (0, 3), (0, 1), (1, 2), (1, 3), (0, 2)]  # tetgen -o2 (TetGen 1.5)
# TetGen column c holds Gmsh node TETGEN_FROM_GMSH[c]
TETGEN_FROM_GMSH = [0, 1, 2, 3] + [4 + [set(g) for g in GMSH_EDGES].index(set(t)) for t in TETGEN_EDGES]

src, base = sys.argv[1], sys.argv[2]
lines = open(src).read().split("\n")
i = lines.index("$Nodes")
n = int(lines[i + 1])
nodes = [lines[i + 2 + k].split() for k in range(n)]
index = {tag: k + 1 for k, (tag, *_) in enumerate(nodes)}
i = lines.index("$Elements")
m = int(lines[i + 1])
tets, per_tet = [], None
for k in range(m):
    f = lines[i + 2 + k].split()
    if f[1] in ("4", "11"):
        nt = int(f[2])
        gmsh = [index[t] for t in f[3 + nt:]]
        per_tet = len(gmsh)
        tets.append(gmsh if per_tet == 4 else [gmsh[g] for g in TETGEN_FROM_GMSH])
with open(base + ".node", "w") as out:
    out.write("# %s converted by msh22_to_tetgen.py\n%d 3 0 1\n" % (src, n))
    for k, (tag, x, y, z) in enumerate(nodes):
        marker = 1 if float(x) == 0.0 else 2 if float(x) == 1.0 else 0
        out.write("%d %s %s %s %d\n" % (k + 1, x, y, z, marker))
with open(base + ".ele", "w") as out:
    out.write("# %s converted by msh22_to_tetgen.py\n%d %d 0\n" % (src, len(tets), per_tet))
    for k, t in enumerate(tets):
        out.write("%d %s\n" % (k + 1, " ".join(str(v) for v in t)))
