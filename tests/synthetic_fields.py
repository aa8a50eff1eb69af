#!/usr/bin/python3
"""Writes a small synthetic pbng result (HDF5 + XDMF) with plastic strains and released-boundary handles, for
tests/test_check_output_fields.sh: StVK on 48 linear tetrahedra of a 3 x 3 x 3 node grid, the bottom layer
fixed, the top layer tied to handle targets by springs (/mesh/handle_stiffness) in frames 0 and 1
(/frames/N/handle_targets) and released in frame 2, a plastic strain per element in every frame.

Each frame's stored energy and residual are computed here, independently of tests/check_output.py: the
energy element by element from the Voigt plastic strain (xx, yy, zz, yz, xz, xy),
    Psi = mu tr(E_el^2) + lambda/2 tr(E_el)^2,  E_el = (F^T F - I)/2 - eps_p,
plus gravity on the lumped masses rho V/4 and the springs k_i/2 |x_i - T_i|^2, and the residual as the norm
over the free nodes of the energy's gradient taken by complex steps (exact to round-off for this
polynomial energy), not from any formula for the stress.

Usage: synthetic_fields.py OUT.h5   (writes OUT.h5 and OUT.xdmf)"""

import itertools
import os
import sys

import h5py
import numpy as np

E_MOD, NU, RHO = 1.0e3, 0.3, 10.0
GRAVITY = np.array([0.0, 0.0, -9.81])
TIMES = (0.0, 0.1, 0.2)
HANDLE_FRAMES = (0, 1)          # handle_targets present; released (absent) afterwards


def mesh():
    """Nodes of a 3 x 3 x 3 grid (spacing 0.5) and 6 tetrahedra per cube around its main diagonal, each
    oriented to a positive volume."""
    X = np.array([(i, j, k) for k in range(3) for j in range(3) for i in range(3)], float) * 0.5
    node = lambda p: int(p[0] + 3 * p[1] + 9 * p[2])
    tets = []
    for o in itertools.product(range(2), repeat=3):
        for perm in itertools.permutations(range(3)):
            p = np.array(o)
            t = [node(p)]
            for a in perm:
                p = p + np.eye(3, dtype=int)[a]
                t.append(node(p))
            D = X[t[1:]] - X[t[0]]
            if np.linalg.det(D.T) < 0:
                t[2], t[3] = t[3], t[2]
            tets.append(t)
    return X, np.array(tets, np.int64)


def coloring(n, tets):
    """Greedy node coloring: no two nodes of a tetrahedron share a color."""
    nbrs = [set() for _ in range(n)]
    for t in tets:
        for a in t:
            nbrs[a].update(int(b) for b in t if b != a)
    color = np.full(n, -1, np.int32)
    for i in range(n):
        used = {color[j] for j in nbrs[i]}
        color[i] = next(c for c in range(n) if c not in used)
    return color


def energy(x, X, tets, eps, k, T):
    """Total energy (works on complex positions: complex-step derivatives)."""
    mu, lam = E_MOD / (2 * (1 + NU)), E_MOD * NU / ((1 + NU) * (1 - 2 * NU))
    total = 0.0
    for e, t in enumerate(tets):
        Dm = (X[t[1:]] - X[t[0]]).T
        Ds = (x[t[1:]] - x[t[0]]).T
        V = np.linalg.det(Dm) / 6.0
        F = Ds @ np.linalg.inv(Dm)
        v = eps[e]
        ep = np.array([[v[0], v[5], v[4]], [v[5], v[1], v[3]], [v[4], v[3], v[2]]])
        El = 0.5 * (F.T @ F - np.eye(3)) - ep
        total = total + V * (mu * np.trace(El @ El) + 0.5 * lam * np.trace(El) ** 2)
        total = total - RHO * V / 4.0 * sum(GRAVITY @ x[i] for i in t)
    if T is not None:
        d = x - T
        total = total + 0.5 * np.sum(k * np.sum(d * d, axis=1))
    return total


def residual(x, X, tets, eps, k, T, free):
    """|grad E| over the free nodes by complex steps."""
    h = 1e-30
    g = np.zeros((len(x), 3))
    for i in np.flatnonzero(free):
        for c in range(3):
            xc = x.astype(complex)
            xc[i, c] += 1j * h
            g[i, c] = energy(xc, X, tets, eps, k, T).imag / h
    return float(np.linalg.norm(g[free]))


