#!/usr/bin/env python3
"""Writes mixed_box_v22_ascii.msh: the unit cube as 4 x 4 x 4 cells, a conforming mesh of three kinds.

Cells with i = 0, 1 (x < 0.5) are 8-node hexahedra; cells with i = 2 are each split into 6 pyramids
(one per cube face, apex at the cell centre), so every face of the layer is a whole quadrangle, shared
with a hexahedron, a prism's side or another pyramid; cells with i = 3 are each split into two 6-node
prisms along the vertical diagonal plane (0,0)-(1,1), their quadrangle sides facing the pyramid layer
and their triangles stacked in z. Elements are listed cell by cell (x fastest); gmsh, converting the
file, groups them by type (hexahedra, prisms, pyramids). Physical groups: surface 1 "left" (x = 0), surface 2 "right" (x = 1), volume 3 "body".
Usage: mixed_box.py OUT.msh, then gmsh writes the four test files from it (tests/data/README.md)."""
import sys

N = 4
HEX_FACES_OUT = [(0, 3, 2, 1), (0, 1, 5, 4), (0, 4, 7, 3), (1, 2, 6, 5), (2, 3, 7, 6), (4, 5, 6, 7)]


def grid(i, j, k):
    return 1 + i + (N + 1) * (j + (N + 1) * k)


def main(path):
    nodes = [(grid(i, j, k), i / N, j / N, k / N) for k in range(N + 1) for j in range(N + 1) for i in range(N + 1)]
    elements = []  # (type, physical tag, node tags)
    for j in range(N):
        for k in range(N):
            elements.append((3, 1, [grid(0, j, k), grid(0, j, k + 1), grid(0, j + 1, k + 1), grid(0, j + 1, k)]))
            elements.append((3, 2, [grid(N, j, k), grid(N, j + 1, k), grid(N, j + 1, k + 1), grid(N, j, k + 1)]))
    for k in range(N):
        for j in range(N):
            for i in range(N):
                c = [grid(i, j, k), grid(i + 1, j, k), grid(i + 1, j + 1, k), grid(i, j + 1, k),
                     grid(i, j, k + 1), grid(i + 1, j, k + 1), grid(i + 1, j + 1, k + 1), grid(i, j + 1, k + 1)]
                if i < 2:
                    elements.append((5, 3, c))
                elif i == 2:
                    tag = len(nodes) + 1
                    nodes.append((tag, (i + 0.5) / N, (j + 0.5) / N, (k + 0.5) / N))
                    for f in HEX_FACES_OUT:  # base ordered inward (towards the apex)
                        elements.append((7, 3, [c[f[0]], c[f[3]], c[f[2]], c[f[1]], tag]))
                else:
                    elements.append((6, 3, [c[0], c[1], c[2], c[4], c[5], c[6]]))
                    elements.append((6, 3, [c[0], c[2], c[3], c[4], c[6], c[7]]))
    with open(path, "w") as f:
        f.write("$MeshFormat\n2.2 0 8\n$EndMeshFormat\n")
        f.write('$PhysicalNames\n3\n2 1 "left"\n2 2 "right"\n3 3 "body"\n$EndPhysicalNames\n')
        f.write(f"$Nodes\n{len(nodes)}\n")
        for tag, x, y, z in nodes:
            f.write(f"{tag} {x:.17g} {y:.17g} {z:.17g}\n")
        f.write(f"$EndNodes\n$Elements\n{len(elements)}\n")
        for n, (etype, phys, conn) in enumerate(elements, 1):
            f.write(f"{n} {etype} 2 {phys} {phys} " + " ".join(map(str, conn)) + "\n")
        f.write("$EndElements\n")


if __name__ == "__main__":
    main(sys.argv[1])
