#!/usr/bin/env python3
"""Checks a partitioned mesh file (pbng-partition, layout pbng-partition-1) on its own, independently of pbng:
every node owned by exactly one part; every ghost's owner owns it, with the same position and color; every element
in some part, the same nodes wherever it is stored; a part's elements exactly those with a node it owns; the node
colors a valid coloring (no element with two nodes of one color), the PBD/XPBD element colors (when the file has
them: nelem_colors) the same wherever an element is stored, below nelem_colors, no two elements of one color sharing
a node; its weak constraints (when it has them: nweak) each part's exactly those with a node it owns, in global order,
stored alike in every part, no two nodes of one constraint of one node color, their block colors (nblock_colors) and
PBD/XPBD colors (nelem_colors) the same wherever stored, no two constraints of one PBD/XPBD color sharing a node; and,
with --colors REF, all its colors equal to REF's (another partitioned file of the same mesh, which has them too) node by
node, element by element and constraint by constraint, and the weak constraints REF's (nodes, weights, springs, targets); with --sets MESH (the HDF5 mesh it was cut from), its node sets
MESH's /sets in name order, each part's members exactly the part's nodes (owned and ghosts) in the set, in increasing
local index. Prints what fails and exits 1."""
import argparse
import sys

import h5py
import numpy as np


def load(path):
    with h5py.File(path, "r") as f:
        d = {k: f[k][:] for k in ("/nodes/X", "/nodes/global", "/nodes/owner", "/nodes/color", "/nodes/offset", "/parts/nowned",
                                  "/elements/nodes", "/elements/global", "/elements/offset")}
        d["nnodes"], d["nelements"], d["nparts"] = int(f.attrs["nnodes"]), int(f.attrs["nelements"]), int(f.attrs["nparts"])
        if "nelem_colors" in f.attrs:
            d["/elements/color"], d["nelem_colors"] = f["/elements/color"][:], int(f.attrs["nelem_colors"])
        d["nweak"] = int(f.attrs["nweak"]) if "nweak" in f.attrs else 0
        if d["nweak"] > 0:
            for k in ("/weak/nodes", "/weak/weights", "/weak/spring", "/weak/target", "/weak/global", "/weak/offset"):
                d[k] = f[k][:]
            if "nelem_colors" in f.attrs:
                d["/weak/color"], d["nweak_colors"] = f["/weak/color"][:, 0], int(f.attrs["nweak_colors"])
            if "nblock_colors" in f.attrs:
                d["/weak/block_color"], d["nblock_colors"] = f["/weak/block_color"][:, 0], int(f.attrs["nblock_colors"])
    return d


def check(d):
    problems = []
    g, owner, color, X = d["/nodes/global"][:, 0], d["/nodes/owner"][:, 0], d["/nodes/color"][:, 0], d["/nodes/X"]
    no, eo, nowned = d["/nodes/offset"][:, 0], d["/elements/offset"][:, 0], d["/parts/nowned"][:, 0]
    n, P = d["nnodes"], d["nparts"]
    owned_count = np.zeros(n, dtype=np.int64)
    owned_row = np.full(n, -1, dtype=np.int64)  # the row of each node's owned copy
    for p in range(P):
        rows = np.arange(no[p], no[p] + nowned[p])
        if np.any(owner[rows] != p):
            problems.append(f"part {p}: an owned node of another owner")
        np.add.at(owned_count, g[rows], 1)
        owned_row[g[rows]] = rows
    if np.any(owned_count != 1):
        problems.append(f"{int(np.sum(owned_count == 0))} nodes owned by no part, {int(np.sum(owned_count > 1))} by several")
        return problems
    ghosts = np.concatenate([np.arange(no[p] + nowned[p], no[p + 1]) for p in range(P)])
    ref = owned_row[g[ghosts]]
    if np.any(owner[ghosts] != owner[ref]):
        problems.append(f"{int(np.sum(owner[ghosts] != owner[ref]))} ghosts whose owner does not own them")
    if np.any(X[ghosts] != X[ref]) or np.any(color[ghosts] != color[ref]):
        problems.append("ghosts whose position or color differs from their owner's copy")
    E, eg = d["/elements/nodes"], d["/elements/global"][:, 0]
    conn = np.full((d["nelements"], E.shape[1]), -1, dtype=np.int64)
    for p in range(P):
        rows = np.arange(eo[p], eo[p + 1])
        nodes = g[no[p] + E[rows]]
        seen = conn[eg[rows], 0] >= 0
        if np.any(conn[eg[rows]][seen] != nodes[seen]):
            problems.append(f"part {p}: elements stored with other nodes than in another part")
        conn[eg[rows]] = nodes
        if np.any(~np.any(E[rows] < nowned[p], axis=1)):
            problems.append(f"part {p}: elements without a node the part owns")
    if np.any(conn[:, 0] < 0):
        problems.append(f"{int(np.sum(conn[:, 0] < 0))} elements in no part")
        return problems
    node_owner = owner[owned_row]
    for p in range(P):  # every element touching a node of p is in p
        touching = np.flatnonzero(np.any(node_owner[conn] == p, axis=1))
        stored = eg[eo[p]:eo[p + 1]]
        if touching.size != stored.size or np.any(np.sort(stored) != touching):
            problems.append(f"part {p}: {stored.size} elements stored, {touching.size} touch its nodes")
    node_color = color[owned_row]
    c = node_color[conn]
    if any(np.any(c[:, a] == c[:, b]) for a in range(c.shape[1]) for b in range(a + 1, c.shape[1])):
        problems.append("an element has two nodes of one color")
    d["node_color"] = node_color
    if "nelem_colors" in d:
        problems += check_element_colors(d, conn, eg)
    if d["nweak"] > 0:
        problems += check_weak(d, node_owner)
    return problems