def xdmf(path, n, m, frames_with_targets):
    base = os.path.basename(path)
    cols = (0, 5, 4, 5, 1, 3, 4, 3, 2)
    out = ['<?xml version="1.0" ?>', '<Xdmf Version="3.0">', "  <Domain>",
           '    <Grid Name="pbng" GridType="Collection" CollectionType="Temporal">']
    for f, t in enumerate(TIMES):
        out += [f'      <Grid Name="frame_{f:06d}" GridType="Uniform">', f'        <Time Value="{t!r}"/>',
                f'        <Topology TopologyType="Tetrahedron" NumberOfElements="{m}" NodesPerElement="4">',
                f'          <DataItem Format="HDF" NumberType="Int" Precision="8" Dimensions="{m} 4">{base}:/mesh/tetrahedra</DataItem>',
                "        </Topology>", '        <Geometry GeometryType="XYZ">',
                f'          <DataItem Format="HDF" NumberType="Float" Precision="8" Dimensions="{n} 3">{base}:/frames/{f:06d}/positions</DataItem>',
                "        </Geometry>",
                '        <Attribute Name="plastic_strain" AttributeType="Tensor" Center="Cell">',
                f'          <DataItem ItemType="Function" Function="JOIN($0, $1, $2, $3, $4, $5, $6, $7, $8)" Dimensions="{m} 9">']
        for c in cols:
            out += [f'            <DataItem ItemType="HyperSlab" Dimensions="{m} 1">',
                    f'              <DataItem Dimensions="3 2" Format="XML">0 {c} 1 1 {m} 1</DataItem>',
                    f'              <DataItem Format="HDF" NumberType="Float" Precision="8" Dimensions="{m} 6">{base}:/frames/{f:06d}/plastic_strain</DataItem>',
                    "            </DataItem>"]
        out += ["          </DataItem>", "        </Attribute>"]
        if f in frames_with_targets:
            out += ['        <Attribute Name="handle_targets" AttributeType="Vector" Center="Node">',
                    f'          <DataItem Format="HDF" NumberType="Float" Precision="8" Dimensions="{n} 3">{base}:/frames/{f:06d}/handle_targets</DataItem>',
                    "        </Attribute>"]
        out.append("      </Grid>")
    out += ["    </Grid>", "  </Domain>", "</Xdmf>"]
    with open(os.path.splitext(path)[0] + ".xdmf", "w") as fh:
        fh.write("\n".join(out) + "\n")


def main(path):
    rng = np.random.default_rng(7)
    X, tets = mesh()
    n, m = len(X), len(tets)
    fixed = np.flatnonzero(X[:, 2] == 0.0).astype(np.int64)
    top = X[:, 2] == 1.0
    free = np.ones(n, bool)
    free[fixed] = False
    k = np.where(top, 400.0 + 10.0 * np.arange(n), 0.0)
    with h5py.File(path, "w") as h5:
        for key, val in (("format", "pbng-1"), ("element", "tet4"), ("material", "stvk"), ("solver", "pbng"),
                         ("command_line", "synthetic_fields.py"), ("mode", "quasistatic")):
            h5.attrs[key] = np.bytes_(val)
        h5.attrs["youngs_modulus"], h5.attrs["poisson_ratio"], h5.attrs["density"] = E_MOD, NU, RHO
        h5.attrs["gravity"] = GRAVITY
        h5.attrs["frames_written"] = np.int32(len(TIMES))
        h5["mesh/rest_positions"] = X
        h5["mesh/tetrahedra"] = tets
        h5["mesh/fixed_nodes"] = fixed
        h5["mesh/color"] = coloring(n, tets)
        h5["mesh/partition"] = np.zeros(n, np.int32)
        h5["mesh/handle_stiffness"] = k
        for f, t in enumerate(TIMES):
            x = X + (0.03 * f) * rng.normal(size=X.shape) * free[:, None]
            eps = np.zeros((m, 6)) if f == 0 else 0.02 * rng.normal(size=(m, 6))
            T = np.where(top[:, None], X + np.array([0.05 * f, 0.0, 0.1 * f]), 0.0) if f in HANDLE_FRAMES else None
            g = h5.create_group(f"frames/{f:06d}")
            pos = g.create_dataset("positions", data=x)
            g["plastic_strain"] = eps
            if T is not None:
                g["handle_targets"] = T
            r = residual(x, X, tets, eps, k, T, free)
            info = {"time": t, "iterations": np.int32(3 * f), "residual": r, "relative_residual": 1.0 if f == 0 else 0.5,
                    "seconds": 0.01, "energy": float(energy(x, X, tets, eps, k, T))}
            for loc in (g, pos):
                for key, val in info.items():
                    loc.attrs[key] = val
    xdmf(path, n, m, HANDLE_FRAMES)


if __name__ == "__main__":
    main(sys.argv[1])
