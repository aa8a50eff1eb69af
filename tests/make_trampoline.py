#!/usr/bin/env python3
"""Writes a Gmsh MSH 2.2 ASCII mesh of a trampoline (tests/test_sheet_contact.sh, docs/cloth.md#sheets-in-contact):
a 1 x 1 sheet in the x-z plane at y = 0 (N x N vertices, physical group "sheet", its border a node set
"rim" of point elements) and, above its middle, a separate block of tetrahedra [0.35, 0.65] x [g, g + 0.3]
x [0.35, 0.65] (M cells per side, each cube split into 6 positively oriented tetrahedra; group "block")
at a gap g over the sheet (--block 0: the sheet alone). --halves adds the node sets "left" (x <= 0.5) and
"right" (x >= 0.5) and "centre" (the middle vertex) of point elements (tests/test_sheet_groups.sh: a material per half; N odd puts a
column of vertices on x = 0.5, so that every triangle lies in one half).

usage: make_trampoline.py OUT.msh [--sheet N] [--block M] [--gap g] [--halves]"""
import argparse
import numpy as np

KUHN = ((0, 1, 3, 7), (0, 3, 2, 7), (0, 2, 6, 7), (0, 6, 4, 7), (0, 4, 5, 7), (0, 5, 1, 7))


def sheet(n):
    """Nodes [n*n, 3] and triangles (two per cell, one diagonal direction) of the sheet."""
    s = np.linspace(0, 1, n)
    X = np.array([(u, 0.0, v) for v in s for u in s])
    tri = []
    for j in range(n - 1):
        for i in range(n - 1):
            a, b, c, d = j * n + i, j * n + i + 1, (j + 1) * n + i, (j + 1) * n + i + 1
            tri += [(a, b, d), (a, d, c)]
    rim = [k for k in range(n * n) if k % n in (0, n - 1) or k // n in (0, n - 1)]
    return X, np.array(tri), rim


def block(m, gap):
    """Nodes and positively oriented tetrahedra of the block."""
    s, t = np.linspace(0.35, 0.65, m + 1), np.linspace(gap, gap + 0.3, m + 1)
    X = np.array([(x, y, z) for z in s for y in t for x in s])
    idx = lambda i, j, k: (k * (m + 1) + j) * (m + 1) + i
    tets = []
    for k in range(m):
        for j in range(m):
            for i in range(m):
                corner = [idx(i + (c & 1), j + (c >> 1 & 1), k + (c >> 2 & 1)) for c in range(8)]
                for tet in KUHN:
                    e = [corner[c] for c in tet]
                    if np.linalg.det(np.array([X[e[a]] - X[e[0]] for a in (1, 2, 3)])) < 0:
                        e[2], e[3] = e[3], e[2]
                    tets.append(e)
    return X, np.array(tets)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out")
    p.add_argument("--sheet", type=int, default=11)
    p.add_argument("--block", type=int, default=3)
    p.add_argument("--gap", type=float, default=0.04)
    p.add_argument("--halves", action="store_true")
    a = p.parse_args()
    Xs, tri, rim = sheet(a.sheet)
    Xb, tets = block(a.block, a.gap) if a.block > 0 else (np.zeros((0, 3)), np.zeros((0, 4), np.int64))
    X = np.concatenate([Xs, Xb])
    tets = tets + len(Xs)
    points = [(3, r) for r in rim]
    names = ['0 3 "rim"', '2 2 "sheet"'] + (['3 1 "block"'] if len(tets) else [])
    if a.halves:
        names += ['0 4 "left"', '0 5 "right"', '0 6 "centre"']
        points += [(4, k) for k in range(len(Xs)) if Xs[k, 0] <= 0.5 + 1e-12] + [(5, k) for k in range(len(Xs)) if Xs[k, 0] >= 0.5 - 1e-12]
        points += [(6, int(np.argmin(np.linalg.norm(Xs - [0.5, 0, 0.5], axis=1))))]
    lines = ["$MeshFormat", "2.2 0 8", "$EndMeshFormat", "$PhysicalNames", str(len(names))] + names + ["$EndPhysicalNames", "$Nodes", str(len(X))]
    lines += [f"{k + 1} {x:.17g} {y:.17g} {z:.17g}" for k, (x, y, z) in enumerate(X)]
    lines += ["$EndNodes", "$Elements", str(len(points) + len(tri) + len(tets))]
    e = 0
    for group, r in points:
        e += 1
        lines.append(f"{e} 15 2 {group} 1 {r + 1}")
    for t in tri:
        e += 1
        lines.append(f"{e} 2 2 2 2 " + " ".join(str(v + 1) for v in t))
    for t in tets:
        e += 1
        lines.append(f"{e} 4 2 1 3 " + " ".join(str(v + 1) for v in t))
    lines.append("$EndElements")
    with open(a.out, "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