def check_weak(d, node_owner):
    """The weak constraints: each part's those with a node it owns, in global order, alike in every part, no two nodes
    of one of one node color; their colors alike wherever stored (the whole table in d["weak"] for --colors)."""
    problems, W, P = [], d["nweak"], d["nparts"]
    g, no, wo = d["/nodes/global"][:, 0], d["/nodes/offset"][:, 0], d["/weak/offset"][:, 0]
    wg, local = d["/weak/global"][:, 0], d["/weak/nodes"]
    nodes = np.full(local.shape, -1, dtype=np.int64)
    for p in range(P):
        rows = slice(wo[p], wo[p + 1])
        nodes[rows] = np.where(local[rows] >= 0, g[no[p] + np.maximum(local[rows], 0)], -1)
        if np.any(np.diff(wg[rows]) <= 0):
            problems.append(f"part {p}: weak constraints not in increasing global order")
    table = {k: np.full((W,) + d[k].shape[1:], np.nan) for k in ("/weak/weights", "/weak/spring", "/weak/target")}
    wnodes = np.full((W, local.shape[1]), -2, dtype=np.int64)
    colors = {k: np.full(W, -1, dtype=np.int64) for k in ("/weak/color", "/weak/block_color") if k in d}
    for rows in [np.arange(wo[p], wo[p + 1]) for p in range(P)]:
        ids, seen = wg[rows], wnodes[wg[rows], 0] != -2
        fields = [(wnodes, nodes)] + [(table[k], d[k]) for k in table] + [(colors[k][:, None], d[k][:, None]) for k in colors]
        if any(np.any(t[ids][seen] != v[rows][seen]) for t, v in fields):
            problems.append("a weak constraint stored with other nodes, weights, springs, targets or colors in another part")
        for t, v in fields:
            t[ids] = v[rows]
    if np.any(wnodes[:, 0] == -2):
        return problems + [f"{int(np.sum(wnodes[:, 0] == -2))} weak constraints in no part"]
    used = wnodes >= 0
    for p in range(P):
        touching = np.flatnonzero(np.any(used & (node_owner[np.maximum(wnodes, 0)] == p), axis=1))
        if not np.array_equal(np.sort(wg[wo[p]:wo[p + 1]]), touching):
            problems.append(f"part {p}: {wo[p + 1] - wo[p]} weak constraints stored, {touching.size} touch its nodes")
    c = np.where(used, d["node_color"][np.maximum(wnodes, 0)], -1 - np.arange(wnodes.shape[1]))
    if any(np.any(c[:, a] == c[:, b]) for a in range(c.shape[1]) for b in range(a + 1, c.shape[1])):
        problems.append("a weak constraint has two nodes of one color")
    for k, n in (("/weak/color", "nweak_colors"), ("/weak/block_color", "nblock_colors")):
        if k in colors and (np.any(colors[k] < 0) or np.any(colors[k] >= d[n])):
            problems.append(f"{k} outside 0 .. {d[n] - 1}")
    if "/weak/color" in colors:
        pairs = np.unique(np.stack([wnodes.reshape(-1), np.repeat(colors["/weak/color"], wnodes.shape[1])])[:, used.reshape(-1)], axis=1)
        incidences = np.unique(np.stack([wnodes.reshape(-1), np.repeat(np.arange(W), wnodes.shape[1])])[:, used.reshape(-1)], axis=1)
        if pairs.shape[1] != incidences.shape[1]:
            problems.append("two weak constraints of one PBD/XPBD color share a node")
    d["weak"] = dict(nodes=wnodes, **table, **colors)
    return problems


