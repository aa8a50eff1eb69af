#!/usr/bin/env python3
"""Independent check of the peridynamic contact step (issue 20; docs/peridynamics.md#contact-local-step):
in every frame of a pbng output file, no two primitives of the sheet's triangles (tri3 rows) are closer than
the contact thickness xi, and no vertex is closer than xi to an obstacle.

Pairs: vertex-triangle and edge-edge, leaving out primitives that share a vertex or whose vertices are
joined by a mesh edge, and primitives of one body (connected through mesh edges) closer than the rest
exclusion R in the rest positions (as the contact step does); vertex-obstacle with the obstacle's signed
distance.
Distances are computed here from the positions alone, by brute force over candidate pairs (boxes grown by
xi), with numpy — not with pbng's code.

Usage: check_thickness.py FILE [--thickness XI] [--rest-exclusion R] [--frames A:B] [--quiet]
XI: the root attribute pd_contact_thickness unless given; R: the root attribute pd_contact_rest_exclusion
(0 when absent) unless given. Exit 0 when every frame passes, 1 otherwise
(naming the closest pair), 2 for a file it cannot read."""
import argparse
import sys

import h5py
import numpy as np

from check_output import body_labels  # the union-find of the bodies (tests/ is this script's directory)

TRI3 = 2  # Gmsh type of /mesh/element_types


def topology(h5):
    types = h5["mesh/element_types"][:]
    rows = h5["mesh/elements"][:]
    tris = rows[types == TRI3][:, :3].astype(np.int64)
    edges = np.unique(np.sort(np.concatenate([tris[:, [0, 1]], tris[:, [1, 2]], tris[:, [2, 0]]]), axis=1), axis=0)
    n = int(h5["mesh/rest_positions"].shape[0])
    near = [set([v]) for v in range(n)]
    for a, b in edges:
        near[a].add(b)
        near[b].add(a)
    return tris, edges, near, body_labels(n, edges)


def rest_excluded(d_rest, same_body, r):
    """The pairs left out: of one body and closer than r at rest."""
    return same_body & (d_rest < r)


def seg_point(p, a, b):
    """Distance from points p to segments [a, b] (arrays of shape (m, 3))."""
    ab = b - a
    den = np.einsum("ij,ij->i", ab, ab)
    t = np.where(den > 0, np.einsum("ij,ij->i", p - a, ab) / np.where(den > 0, den, 1), 0.0)
    t = np.clip(t, 0, 1)
    return np.linalg.norm(p - (a + t[:, None] * ab), axis=1)


def point_triangle(p, a, b, c):
    """Distance from points p to triangles (a, b, c): the plane's where the projection falls inside, else the
    nearest edge's."""
    n = np.cross(b - a, c - a)
    nn = np.linalg.norm(n, axis=1)
    ok = nn > 0
    un = np.where(ok[:, None], n / np.where(ok, nn, 1)[:, None], 0)
    h = np.einsum("ij,ij->i", p - a, un)
    q = p - h[:, None] * un
    inside = ok.copy()
    for u, v in ((a, b), (b, c), (c, a)):
        inside &= np.einsum("ij,ij->i", np.cross(v - u, q - u), un) >= 0
    d = np.minimum(np.minimum(seg_point(p, a, b), seg_point(p, b, c)), seg_point(p, c, a))
    return np.where(inside, np.minimum(np.abs(h), d), d)


def edge_edge(a0, a1, b0, b1):
    """Distance between segments [a0, a1] and [b0, b1]: the interior stationary point when it lies inside both,
    else the smallest of the four endpoint-segment distances."""
    u, v, w = a1 - a0, b1 - b0, a0 - b0
    A, B, C = np.einsum("ij,ij->i", u, u), np.einsum("ij,ij->i", u, v), np.einsum("ij,ij->i", v, v)
    D, E = np.einsum("ij,ij->i", u, w), np.einsum("ij,ij->i", v, w)
    den = A * C - B * B
    good = den > 1e-14 * np.maximum(A * C, 1e-300)
    s = np.where(good, (B * E - C * D) / np.where(good, den, 1), -1)
    t = np.where(good, (A * E - B * D) / np.where(good, den, 1), -1)
    interior = good & (s > 0) & (s < 1) & (t > 0) & (t < 1)
    d_int = np.linalg.norm(w + s[:, None] * u - t[:, None] * v, axis=1)
    d = np.minimum.reduce([seg_point(a0, b0, b1), seg_point(a1, b0, b1), seg_point(b0, a0, a1), seg_point(b1, a0, a1)])
    return np.where(interior, np.minimum(d_int, d), d)


def obstacle_distance(row, x):
    """Signed distance to an obstacle row (kind, 6 parameters): plane 0, box 1, container 2, sphere 3."""
    kind, p = int(row[0]), row[1:]
    if kind == 0:
        n = p[3:6] / np.linalg.norm(p[3:6])
        return (x - p[0:3]) @ n
    if kind == 3:
        return np.linalg.norm(x - p[0:3], axis=1) - p[3]
    lo, hi = p[0:3], p[3:6]
    if kind == 1:  # solid box: outside allowed
        out = np.maximum(np.maximum(lo - x, x - hi), 0)
        inside = np.all((x > lo) & (x < hi), axis=1)
        depth = np.min(np.minimum(x - lo, hi - x), axis=1)
        return np.where(inside, -depth, np.linalg.norm(out, axis=1))
    # container: inside allowed
    return np.min(np.minimum(x - lo, hi - x), axis=1)