def check_element_colors(d, conn, eg):
    """The PBD/XPBD element colors: one per element, below nelem_colors, no node shared by two of one color."""
    ec, ncol = d["/elements/color"][:, 0], d["nelem_colors"]
    color = np.full(d["nelements"], -1, dtype=np.int64)
    color[eg] = ec
    if np.any(color[eg] != ec):
        return ["elements stored with other constraint colors than in another part"]
    if np.any(color < 0) or np.any(color >= ncol):
        return [f"element constraint colors outside 0 .. {ncol - 1}"]
    nodes = conn.reshape(-1)
    pairs = np.unique(np.stack([nodes, np.repeat(color, conn.shape[1])])[:, nodes >= 0], axis=1)
    incidences = np.unique(np.stack([nodes, np.repeat(np.arange(conn.shape[0]), conn.shape[1])])[:, nodes >= 0], axis=1)
    d["element_color"] = color
    return [] if pairs.shape[1] == incidences.shape[1] else ["two elements of one constraint color share a node"]


def check_sets(path, d, mesh):
    """The file's node sets against the mesh's /sets (list of problems)."""
    problems = []
    with h5py.File(mesh, "r") as m, h5py.File(path, "r") as f:
        names = sorted(m["/sets"]) if "/sets" in m else []
        want = {k: np.unique(m["/sets/" + k][:]) for k in names}
        nsets = int(f.attrs["nsets"])
        got = [f[f"/sets/{s:04d}"].attrs["name"] for s in range(nsets)] if "/sets" in f else []
        got = [g.decode() if isinstance(g, bytes) else str(g) for g in got]
        if got != names:
            return [f"sets {got}, the mesh has {names}"]
        g, no = d["/nodes/global"][:, 0], d["/nodes/offset"][:, 0]
        for s, name in enumerate(names):
            members, offset = f[f"/sets/{s:04d}/members"][:].reshape(-1), f[f"/sets/{s:04d}/offset"][:, 0]
            for p in range(d["nparts"]):
                local = np.flatnonzero(np.isin(g[no[p]:no[p + 1]], want[name]))
                stored = members[offset[p]:offset[p + 1]]
                if not np.array_equal(stored, local):
                    problems.append(f"part {p}: set {name} has {stored.size} members, the part has {local.size} of its nodes")
    return problems


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--colors", help="another partitioned file of the same mesh: the colors must be equal")
    ap.add_argument("--sets", help="the HDF5 mesh the file was cut from: its node sets must be the file's, restricted to each part")
    a = ap.parse_args()
    d = load(a.file)
    problems = check(d)
    if a.sets:
        problems += check_sets(a.file, d, a.sets)
    if not problems and a.colors:
        r = load(a.colors)
        rp = check(r)
        if rp:
            problems.append(f"{a.colors}: " + "; ".join(rp))
        elif not np.array_equal(d["node_color"], r["node_color"]):
            problems.append(f"node colors differ from {a.colors}'s at {int(np.sum(d['node_color'] != r['node_color']))} nodes")
        elif "element_color" in d and "element_color" not in r:
            problems.append(f"constraint colors in this file, not in {a.colors}")
        elif "element_color" in d and not np.array_equal(d["element_color"], r["element_color"]):
            problems.append(f"element colors differ from {a.colors}'s at {int(np.sum(d['element_color'] != r['element_color']))} elements")
        elif ("weak" in d) != ("weak" in r):
            problems.append(f"weak constraints in only one of this file and {a.colors}")
        elif "weak" in d:
            differ = [k for k in d["weak"] if not np.array_equal(d["weak"][k], r["weak"][k])]
            if differ:
                problems.append(f"weak constraints' {', '.join(differ)} differ from {a.colors}'s")
    for p in problems:
        print(f"check_partition_file: {a.file}: {p}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