def candidates(xa, boxes_lo, boxes_hi, r):
    """Pairs (i, j) with point / box i's box within r of box j (chunked broadcasting)."""
    pairs = []
    lo_a, hi_a = xa
    for s in range(0, len(lo_a), 512):
        ov = np.all((lo_a[s:s + 512, None, :] <= boxes_hi[None, :, :] + r) & (hi_a[s:s + 512, None, :] >= boxes_lo[None, :, :] - r), axis=2)
        i, j = np.nonzero(ov)
        pairs.append(np.stack([i + s, j], axis=1))
    return np.concatenate(pairs) if pairs else np.zeros((0, 2), np.int64)


def frame_min(x, rest, topo, xi, r_ex, obstacles):
    """The smallest distance of the frame and the pair it belongs to."""
    tris, edges, near, body = topo
    best = (np.inf, "no pair within reach")
    tlo, thi = x[tris].min(axis=1), x[tris].max(axis=1)
    vt = candidates((x, x), tlo, thi, xi)
    keep = [k for k, (v, t) in enumerate(vt) if not any(c in near[v] for c in tris[t])]
    vt = vt[np.asarray(keep, dtype=np.int64)]
    if len(vt):
        d_rest = point_triangle(rest[vt[:, 0]], rest[tris[vt[:, 1], 0]], rest[tris[vt[:, 1], 1]], rest[tris[vt[:, 1], 2]])
        vt = vt[~rest_excluded(d_rest, body[vt[:, 0]] == body[tris[vt[:, 1], 0]], r_ex)]
    if len(vt):
        d = point_triangle(x[vt[:, 0]], x[tris[vt[:, 1], 0]], x[tris[vt[:, 1], 1]], x[tris[vt[:, 1], 2]])
        k = int(np.argmin(d))
        best = min(best, (float(d[k]), f"vertex {vt[k, 0]} - triangle {tuple(int(c) for c in tris[vt[k, 1]])}"))
    elo, ehi = x[edges].min(axis=1), x[edges].max(axis=1)
    ee = candidates((elo, ehi), elo, ehi, xi)
    ee = ee[ee[:, 0] < ee[:, 1]]
    keep = [k for k, (e, f) in enumerate(ee) if not any(c in near[edges[e, 0]] or c in near[edges[e, 1]] for c in edges[f])]
    ee = ee[np.asarray(keep, dtype=np.int64)]
    if len(ee):
        d_rest = edge_edge(rest[edges[ee[:, 0], 0]], rest[edges[ee[:, 0], 1]], rest[edges[ee[:, 1], 0]], rest[edges[ee[:, 1], 1]])
        ee = ee[~rest_excluded(d_rest, body[edges[ee[:, 0], 0]] == body[edges[ee[:, 1], 0]], r_ex)]
    if len(ee):
        d = edge_edge(x[edges[ee[:, 0], 0]], x[edges[ee[:, 0], 1]], x[edges[ee[:, 1], 0]], x[edges[ee[:, 1], 1]])
        k = int(np.argmin(d))
        best = min(best, (float(d[k]), f"edge {tuple(int(c) for c in edges[ee[k, 0]])} - edge {tuple(int(c) for c in edges[ee[k, 1]])}"))
    used = np.unique(tris)
    for o, row in enumerate(obstacles):
        d = obstacle_distance(row, x[used])
        k = int(np.argmin(d))
        best = min(best, (float(d[k]), f"vertex {used[k]} - obstacle {o}"))
    return best


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file")
    ap.add_argument("--thickness", type=float)
    ap.add_argument("--rest-exclusion", type=float)
    ap.add_argument("--frames", help="A:B, frames A..B-1 (default: all)")
    ap.add_argument("--quiet", action="store_true")
    args = ap.parse_args(argv)
    try:
        h5 = h5py.File(args.file, "r")
    except OSError as err:
        print(f"check_thickness: cannot open {args.file}: {err}")
        return 2
    with h5:
        xi = args.thickness if args.thickness is not None else float(h5.attrs.get("pd_contact_thickness", np.nan))
        if not np.isfinite(xi) or xi <= 0:
            print(f"check_thickness: {args.file}: no contact thickness (root attribute pd_contact_thickness; give --thickness)")
            return 2
        obstacles = np.asarray(h5.attrs["pd_obstacles"], dtype=np.float64).reshape(-1, 7) if "pd_obstacles" in h5.attrs else np.zeros((0, 7))
        r_ex = args.rest_exclusion if args.rest_exclusion is not None else float(h5.attrs.get("pd_contact_rest_exclusion", 0.0))
        topo = topology(h5)
        rest = h5["mesh/rest_positions"][:]
        names = sorted(h5["frames"].keys())
        if args.frames:
            a, b = (int(v) if v else None for v in args.frames.split(":"))
            names = names[a:b]
        worst, failures = (np.inf, "", ""), 0
        for name in names:
            x = h5[f"frames/{name}/positions"][:]
            d, where = frame_min(x, rest, topo, xi, r_ex, obstacles)
            if d <= xi:
                failures += 1
                print(f"FAIL: frame {name}: {where} {d:.6e} apart, not more than the thickness {xi:.6e}")
            if d < worst[0]:
                worst = (d, name, where)
        if not args.quiet:
            print(f"check_thickness: {args.file}: {len(names)} frames, xi {xi:.4e}, rest exclusion {r_ex:.4e}, smallest distance {worst[0]:.6e} "
                  f"({worst[0] / xi:.4f} xi) at frame {worst[1]}: {worst[2]}")
        return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
