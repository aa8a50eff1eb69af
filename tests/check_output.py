#!/usr/bin/python3
"""Independent checker of pbng HDF5 result files (numpy + h5py only).

Nothing here is taken from the C code: the physics is re-implemented from the
formulas below so that a bug in pbng shows up as a disagreement.

Kinematics (linear tetrahedra).  For a tet with rest vertices X0..X3
    Dm = [X1-X0, X2-X0, X3-X0] (columns),  V = det(Dm)/6 > 0,
    F  = Ds Dm^-1  (Ds from the current positions),  J = det F,
    grad N_j (j = 1..3) = row j-1 of Dm^-1,  grad N_0 = -(sum of the others),
    so that F = sum_j x_j (x) grad N_j.
    cof(F) = J F^-T, built column-wise as [f1 x f2, f2 x f0, f0 x f1]
    (valid for singular F).

Materials, Lame mu = E/(2(1+nu)), lambda = E nu/((1+nu)(1-2nu)):
    corotated          Psi = mu |F-R|^2 + lambda/2 (J-1)^2,
                       P   = 2 mu (F-R) + lambda (J-1) cof F,
                       R = U V^T from F = U S V^T, with the last column of U
                       negated when det(U V^T) < 0.
    neohookean         lh = lambda + mu,
                       Psi = mu/2 |F|^2 + lh/2 (J - 1 - mu/lh)^2,
                       P   = mu F + lh (J - 1 - mu/lh) cof F.
    stable_neohookean  mu' = 4mu/3, l' = lambda + 5mu/6, a = 1 + 3mu'/(4l'),
                       Psi = mu'/2 (|F|^2-3) + l'/2 (J-a)^2 - mu'/2 log(|F|^2+1),
                       P   = mu' F (1 - 1/(|F|^2+1)) + l' (J-a) cof F.
    stvk               E = (F^T F - I)/2, Psi = mu tr(E^2) + lambda/2 tr(E)^2,
                       P   = F (2 mu E + lambda tr(E) I).
    neohookean_log     (generalized-PBD seed Eq. 20) Psi = mu/2 (|F|^2 - 3) - mu log J + lambda/2 (log J)^2,
                       P   = mu F + (lambda log J - mu) F^-T (F^-T by numpy's inverse, not from cof F);
                       J <= 0: Psi = +inf and P = NaN (no value: a result with an inverted
                       element fails every check that uses the stress).
    Plasticity (/frames/N/plastic_strain [M, 6], stvk on volume elements of any kind, no sheets): the
    frame's plastic strain eps_p of each element (Voigt xx, yy, zz, yz, xz, xy, tensor components) is
    taken off the Green strain, E_el = E - eps_p (on other kinds: E_q - eps_p at every quadrature point q
    of the element, the element's one eps_p): Psi = mu tr(E_el^2) + lambda/2 tr(E_el)^2,
    S = 2 mu E_el + lambda tr(E_el) I, P = F S.

Forces and energy.  Lumped mass m_i = sum_{e ni i} rho V_e / 4, f_ext_i = m_i g,
    f_int_i = -sum_e V_e P_e grad N_i^e.
    Weak constraints (/constraints/weak/, optional): C_c = sum_j a_j x_j - t_c (target, a binding's rest offset) over the
    row's nodes (signed weights a_j), energy 1/2 C^T K C, force -a_j K C on node j.
    Handles of a released boundary set (/mesh/handle_stiffness k [N], optional): in a frame
    holding /frames/N/handle_targets T [N, 3], node i gets the force k_i (T_i - x_i) and the
    energy k_i/2 |x_i - T_i|^2; in frames without it, nothing. Its nodes are free nodes.
    Quasistatic: r = |f_int + f_wc + f_ext| over free nodes (not in fixed_nodes),
                 E = sum_e V_e Psi(F_e) + sum_c 1/2 C^T K C - sum_i m_i g.x_i (all nodes).
    Dynamic (backward Euler, dt = t^n - t^{n-1}):
                 xhat = x^{n-1} + dt v^{n-1}, v^{n-1} = (x^{n-1}-x^{n-2})/(t^{n-1}-t^{n-2}),
                 v^0 = 0 (x^-1 = x^0); the free-node force gains -m_i (x_i - xhat_i)/dt^2
                 and E gains sum_free m_i/(2 dt^2) |x_i - xhat_i|^2 (not at frame 0).

Tolerances.  Every frame (frame 0 too) must match its stored `energy` to
ENERGY_RTOL x (|E| + sum_e V mu |F|^2 + sum_i m_i |g.x_i| + kinetic) and its
stored `residual` to RESIDUAL_RTOL x residual + RESIDUAL_FLOOR x a round-off
scale built from the sizes of the individual terms that cancel in the force
(see elastic()); on pbng's own files the agreement is ~1e-15 relative.

Other element kinds (root attribute `element`: tet10, tet20, hex8, hex27, prism6, pyramid5;
/mesh/elements in Gmsh's node order): the same energy and residual summed over quadrature points,
    F_q = sum_a x_a (x) grad N_a(X_q), grad N_a = J_q^-T dN_a/dr, J_q = sum_a X_a (x) dN_a/dr,
    V_q = w_q det J_q (> 0 required), E_el = sum_e sum_q V_q Psi(F_q),
    f_int_a = -sum_e sum_q V_q P(F_q) grad N_a,
    HRZ masses m_a = rho sum_q V_q N_a(q)^2 scaled to sum to rho sum_q V_q per element (inertia);
    gravity loads w_a g with the consistent weights w_a = rho sum_q V_q N_a(q) in quasistatic mode
    (f_ext_a = w_a g, E gains -sum_a w_a g.x_a), the HRZ masses in dynamic mode (w_a = m_a);
the bases, rules and the XDMF cell checks are described at "element kinds" below
(docs/output.md has the table).  --self-test checks those definitions without a file.
Meshes mixing kinds (root attribute `element` "mixed"): /mesh/elements rows padded with -1 and
/mesh/element_types (Gmsh ids); each kind's elements are summed as above with their own basis and
rule, and the XDMF Mixed topology (/mesh/xdmf_cells: type id, then nodes in XDMF order) is rebuilt
(hex27 as its 8 octant hexahedra, tet20's sub-tetrahedra checked as in a tet20 file).
Thin sheets (issue 18; root element "tri3", or tri3 and bend4 rows, -1 in /mesh/element_types for
bend4, in a mixed file): membrane energy t A 1/2 e.C e per triangle (E = (F^T F - I)/2 in the rest
triangle's weft/warp frame), Bergou's bending energy k_b/2 3/(A0 + A1) |sum_i K_i x_i|^2 per stencil,
their analytic forces, and the lumped masses rho_s t A / 3 per corner, with the sheet material of the
root attributes sheet_*; see "thin sheets" below.
Peridynamic membranes (root attribute sheet_model "peridynamic", with pd_material, pd_s0, pd_s1, pd_kb,
pd_thickness): the tri3 and bend4 terms are replaced by each vertex's ring energy W_i + E_b,i
(docs/peridynamics.md), its forces taken by complex steps; masses, loads, inertia and tolerances as for
other sheets; see "peridynamic membranes" below. With the contact barrier in the frame's energy (root attribute
pd_contact_kappa > 0) kappa sum_c B(f(d_c) - xi) over the pairs found here by brute force is added to every frame's
energy and residual; see "the contact barrier in the frame's energy" below.
XDMF companion: one grid per frame with its time, positions and the kind's topology; every HDF DataItem
names a dataset of the file with its shape, a grid refers to its own frame's group only, and the frame
fields are in the grids of the frames holding them (handle_targets a node Vector, plastic_strain a cell
Tensor joined from the Voigt columns).

Usage:
  check_output.py FILE.h5 [--max-relative-residual R] [--frames F]
                  [--patch-test] [--free-fall] [--compare OTHER.h5 --rtol T] [--quiet]
  check_output.py --self-test [--element-order-data DIR]
Exit 0 with one summary line when every check passes; otherwise every failure
is printed as "FAIL: ..." and the exit status is 1.
"""

import argparse
import math
import os
import re
import sys
import xml.etree.ElementTree as ET

import h5py
import numpy as np

MATERIALS = ("corotated", "neohookean", "stable_neohookean", "stvk", "neohookean_log")
MODES = ("quasistatic", "dynamic")
FRAME_ATTRS = ("time", "iterations", "residual", "relative_residual", "seconds", "energy")
ROOT_ATTRS = ("material", "youngs_modulus", "poisson_ratio", "density", "gravity",
              "solver", "command_line", "mode")
STRING_ATTRS = ("material", "solver", "command_line", "mode")

ENERGY_RTOL = 1e-10       # energy relative to |E| + sum_e V mu |F|^2 + sum_i m_i |g.x_i| (+ kinetic)
RESIDUAL_RTOL = 1e-6      # residual relative to the stored residual ...
RESIDUAL_FLOOR = 1e-14    # ... plus this times the round-off scale (see elastic, recompute)
PATCH_FIT_TOL = 1e-10     # affine fit on the fixed nodes, relative to the box size
PATCH_TOL = 1e-7          # free nodes against the affine map, relative to the box size
FREE_FALL_TOL = 1e-8      # relative to max(box size, displacement)


class Report:
    """Collects failures; every failure is printed as it is found."""

    def __init__(self):
        self.failures = 0

    def fail(self, msg):
        self.failures += 1
        print("FAIL: " + msg)

    def check(self, cond, msg):
        if not cond:
            self.fail(msg)
        return bool(cond)


# ----------------------------------------------------------------------------
# reading

def as_str(value):
    """Normalise an HDF5 string attribute (bytes, str, numpy bytes/array) to str."""
    if isinstance(value, np.ndarray):
        if value.size != 1:
            return None
        value = value.reshape(-1)[0]
    if isinstance(value, (bytes, np.bytes_)):
        return value.decode("utf-8", "replace")
    if isinstance(value, str):
        return value
    return None


def frame_names(h5):
    """Sorted names of the groups under /frames."""
    return sorted(h5["frames"].keys()) if "frames" in h5 else []


def frame_attr(h5, name, key):
    """A frame attribute, on the positions dataset or on the frame group."""
    ds = h5["frames"][name]
    if "positions" in ds and key in ds["positions"].attrs:
        return ds["positions"].attrs[key]
    return ds.attrs[key] if key in ds.attrs else None


# ----------------------------------------------------------------------------
# structure

def check_dataset(rep, h5, path, dtype, shape):
    """Dataset exists with dtype (numpy kind+size) and shape (None = any)."""
    if not rep.check(path in h5 and isinstance(h5[path], h5py.Dataset), f"missing dataset {path}"):
        return None
    ds = h5[path]
    ok = rep.check(ds.dtype == np.dtype(dtype), f"{path}: dtype {ds.dtype}, expected {np.dtype(dtype)}")
    ok &= rep.check(len(ds.shape) == len(shape) and all(s is None or s == t for s, t in zip(shape, ds.shape)),
                    f"{path}: shape {ds.shape}, expected {tuple('*' if s is None else s for s in shape)}")
    return ds[()] if ok else None


def read_root_attrs(rep, h5):
    """Root attributes, type-checked; returns a dict or None."""
    a = {}
    for key in ROOT_ATTRS:
        if not rep.check(key in h5.attrs, f"missing root attribute '{key}'"):
            return None
        a[key] = h5.attrs[key]
    for key in STRING_ATTRS:
        a[key] = as_str(a[key])
        if not rep.check(a[key] is not None, f"root attribute '{key}' is not a string"):
            return None
    rep.check(a["material"] in MATERIALS, f"unknown material '{a['material']}'")
    rep.check(a["mode"] in MODES, f"unknown mode '{a['mode']}'")
    for key in ("youngs_modulus", "poisson_ratio", "density"):
        v = np.asarray(a[key])
        if not rep.check(v.size == 1 and v.dtype.kind == "f", f"root attribute '{key}' is not a float scalar"):
            return None
        a[key] = float(v.reshape(-1)[0])
    g = np.asarray(a["gravity"])
    if not rep.check(g.shape == (3,) and g.dtype.kind == "f", f"root attribute 'gravity' shape {g.shape}, expected (3,)"):
        return None
    a["gravity"] = g.astype(np.float64)
    rep.check(a["youngs_modulus"] > 0, "youngs_modulus <= 0")
    rep.check(-1 < a["poisson_ratio"] < 0.5, "poisson_ratio outside (-1, 0.5)")
    rep.check(a["density"] > 0, "density <= 0")
    if a["material"] not in MATERIALS or a["mode"] not in MODES:
        return None
    return a


def check_mesh(rep, h5):
    """Mesh datasets: dtypes, shapes, index ranges, positive volumes, colouring."""
    base = read_mesh_datasets(rep, h5, "tetrahedra", 4)
    if base is None:
        return None
    X, tets, fixed, color, part = base
    n = X.shape[0]
    Dm = rest_shape(X, tets)
    vol = np.linalg.det(Dm) / 6.0
    bad = np.flatnonzero(~(vol > 0))
    if not rep.check(bad.size == 0, f"{bad.size} tetrahedra with non-positive rest volume (first: tet {bad[:1]})"):
        return None
    if color is not None:
        rep.check(color.min() >= 0, "negative color")
        c = color[tets]
        clash = np.zeros(len(tets), bool)
        for i in range(4):
            for j in range(i + 1, 4):
                clash |= c[:, i] == c[:, j]
        rep.check(not clash.any(), f"{int(clash.sum())} tetrahedra with two nodes of the same color "
                                   f"(first: tet {np.flatnonzero(clash)[0] if clash.any() else -1})")
    if part is not None:
        rep.check(part.min() >= 0, "negative partition")
    weak = read_weak_constraints(rep, h5, n)
    if weak is not None and color is not None:
        wn = weak["nodes"]
        clash = np.zeros(len(wn), bool)
        for i in range(wn.shape[1]):
            for j in range(i + 1, wn.shape[1]):
                both = (wn[:, i] >= 0) & (wn[:, j] >= 0)
                clash |= both & (color[np.maximum(wn[:, i], 0)] == color[np.maximum(wn[:, j], 0)])
        rep.check(not clash.any(), f"{int(clash.sum())} weak constraints with two nodes of the same color")
    free = np.ones(n, bool)
    free[fixed] = False
    Dm_inv = np.linalg.inv(Dm)
    grad = np.concatenate([-Dm_inv.sum(axis=1, keepdims=True), Dm_inv], axis=1)   # grad N_0..3
    return {"X": X, "tets": tets, "fixed": fixed, "free": free, "Dm_inv": Dm_inv, "vol": vol, "weak": weak,
            "node_loads": read_node_loads(rep, h5, n), "handle_stiffness": read_handle_stiffness(rep, h5, n, fixed),
            "grad_norm": np.sqrt(np.einsum("ejk,ejk->ej", grad, grad)),
            "Dm_inv_norm": np.sqrt(np.einsum("ejk,ejk->e", Dm_inv, Dm_inv))}


def read_mesh_datasets(rep, h5, name, npe, padded=False):
    """rest_positions, /mesh/<name> [M, npe], fixed_nodes, color, partition; types and index ranges
    (padded: -1 allowed, the padding of a mixed mesh's rows, checked by check_mesh_mixed)."""
    X = check_dataset(rep, h5, "mesh/rest_positions", np.float64, (None, 3))
    if X is None:
        return None
    n = X.shape[0]
    conn = check_dataset(rep, h5, f"mesh/{name}", np.int64, (None, npe))
    fixed = check_dataset(rep, h5, "mesh/fixed_nodes", np.int64, (None,))
    color = check_dataset(rep, h5, "mesh/color", np.int32, (n,))
    part = check_dataset(rep, h5, "mesh/partition", np.int32, (n,))
    if conn is None or fixed is None:
        return None
    ok = rep.check(np.all(np.isfinite(X)), "rest_positions not finite")
    ok &= rep.check(conn.shape[0] > 0, f"no {name}")
    ok &= rep.check(conn.size == 0 or (conn.min() >= (-1 if padded else 0) and conn.max() < n),
                    f"{name} indices outside [0, {n})")
    rep.check(fixed.size == 0 or (fixed.min() >= 0 and fixed.max() < n), f"fixed_nodes outside [0, {n})")
    rep.check(np.all(np.diff(fixed) > 0), "fixed_nodes not sorted and unique")
    return (X, conn, fixed, color, part) if ok else None


def check_frames(rep, h5, n):
    """Frames 000000.. consecutive, [n,3] float64 positions, attributes, increasing times."""
    names = frame_names(h5)
    if not rep.check(len(names) > 0, "no frames"):
        return None
    expected = [f"{k:06d}" for k in range(len(names))]
    if not rep.check(names == expected, f"frames not numbered consecutively from 000000: {names[:5]}..."):
        return None
    frames = []
    for name in names:
        x = check_dataset(rep, h5, f"frames/{name}/positions", np.float64, (n, 3))
        attrs = {}
        for key in FRAME_ATTRS:
            v = frame_attr(h5, name, key)
            if rep.check(v is not None and np.asarray(v).size == 1, f"frame {name}: missing attribute '{key}'"):
                attrs[key] = float(np.asarray(v).reshape(-1)[0])
        if x is None or len(attrs) != len(FRAME_ATTRS):
            return None
        rep.check(np.all(np.isfinite(x)), f"frame {name}: non-finite positions")
        if name == "000000" and "velocity" in h5[f"frames/{name}"]:  # a dynamic start with a velocity (projectile_sheet)
            attrs["initial_velocity"] = check_dataset(rep, h5, f"frames/{name}/velocity", np.float64, (n, 3))
        frames.append((x, attrs))
    t = np.array([a["time"] for _, a in frames])
    rep.check(np.all(np.diff(t) > 0), f"frame times not increasing: {t}")
    return frames


def check_xdmf(rep, path, frames, n, m, h5=None, mesh=None):
    """The .xdmf beside the file: parses, one grid per frame, references the h5 basename.

    Linear tetrahedra: the topology is /mesh/tetrahedra; other kinds: check_xdmf_topology."""
    xpath = re.sub(r"\.h5$", "", path) + ".xdmf"
    if not rep.check(os.path.isfile(xpath), f"missing {xpath}"):
        return
    try:
        root = ET.parse(xpath).getroot()
    except ET.ParseError as err:
        rep.fail(f"{xpath}: not well-formed XML: {err}")
        return
    base = os.path.basename(path)
    text = open(xpath, encoding="utf-8", errors="replace").read()
    grids = [g for g in root.iter("Grid") if g.get("GridType") == "Uniform"]
    rep.check(len(grids) == len(frames), f"{xpath}: {len(grids)} grids for {len(frames)} frames")
    for k, (_, attrs) in enumerate(frames):
        ref = f"{base}:/frames/{k:06d}/positions"
        rep.check(ref in text, f"{xpath}: no reference to {ref}")
        if k < len(grids):
            tm = grids[k].find("Time")
            ok = tm is not None and abs(float(tm.get("Value", "nan")) - attrs["time"]) <= 1e-12 * max(1.0, abs(attrs["time"]))
            rep.check(ok, f"{xpath}: grid {k} time differs from frame attribute {attrs['time']}")
    if mesh is not None and mesh.get("kind") == "mixed":
        check_xdmf_mixed(rep, h5, xpath, base, grids, mesh)
    elif mesh is not None and mesh.get("kind") == "tri3":
        check_xdmf_triangles(rep, h5, xpath, base, grids, mesh)
    elif mesh is not None and mesh.get("kind") == "cloth6":
        check_xdmf_cloth6(rep, h5, xpath, base, grids, mesh)
    elif mesh is not None and mesh.get("kind", "tet4") != "tet4":
        check_xdmf_topology(rep, h5, xpath, base, grids, mesh)
    else:
        rep.check(f"{base}:/mesh/tetrahedra" in text, f"{xpath}: no reference to {base}:/mesh/tetrahedra")
        rep.check(f'NumberOfElements="{m}"' in text, f"{xpath}: NumberOfElements is not {m}")
    rep.check(f'Dimensions="{n} 3"' in text, f"{xpath}: no '{n} 3' geometry dimensions")
    if h5 is not None:
        check_xdmf_references(rep, h5, xpath, base, grids, mesh)


def check_xdmf_references(rep, h5, xpath, base, grids, mesh):
    """Every HDF DataItem names a dataset of this file with its shape, and a grid refers to its own frame's
    group only; the frame fields appear in the grids of the frames holding them: handle_targets as a node
    Vector, plastic_strain as a cell Tensor joined from the Voigt columns into the full tensor, row-major:
    required for linear tetrahedra and wherever the topology draws one cell per element (as many cells as
    elements), checked wherever it is given."""
    voigt_columns = strain_from_voigt(np.arange(6)[None, :])[0].reshape(-1).tolist()
    for k, grid in enumerate(grids):
        for item in grid.iter("DataItem"):
            if item.get("Format") != "HDF":
                continue
            ref = (item.text or "").strip()
            fname, _, dset = ref.rpartition(":")
            if not rep.check(fname == base and dset in h5 and isinstance(h5[dset], h5py.Dataset),
                             f"{xpath}: grid {k} refers to {ref}, not a dataset of {base}"):
                continue
            dims = tuple(int(d) for d in item.get("Dimensions", "").split())
            rep.check(dims == h5[dset].shape, f"{xpath}: grid {k}: {dset} has shape {h5[dset].shape}, the XDMF says {dims}")
            own = re.match(r"/frames/(\d+)/", dset)
            rep.check(own is None or int(own.group(1)) == k, f"{xpath}: grid {k} refers to {dset} of another frame")
        attrs = {a.get("Name"): a for a in grid.findall("Attribute")}
        if f"frames/{k:06d}/handle_targets" in h5:
            a = attrs.get("handle_targets")
            rep.check(a is not None and a.get("Center") == "Node" and a.get("AttributeType") == "Vector",
                      f"{xpath}: grid {k}: no node Vector handle_targets")
        if f"frames/{k:06d}/plastic_strain" in h5 and mesh is not None and ("tets" in mesh or "elements" in mesh):
            a = attrs.get("plastic_strain")
            m = len(mesh["tets"] if "tets" in mesh else mesh["elements"])
            topo = grid.find("Topology")
            one_cell_each = topo is not None and topo.get("NumberOfElements") == str(m)
            if a is None and "tets" not in mesh and not one_cell_each:
                continue   # the drawn cells are not the elements (tet20's sub-tetrahedra, a mixed hex27's octants)
            fn = a.find("DataItem") if a is not None else None
            slabs = fn.findall("DataItem") if fn is not None else []
            cols = []
            for sl in slabs:   # start (row 0, column c), stride (1, 1), count (m, 1)
                v = (sl.find("DataItem").text or "").split() if sl.get("ItemType") == "HyperSlab" and sl.find("DataItem") is not None else []
                cols.append(int(v[1]) if len(v) == 6 and v[0] == "0" and v[2:] == ["1", "1", str(m), "1"] else None)
            rep.check(a is not None and a.get("Center") == "Cell" and a.get("AttributeType") == "Tensor" and fn.get("ItemType") == "Function"
                      and fn.get("Function", "").replace(" ", "") == "JOIN(" + ",".join(f"${j}" for j in range(9)) + ")"
                      and fn.get("Dimensions") == f"{m} 9" and cols == voigt_columns,
                      f"{xpath}: grid {k}: plastic_strain is not the cell Tensor joined from the Voigt columns {voigt_columns} (columns {cols})")


# ----------------------------------------------------------------------------
# physics

def rest_shape(X, tets):
    """Dm = [X1-X0, X2-X0, X3-X0] as columns, shape [M,3,3]."""
    P = X[tets]
    return np.stack([P[:, 1] - P[:, 0], P[:, 2] - P[:, 0], P[:, 3] - P[:, 0]], axis=2)


def cofactor(F):
    """cof F = J F^-T = columns [f1 x f2, f2 x f0, f0 x f1] (f_k = columns of F)."""
    def cross(a, b):
        return np.stack([a[:, 1] * b[:, 2] - a[:, 2] * b[:, 1],
                         a[:, 2] * b[:, 0] - a[:, 0] * b[:, 2],
                         a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0]], axis=1)
    f0, f1, f2 = F[:, :, 0], F[:, :, 1], F[:, :, 2]
    return np.stack([cross(f1, f2), cross(f2, f0), cross(f0, f1)], axis=2)


def closest_rotation(F):
    """R = U V^T from numpy's SVD, last column of U negated when det(U V^T) < 0."""
    U, _, Vt = np.linalg.svd(F)
    flip = np.linalg.det(U) * np.linalg.det(Vt) < 0
    U[flip, :, 2] *= -1.0
    return U @ Vt


def strain_from_voigt(v):
    """Symmetric strains [M, 3, 3] from their Voigt 6-vectors v [M, 6] = (xx, yy, zz, yz, xz, xy)."""
    return np.stack([np.stack([v[:, 0], v[:, 5], v[:, 4]], axis=1),
                     np.stack([v[:, 5], v[:, 1], v[:, 3]], axis=1),
                     np.stack([v[:, 4], v[:, 3], v[:, 2]], axis=1)], axis=1)


def stress(material, F, mu, lam, eps_p=None):
    """Energy density Psi [M] and first Piola-Kirchhoff stress P [M,3,3] (see module doc); eps_p [M, 6]:
    the plastic strains (stvk only), taken off the Green strain."""
    if eps_p is not None and material != "stvk":
        raise ValueError(f"plastic strain with material {material}")
    C = cofactor(F)
    J = np.einsum("ei,ei->e", F[:, :, 0], C[:, :, 0])      # det F = f0 . (f1 x f2)
    I1 = np.einsum("eij,eij->e", F, F)
    if material == "corotated":
        D = F - closest_rotation(F)
        psi = mu * np.einsum("eij,eij->e", D, D) + 0.5 * lam * (J - 1.0) ** 2
        P = 2.0 * mu * D + (lam * (J - 1.0))[:, None, None] * C
    elif material == "neohookean":
        lh = lam + mu
        s = J - 1.0 - mu / lh
        psi = 0.5 * mu * I1 + 0.5 * lh * s ** 2
        P = mu * F + (lh * s)[:, None, None] * C
    elif material == "stable_neohookean":
        mu2 = 4.0 * mu / 3.0
        lam2 = lam + 5.0 * mu / 6.0
        alpha = 1.0 + 3.0 * mu2 / (4.0 * lam2)
        psi = 0.5 * mu2 * (I1 - 3.0) + 0.5 * lam2 * (J - alpha) ** 2 - 0.5 * mu2 * np.log(I1 + 1.0)
        P = (mu2 * (1.0 - 1.0 / (I1 + 1.0)))[:, None, None] * F + (lam2 * (J - alpha))[:, None, None] * C
    elif material == "stvk":
        E = 0.5 * (np.einsum("eki,ekj->eij", F, F) - np.eye(3))
        if eps_p is not None:
            E = E - strain_from_voigt(eps_p)
        trE = np.einsum("eii->e", E)
        psi = mu * np.einsum("eij,eij->e", E, E) + 0.5 * lam * trE ** 2
        P = np.einsum("eik,ekj->eij", F, 2.0 * mu * E + (lam * trE)[:, None, None] * np.eye(3))
    elif material == "neohookean_log":
        ok = J > 0.0
        Fs = np.where(ok[:, None, None], F, np.eye(3))         # a stand-in where the barrier has no value
        logJ = np.log(np.linalg.det(Fs))
        psi = np.where(ok, 0.5 * mu * (I1 - 3.0) - mu * logJ + 0.5 * lam * logJ ** 2, np.inf)
        P = mu * F + (lam * logJ - mu)[:, None, None] * np.transpose(np.linalg.inv(Fs), (0, 2, 1))
        P = np.where(ok[:, None, None], P, np.nan)
    else:
        raise ValueError(material)
    return psi, P, I1, C


def scatter(tets, values, n):
    """Sum per-tet-vertex vectors values [M,4,3] into nodes [n,3]."""
    idx = tets.reshape(-1)
    v = values.reshape(-1, 3)
    return np.stack([np.bincount(idx, weights=v[:, c], minlength=n) for c in range(3)], axis=1)


def lame(attrs):
    """mu = E/(2(1+nu)), lambda = E nu/((1+nu)(1-2nu))."""
    E, nu = attrs["youngs_modulus"], attrs["poisson_ratio"]
    return E / (2.0 * (1.0 + nu)), E * nu / ((1.0 + nu) * (1.0 - 2.0 * nu))


def read_node_loads(rep, h5, n):
    """/mesh/node_loads [n, 3]: the point load's share of every node (-load_box, -load_force), zeros when absent.
    Every loaded node carries the same share."""
    if "mesh/node_loads" not in h5:
        return np.zeros((n, 3))
    p = check_dataset(rep, h5, "mesh/node_loads", np.float64, (n, 3))
    if p is None or not rep.check(np.isfinite(p).all(), "/mesh/node_loads: non-finite values"):
        return np.zeros((n, 3))
    loaded = np.abs(p).sum(axis=1) > 0
    rep.check(loaded.any() and np.all(p[loaded] == p[loaded][0]), "/mesh/node_loads: the loaded nodes do not share the load equally")
    return p


def read_handle_stiffness(rep, h5, n, fixed):
    """/mesh/handle_stiffness [n]: the springs k_i >= 0 tying a released boundary set's nodes to their motion
    (-bcK_release), None when absent. Those nodes (k_i > 0) are free nodes, not in fixed_nodes."""
    if "mesh/handle_stiffness" not in h5:
        return None
    k = check_dataset(rep, h5, "mesh/handle_stiffness", np.float64, (n,))
    if k is None or not rep.check(np.isfinite(k).all() and (k >= 0).all(), "/mesh/handle_stiffness: negative or non-finite values"):
        return None
    held = np.flatnonzero(k[fixed] > 0) if len(fixed) else []
    rep.check(len(held) == 0, f"/mesh/handle_stiffness: {len(held)} handle nodes in /mesh/fixed_nodes (first: node {fixed[held[0]] if len(held) else -1})")
    return k


def volume_only(mesh):
    """Whether the mesh has volume elements only (no tri3 or bend4 sheets): the meshes plasticity is for."""
    if mesh.get("kind") == "mixed":
        return not any(g["kind"] in SHEET_NODES for g in mesh["groups"])
    return mesh.get("kind") not in SHEET_NODES


def read_frame_fields(rep, h5, mesh, attrs, nframes):
    """Per frame, {"plastic_strain": eps_p [M, 6] or None, "handle_targets": T [n, 3] or None}.

    plastic_strain: material stvk on volume elements (any kind, no sheets), one row per element, finite. handle_targets: needs
    /mesh/handle_stiffness, finite, zero for the nodes without a spring, in frames 0..K and absent
    afterwards (the handles act while t <= T)."""
    n = len(mesh["X"])
    k = mesh.get("handle_stiffness")
    fields = []
    released = None
    for f in range(nframes):
        name = f"frames/{f:06d}"
        out = {"plastic_strain": None, "handle_targets": None}
        if f"{name}/plastic_strain" in h5:
            ok = rep.check(attrs is not None and attrs["material"] == "stvk",
                           f"frame {f:06d}: plastic_strain with material {attrs['material'] if attrs else '?'} (stvk only)")
            ok &= rep.check(volume_only(mesh), f"frame {f:06d}: plastic_strain on a mesh of {mesh.get('kind', 'tet4')} with sheets "
                                                f"(volume elements only)")
            eps = check_dataset(rep, h5, f"{name}/plastic_strain", np.float64, (len(mesh.get("tets", mesh.get("elements"))), 6))
            if eps is not None and rep.check(np.isfinite(eps).all(), f"frame {f:06d}: plastic_strain not finite") and ok:
                out["plastic_strain"] = eps
        if f"{name}/handle_targets" in h5:
            T = check_dataset(rep, h5, f"{name}/handle_targets", np.float64, (n, 3))
            ok = rep.check(k is not None, f"frame {f:06d}: handle_targets without /mesh/handle_stiffness")
            ok &= rep.check(released is None, f"frame {f:06d}: handle_targets again after frame {released} had none")
            if T is not None and rep.check(np.isfinite(T).all(), f"frame {f:06d}: handle_targets not finite") and ok:
                rep.check(np.all(T[k == 0] == 0), f"frame {f:06d}: handle_targets nonzero for nodes without a handle")
                out["handle_targets"] = T
        elif released is None and k is not None:
            released = f"{f:06d}"
        fields.append(out)
    return fields


def handle_terms(k, T, x):
    """Handle energy sum k_i/2 |x_i - T_i|^2, nodal forces k_i (T_i - x_i), per-node round-off scale and
    the energy's round-off scale sum k_i |x_i| |x_i - T_i|; nothing without targets (T None)."""
    n = len(x)
    if k is None or T is None:
        return 0.0, np.zeros((n, 3)), np.zeros(n), 0.0
    d = x - T
    dn = np.linalg.norm(d, axis=1)
    xn = np.linalg.norm(x, axis=1)
    return 0.5 * float(np.dot(k, dn ** 2)), -k[:, None] * d, k * (xn + np.linalg.norm(T, axis=1)), float(np.dot(k, xn * dn))


def read_weak_constraints(rep, h5, n):
    """/constraints/weak/{nodes, weights, stiffness}, or None when the file has none."""
    if "constraints/weak" not in h5:
        return None
    nodes = check_dataset(rep, h5, "constraints/weak/nodes", np.int64, (None, 8))
    w = check_dataset(rep, h5, "constraints/weak/weights", np.float64, (None, 8))
    K = check_dataset(rep, h5, "constraints/weak/stiffness", np.float64, (None, 9))
    if nodes is None or w is None or K is None:
        return None
    ok = rep.check(len(nodes) == len(w) == len(K) > 0, "weak constraint datasets of different lengths")
    ok &= rep.check(nodes.max() < n and np.all((nodes >= 0).sum(axis=1) >= 2), "weak constraint nodes out of range")
    ok &= rep.check(np.all(w[nodes < 0] == 0), "weak constraint weights past the last node")
    ok &= rep.check(np.allclose(w.sum(axis=1), 0, atol=1e-12), "weak constraint weights do not sum to 0 (sides of 1 - 1)")
    Ks = K.reshape(-1, 3, 3)
    ok &= rep.check(np.allclose(Ks, Ks.transpose(0, 2, 1)), "weak constraint stiffness not symmetric")
    target = np.zeros((len(nodes), 3))
    if "constraints/weak/target" in h5:  # a binding's rest offset (-bind_distance); older files have none
        t = check_dataset(rep, h5, "constraints/weak/target", np.float64, (len(nodes), 3))
        ok &= rep.check(t is not None and np.isfinite(t).all(), "weak constraint targets missing or not finite")
        target = t if t is not None else target
    return {"nodes": nodes, "weights": w, "K": Ks, "target": target} if ok else None


def weak_terms(weak, x):
    """Weak-constraint energy, nodal forces and per-node round-off scale."""
    n = len(x)
    if weak is None:
        return 0.0, np.zeros((n, 3)), np.zeros(n)
    idx = np.maximum(weak["nodes"], 0)
    a = weak["weights"]
    C = np.einsum("cj,cjd->cd", a, x[idx]) - weak["target"]
    KC = np.einsum("cij,cj->ci", weak["K"], C)
    energy = 0.5 * float(np.einsum("ci,ci->", C, KC))
    fj = -a[:, :, None] * KC[:, None, :]
    f = np.zeros((n, 3))
    for d in range(3):
        f[:, d] = np.bincount(idx.reshape(-1), weights=fj[:, :, d].reshape(-1), minlength=n)
    # C is a difference of terms of size sum_j |a_j| |x_j|: its round-off, times |K|, times |a_j|
    scale_c = np.abs(weak["K"]).sum(axis=(1, 2)) * (np.einsum("cj,cjd->c", np.abs(a), np.abs(x[idx])) + np.abs(weak["target"]).sum(axis=1))
    size = np.abs(a) * scale_c[:, None]
    mag = np.bincount(idx.reshape(-1), weights=size.reshape(-1), minlength=n)
    return energy, f, mag


def read_contacts(rep, h5, n, nframes):
    """Per frame, its contacts (/frames/NNNNNN/contacts, issue 17) as weak-constraint terms
    C = x_v - sum_j w_j x_j - target with K = k_n n n^T + k_t (I - n n^T) (root attribute
    contact_stiffness), unilateral when the root attribute contact_model says so; None without."""
    if "contact_stiffness" not in h5.attrs:
        return None
    kn, kt = (float(v) for v in np.asarray(h5.attrs["contact_stiffness"]).reshape(-1)[:2])
    unilateral = as_str(h5.attrs.get("contact_model", "spring")) == "unilateral"
    out = []
    for k in range(nframes):
        g = f"frames/{k:06d}/contacts"
        if not rep.check(g in h5, f"frame {k:06d}: no contacts group in a contact run"):
            return None
        v = np.asarray(h5[g + "/vertex"][:]).reshape(-1)
        tri = np.asarray(h5[g + "/triangle"][:]).reshape(-1, 3)
        w = np.asarray(h5[g + "/weights"][:]).reshape(-1, 3)
        nrm = np.asarray(h5[g + "/normal"][:]).reshape(-1, 3)
        target = np.asarray(h5[g + "/target"][:]).reshape(-1, 3)
        gap = np.asarray(h5[g + "/gap"][:]).reshape(-1)
        ok = rep.check(len(v) == len(tri) == len(w) == len(nrm) == len(target) == len(gap), f"frame {k:06d}: contact datasets of different lengths")
        ok &= rep.check(len(v) == 0 or (v.min() >= 0 and v.max() < n and tri.max() < n), f"frame {k:06d}: contact nodes out of range")
        ok &= rep.check(np.all(w[tri < 0] == 0) and np.all(w >= 0), f"frame {k:06d}: contact weights negative or past the corners")
        ok &= rep.check(np.allclose(np.linalg.norm(nrm, axis=1), 1.0, atol=1e-12), f"frame {k:06d}: contact normals not unit")
        tri_rows = tri >= 0
        ok &= rep.check(np.all(~tri_rows.any(axis=1) | np.isclose(w.sum(axis=1), 1.0, atol=1e-12)),
                        f"frame {k:06d}: triangle weights do not sum to one")
        if not ok:
            return None
        nodes = np.full((len(v), 4), -1, np.int64)
        nodes[:, 0], nodes[:, 1:] = v, tri
        a = np.zeros((len(v), 4))
        a[:, 0], a[:, 1:] = 1.0, -w
        K = kn * np.einsum("ci,cj->cij", nrm, nrm) + kt * (np.eye(3)[None] - np.einsum("ci,cj->cij", nrm, nrm))
        out.append({"nodes": nodes, "a": a, "K": K, "n": nrm, "target": target, "gap": gap, "unilateral": unilateral})
    return out


def contact_terms(c, x):
    """Contact energy, nodal forces and round-off scale (weak_terms with a target and the unilateral form)."""
    n = len(x)
    if c is None or len(c["nodes"]) == 0:
        return 0.0, np.zeros((n, 3)), np.zeros(n)
    idx = np.maximum(c["nodes"], 0)
    a = np.where(c["nodes"] >= 0, c["a"], 0.0)
    C = np.einsum("cj,cjd->cd", a, x[idx]) - c["target"]
    K = c["K"].copy()
    if c["unilateral"]:
        K[np.einsum("ci,ci->c", c["n"], C) >= 0] = 0.0
    KC = np.einsum("cij,cj->ci", K, C)
    energy = 0.5 * float(np.einsum("ci,ci->", C, KC))
    fj = -a[:, :, None] * KC[:, None, :]
    f = np.zeros((n, 3))
    for d in range(3):
        f[:, d] = np.bincount(idx.reshape(-1), weights=fj[:, :, d].reshape(-1), minlength=n)
    scale_c = np.abs(c["K"]).sum(axis=(1, 2)) * (np.einsum("cj,cjd->c", np.abs(a), np.abs(x[idx])) + np.abs(c["target"]).sum(axis=1))
    mag = np.bincount(idx.reshape(-1), weights=(np.abs(a) * scale_c[:, None]).reshape(-1), minlength=n)
    return energy, f, mag


def check_contacts(rep, h5, mesh, contacts, frames):
    """Per frame: the stored gaps n.C recomputed; the frame's node colors (node_color) valid with the
    contacts: no element, weak constraint or contact has two free nodes of one color."""
    free = mesh["free"]
    for k, c in enumerate(contacts):
        x = frames[k][0]
        if len(c["nodes"]):
            idx = np.maximum(c["nodes"], 0)
            a = np.where(c["nodes"] >= 0, c["a"], 0.0)
            gap = np.einsum("ci,ci->c", c["n"], np.einsum("cj,cjd->cd", a, x[idx]) - c["target"])
            scale = 1e-12 * (1.0 + np.abs(x).max())
            rep.check(np.abs(gap - c["gap"]).max() <= scale, f"frame {k:06d}: stored contact gaps differ from n.C by {np.abs(gap - c['gap']).max():.3e}")
        name = f"frames/{k:06d}/node_color"
        if not rep.check(name in h5, f"frame {k:06d}: no node_color in a contact run"):
            continue
        color = np.asarray(h5[name][:]).reshape(-1)
        rows = [mesh.get("tets", mesh.get("elements")), c["nodes"]]
        if mesh.get("weak") is not None:
            rows.append(mesh["weak"]["nodes"])
        clashes = sum(rows_with_repeated_color(r, color, free) for r in rows if r is not None and len(r))
        rep.check(clashes == 0, f"frame {k:06d}: {clashes} elements, weak constraints or contacts with two free nodes of one color")


# Corner faces (outward) of the kinds the penetration check reads: Gmsh's local corner numbers.
CORNER_FACES = {"tet": ((0, 2, 1), (0, 1, 3), (0, 3, 2), (3, 1, 2)),
                "hex": ((0, 3, 2, 1), (0, 1, 5, 4), (0, 4, 7, 3), (1, 2, 6, 5), (2, 3, 7, 6), (4, 5, 6, 7))}


def element_rows(mesh):
    """The mesh's elements as (kind, node rows) pairs: one pair for a mesh of one kind, one per kind for a
    mixed one."""
    if mesh.get("kind") == "mixed":
        return [(g["kind"], np.asarray(g["elements"])) for g in mesh["groups"]]
    return [(mesh.get("kind", "tet4"), np.asarray(mesh.get("tets", mesh.get("elements"))))]


def boundary_triangles(mesh):
    """The closed boundary surfaces of the volumes (outward triangles, corners only), the sheets'
    triangles (tri3, two-sided: not closed), and each node's body (connected component of all the
    elements, sheets and bending stencils included). For volumes of tetrahedra and hexahedra (one kind
    or mixed with sheets); None when another volume kind is present."""
    faces, sheets, rows = [], [], []
    for kind, el in element_rows(mesh):
        if kind == "tri3":
            sheets.append(el[:, :3])
        elif kind != "bend4":
            family = "tet" if kind.startswith("tet") else "hex" if kind.startswith("hex") else None
            if family is None:
                return None
            corners = el[:, :4 if family == "tet" else 8]
            faces += [(family, corners[:, f]) for f in CORNER_FACES[family]]
        rows.append(el)
    tris = np.zeros((0, 3), np.int64)
    for family in ("tet", "hex"):
        fam = [f for k, f in faces if k == family]
        if not fam:
            continue
        fam = np.concatenate(fam)
        key = np.sort(fam, axis=1)
        _, inverse, counts = np.unique(key, axis=0, return_inverse=True, return_counts=True)
        outer = fam[counts[inverse.reshape(-1)] == 1]
        tris = np.concatenate([tris, outer[:, [0, 1, 2]] if outer.shape[1] == 3 else np.concatenate([outer[:, [0, 1, 2]], outer[:, [0, 2, 3]]])])
    body = body_labels(len(mesh["X"]), (row for el in rows for row in el))
    sheet_tris = np.concatenate(sheets) if sheets else np.zeros((0, 3), np.int64)
    return tris, body, sheet_tris


def body_labels(n, groups):
    """Each of n nodes' connected component through groups of nodes (element rows, edges; negative entries
    skipped), as a label: equal labels, one component (union-find with path halving)."""
    parent = np.arange(n)

    def find(a):
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    for row in groups:
        row = row[row >= 0]
        r0 = find(row[0])
        for v in row[1:]:
            rv = find(v)
            if rv != r0:
                parent[rv] = r0
    return np.array([find(i) for i in range(n)])


def point_triangle_distance(P, A, B, C):
    """Distance of points P [m,3] to triangles (A, B, C) [t,3] each: [m,t] (by projection and the edges)."""
    def seg(P, A, B):
        AB = B - A
        t = np.clip(np.einsum("mtd,td->mt", P[:, None, :] - A[None], AB) / np.maximum(np.einsum("td,td->t", AB, AB), 1e-300), 0, 1)
        Q = A[None] + t[:, :, None] * AB[None]
        return np.linalg.norm(P[:, None, :] - Q, axis=2)
    n = np.cross(B - A, C - A)
    nn = np.linalg.norm(n, axis=1)
    nu = n / np.maximum(nn, 1e-300)[:, None]
    h = np.einsum("mtd,td->mt", P[:, None, :] - A[None], nu)
    Q = P[:, None, :] - h[:, :, None] * nu[None]
    def inside(Q):
        c1 = np.einsum("mtd,td->mt", np.cross(B - A, Q - A[None]), n)
        c2 = np.einsum("mtd,td->mt", np.cross(C - B, Q - B[None]), n)
        c3 = np.einsum("mtd,td->mt", np.cross(A - C, Q - C[None]), n)
        return (c1 >= 0) & (c2 >= 0) & (c3 >= 0)
    d = np.minimum(np.minimum(seg(P, A, B), seg(P, B, C)), seg(P, C, A))
    return np.where(inside(Q), np.abs(h), d)


def winding_number(P, A, B, C):
    """Generalised winding number of the closed triangle surface (A, B, C) at points P (van Oosterom-Strackee)."""
    a, b, c = A[None] - P[:, None], B[None] - P[:, None], C[None] - P[:, None]
    la, lb, lc = (np.linalg.norm(v, axis=2) for v in (a, b, c))
    num = np.einsum("mtd,mtd->mt", a, np.cross(b, c))
    den = la * lb * lc + np.einsum("mtd,mtd->mt", a, b) * lc + np.einsum("mtd,mtd->mt", b, c) * la + np.einsum("mtd,mtd->mt", c, a) * lb
    return (2 * np.arctan2(num, den)).sum(axis=1) / (4 * np.pi)


def points_inside(points, x, A, B, C, level):
    """The points (indices into x) at which the winding number of the surface (A, B, C) exceeds level,
    a chunk at a time (the winding numbers are a points x triangles array)."""
    for chunk in np.array_split(points, max(1, len(points) // 256)):
        if len(chunk) == 0:
            continue
        inside = winding_number(x[chunk], A, B, C) > level
        if inside.any():
            yield chunk[inside]


def obstacle_distance(kind, p, x):
    """Signed distance of points x to obstacle (kind, p[6]), positive on its allowed side (the kinds of
    pbng_obstacle: 0 plane, 1 box, 2 container, 3 sphere)."""
    if kind == 0:
        return (x - p[:3]) @ (p[3:] / np.linalg.norm(p[3:]))
    if kind == 3:
        return np.linalg.norm(x - p[:3], axis=1) - p[3]
    lo, hi = p[:3], p[3:]
    inside_gap = np.minimum(x - lo, hi - x).min(axis=1)                 # >= 0 inside the box
    outside = np.linalg.norm(np.maximum(np.maximum(lo - x, x - hi), 0), axis=1)
    box = np.where(inside_gap >= 0, -inside_gap, outside)               # positive outside the box
    return box if kind == 1 else -box


def frame_penetrations(h5, mesh, frames, reach=0.0):
    """Per frame, the deepest surface vertex inside another body (winding number of that body's boundary
    surface > 1/2, depth its distance to that surface) or node beyond an obstacle (root attribute
    obstacles), as (depth, where) with depth 0 and where None when there is none: from the positions
    alone, not from pbng's contact list. reach widens the bodies' boxes that preselect vertices (a vertex
    inside a body is inside its box: any reach >= 0 gives the same answer). None for meshes of other kinds."""
    bt = boundary_triangles(mesh)
    if bt is None:
        return None
    tris, body, sheet_tris = bt
    obst = np.asarray(h5.attrs["obstacles"]).reshape(-1, 7) if "obstacles" in h5.attrs else np.zeros((0, 7))
    surf = np.unique(np.concatenate([tris.ravel(), sheet_tris.ravel()]))  # sheet vertices are points inside or not
    result = []
    for k, (x, _) in enumerate(frames):
        worst = (0.0, None)
        for o in obst:
            phi = obstacle_distance(int(o[0]), o[1:], x)
            if -phi.min() > worst[0]:
                worst = (-phi.min(), f"frame {k:06d}: node {int(np.argmin(phi))} {-phi.min():.3e} beyond obstacle {o[:1]}")
        for b in np.unique(body[tris[:, 0]]):
            mine = tris[body[tris[:, 0]] == b]
            others = surf[body[surf] != b]
            if len(others) == 0:
                continue
            A, B, C = x[mine[:, 0]], x[mine[:, 1]], x[mine[:, 2]]
            lo, hi = np.minimum(np.minimum(A, B), C).min(axis=0), np.maximum(np.maximum(A, B), C).max(axis=0)
            near = others[np.all((x[others] >= lo - reach) & (x[others] <= hi + reach), axis=1)]
            for hit in points_inside(near, x, A, B, C, 0.5):
                d = point_triangle_distance(x[hit], A, B, C).min(axis=1)
                if d.max() > worst[0]:
                    worst = (d.max(), f"frame {k:06d}: node {int(hit[np.argmax(d)])} {d.max():.3e} inside body {b}")
        result.append(worst)
    return result


def node_neighbours(mesh, n):
    """[n, n] booleans: nodes sharing an element (any kind), each node with itself."""
    A = np.eye(n, dtype=bool)
    for _, el in element_rows(mesh):
        for a in range(el.shape[1]):
            for b in range(el.shape[1]):
                ok = (el[:, a] >= 0) & (el[:, b] >= 0)
                A[el[ok, a], el[ok, b]] = True
    return A


def sheet_gaps(mesh, frames):
    """Per frame, the smallest distance from a surface vertex (of the volumes' boundaries or of the sheets)
    to a sheet triangle none of whose corners shares an element with it, as (gap, where); (inf, None)
    when there is no such pair. A vertex that passed through a sheet came closer than the sheet's contact
    thickness on its way (pbng keeps vertices -contact_thickness away from sheets, either side)."""
    bt = boundary_triangles(mesh)
    if bt is None:
        return None
    tris, _, sheet_tris = bt
    n = len(mesh["X"])
    verts = np.unique(np.concatenate([tris.ravel(), sheet_tris.ravel()]))
    if len(sheet_tris) == 0 or n > 20000:
        return None if n > 20000 else [(np.inf, None)] * len(frames)
    A = node_neighbours(mesh, n)
    result = []
    for k, (x, _) in enumerate(frames):
        worst = (np.inf, None)
        T = sheet_tris
        for chunk in np.array_split(verts, max(1, len(verts) // 256)):
            d = point_triangle_distance(x[chunk], x[T[:, 0]], x[T[:, 1]], x[T[:, 2]])
            d[A[np.ix_(chunk, T[:, 0])] | A[np.ix_(chunk, T[:, 1])] | A[np.ix_(chunk, T[:, 2])]] = np.inf
            i, j = np.unravel_index(np.argmin(d), d.shape)
            if d[i, j] < worst[0]:
                worst = (d[i, j], f"frame {k:06d}: node {int(chunk[i])} {d[i, j]:.3e} from sheet triangle {tuple(int(c) for c in T[j])}")
        result.append(worst)
    return result


def check_sheet_gap(rep, mesh, frames, gap):
    """No surface vertex closer than `gap` to a sheet triangle it shares no element with (sheet_gaps)."""
    per_frame = sheet_gaps(mesh, frames)
    if not rep.check(per_frame is not None, "--min-sheet-gap: meshes of tetrahedra, hexahedra and sheets up to 20000 nodes only"):
        return np.inf
    worst = min(per_frame, key=lambda w: w[0])
    rep.check(worst[0] >= gap, f"sheet gap {worst[1]} < {gap:.3e}")
    return worst[0]


def check_penetration(rep, h5, mesh, frames, depth):
    """No surface vertex deeper than `depth` inside another body, no node deeper than `depth` beyond an
    obstacle (frame_penetrations)."""
    per_frame = frame_penetrations(h5, mesh, frames, depth)
    if not rep.check(per_frame is not None, "--max-penetration: meshes of tetrahedra or hexahedra (and sheets) only"):
        return
    worst = max(per_frame, key=lambda w: w[0])
    rep.check(worst[0] <= depth, f"penetration {worst[1]} > {depth:.3e}")


def check_self_penetration(rep, mesh, frames, depth):
    """No surface vertex deeper than `depth` inside another part of its own body. A vertex lies inside
    another part when the generalised winding number of its body's boundary surface at the vertex
    exceeds 1 (the triangles around the vertex add nothing there, so an unpenetrated vertex gets its
    own surface's share only, below 1: 1/2 on a flat face, up to 1 in a concave fold); its depth is then
    its distance to the nearest triangle facing it (normal against the vertex's area-weighted normal) that
    it lies behind. From the positions alone, not from pbng's list."""
    bt = boundary_triangles(mesh)
    if not rep.check(bt is not None, "--max-self-penetration: meshes of tetrahedra or hexahedra only"):
        return 0.0, 0
    tris, body, _ = bt
    worst, flagged = (0.0, None), 0
    for k, (x, _) in enumerate(frames):
        for b in np.unique(body[tris[:, 0]]):
            mine = tris[body[tris[:, 0]] == b]
            A, B, C = x[mine[:, 0]], x[mine[:, 1]], x[mine[:, 2]]
            tn = np.cross(B - A, C - A)
            vn = np.zeros_like(x)
            for j in range(3):
                np.add.at(vn, mine[:, j], tn)
            verts = np.unique(mine)
            for hit in points_inside(verts, x, A, B, C, 1.0):
                flagged += len(hit)
                Q, nv = x[hit], vn[hit]
                facing = (np.einsum("md,td->mt", nv, tn) < 0) & (np.einsum("mtd,td->mt", Q[:, None, :] - A[None], tn) < 0)
                d = np.where(facing, point_triangle_distance(Q, A, B, C), np.inf).min(axis=1)
                if d.max() > worst[0]:
                    worst = (d.max(), f"frame {k:06d}: node {int(hit[np.argmax(d)])} {d.max():.3e} inside its own body {b}")
    rep.check(worst[0] <= depth, f"self-penetration {worst[1]} > {depth:.3e}")
    return worst[0], flagged


def rows_with_repeated_color(rows, color, free):
    """How many rows of node indices (-1: none) hold two free nodes of one color."""
    r = np.asarray(rows).reshape(len(rows), -1)
    valid = (r >= 0) & free[np.maximum(r, 0)]
    col = np.sort(np.where(valid, color[np.maximum(r, 0)], -1), axis=1)
    return int(((col[:, 1:] == col[:, :-1]) & (col[:, 1:] >= 0)).any(axis=1).sum())


def lumped_mass(mesh, rho):
    """m_i = sum over tets containing i of rho V / 4."""
    w = np.repeat(rho * mesh["vol"] / 4.0, 4)
    return np.bincount(mesh["tets"].reshape(-1), weights=w, minlength=len(mesh["X"]))


def elastic(mesh, x, material, mu, lam, eps_p=None):
    """Elastic energy sum V Psi, nodal f_int, per-node round-off scale, sum V mu |F|^2 (eps_p: the frame's
    plastic strains [M, 6], or None).

    The round-off scale of node i is
        sum_e V_e (mu + |lambda|)(|F_e| + |cof F_e|)(1 + max|x| |Dm_e^-1|) |grad N_i^e|:
    the size of the individual stress terms that cancel in P (P(I) = 0 is a
    difference of O(mu) terms, so it is not zero at the rest state) times the
    cancellation factor of Ds = x_j - x_0 (|x|/h)."""
    tets, Dm_inv, vol = mesh["tets"], mesh["Dm_inv"], mesh["vol"]
    F = rest_shape(x, tets) @ Dm_inv                       # Ds Dm^-1
    psi, P, I1, C = stress(material, F, mu, lam, eps_p)
    # V P grad N_j for j = 1..3: grad N_j is row j-1 of Dm^-1, i.e. column j-1 of Dm^-T
    H = np.empty((len(tets), 4, 3))
    H[:, 1:, :] = np.einsum("e,eik,ejk->eji", vol, P, Dm_inv)   # H[e, j, :] = V P grad N_j
    H[:, 0, :] = -H[:, 1:, :].sum(axis=1)
    n = len(x)
    f_int = -scatter(tets, H, n)
    cond = 1.0 + np.abs(x).max() * mesh["Dm_inv_norm"]     # |x|/h: cancellation in Ds
    sigma = vol * (mu + abs(lam)) * (np.sqrt(I1) + np.sqrt(np.einsum("eij,eij->e", C, C))) * cond
    term = sigma[:, None] * mesh["grad_norm"]
    mag = np.bincount(tets.reshape(-1), weights=term.reshape(-1), minlength=n)
    return float(np.dot(vol, psi)), f_int, mag, float(mu * np.dot(vol, I1))


def recompute(mesh, attrs, frames, k, mass, load, contacts=None, fields=None):
    """(residual, energy, residual floor scale, energy scale) of frame k (frame 0: no inertia);
    mass: the lumped masses (inertia), load: the gravity load weights; contacts: the frame's, or None;
    fields: the frame's plastic strains and handle targets (read_frame_fields), or None."""
    mu, lam = lame(attrs)
    g = attrs["gravity"]
    x = frames[k][0]
    fields = fields or {}
    eps_p = fields.get("plastic_strain")
    if eps_p is None:
        W, f_int, mag, wscale = physics_of(mesh)[0](mesh, x, attrs["material"], mu, lam)
    else:   # volume elements only (read_frame_fields): each element's eps_p at its every quadrature point
        W, f_int, mag, wscale = physics_of(mesh)[0](mesh, x, attrs["material"], mu, lam, eps_p)
    Wc, f_wc, mag_wc = weak_terms(mesh["weak"], x)
    Wk, f_k, mag_k = contact_terms(contacts, x)
    Wh, f_h, mag_h, hscale = handle_terms(mesh.get("handle_stiffness"), fields.get("handle_targets"), x)
    if mesh.get("pd_barrier") is not None:   # the contact barrier in the frame's energy (barrier_terms)
        Wb, f_b, mag_b = barrier_terms(mesh, x)
        Wh, f_h, mag_h, hscale = Wh + Wb, f_h + f_b, mag_h + mag_b, hscale + Wb
    p = mesh.get("node_loads", np.zeros_like(x))
    f_ext = load[:, None] * g[None, :] + p
    f = f_int + f_wc + f_k + f_h + f_ext
    gx = load * (x @ g) + np.einsum("ij,ij->i", p, x)
    energy = W + Wc + Wk + Wh - gx.sum()
    scale_n = mag + mag_wc + mag_k + mag_h + np.linalg.norm(f_ext, axis=1)
    escale = abs(energy) + wscale + Wc + Wk + Wh + hscale + np.abs(gx).sum()
    if attrs["mode"] == "dynamic" and k >= 1:
        t = [a["time"] for _, a in frames]
        dt = t[k] - t[k - 1]
        xp = frames[k - 1][0]
        v0 = frames[0][1].get("initial_velocity")
        v = (xp - frames[k - 2][0]) / (t[k - 1] - t[k - 2]) if k >= 2 else (np.zeros_like(xp) if v0 is None else v0)
        d = x - (xp + dt * v)
        inertia = mass[:, None] * d / dt ** 2
        f -= inertia
        free = mesh["free"]
        kin = 0.5 / dt ** 2 * mass[free] * np.einsum("ij,ij->i", d[free], d[free])
        energy += kin.sum()
        escale += kin.sum()
        scale_n = scale_n + np.linalg.norm(inertia, axis=1)
    free = mesh["free"]
    residual = float(np.linalg.norm(f[free]))
    return residual, energy, float(np.linalg.norm(scale_n[free])), escale


def check_physics(rep, mesh, attrs, frames, max_rel, contacts=None, fields=None):
    """Recomputed residual and energy of every frame against the stored attributes (fields: per frame,
    read_frame_fields).

    Frame 0 (the initial state) is checked too, without an inertia term; the
    --max-relative-residual bound applies to frames >= 1 only."""
    _, mass_fn, load_fn = physics_of(mesh)
    mass = mass_fn(mesh, attrs["density"])
    load = load_fn(mesh, attrs["density"]) if attrs["mode"] == "quasistatic" else mass
    tag = f"{attrs['material']}/{attrs['mode']}"
    if mesh.get("pd") is not None:
        tag = f"peridynamic {mesh['pd']['opt']['material']}/{attrs['mode']}"
    elif "elements" in mesh:
        tag = f"{mesh['kind']} {tag}"
    for k in range(len(frames)):
        a = frames[k][1]
        r, E, fscale, escale = recompute(mesh, attrs, frames, k, mass, load, contacts[k] if contacts else None,
                                         fields[k] if fields else None)
        rtol = RESIDUAL_RTOL * abs(a["residual"]) + RESIDUAL_FLOOR * fscale
        rep.check(abs(r - a["residual"]) <= rtol,
                  f"frame {k:06d} ({tag}): recomputed residual {r:.10e} != stored {a['residual']:.10e} "
                  f"(|diff| {abs(r - a['residual']):.3e} > tol {rtol:.3e})")
        etol = ENERGY_RTOL * escale
        rep.check(abs(E - a["energy"]) <= etol,
                  f"frame {k:06d} ({tag}): recomputed energy {E:.12e} != stored {a['energy']:.12e} "
                  f"(|diff| {abs(E - a['energy']):.3e} > tol {etol:.3e})")
        if max_rel is not None and k >= 1:
            rel = a["relative_residual"]
            rep.check(rel <= max_rel, f"frame {k:06d}: relative_residual {rel:.3e} > {max_rel:.3e}")
            if rel > 0:
                r0 = a["residual"] / rel
                rep.check(r <= max_rel * r0 + RESIDUAL_FLOOR * fscale,
                          f"frame {k:06d}: recomputed residual {r:.3e} > {max_rel:.3e} x initial residual {r0:.3e}")


# ----------------------------------------------------------------------------
# element kinds other than the linear tetrahedron (root attribute `element`)
#
# Written from textbook definitions, not from pbng's C code:
#   * reference nodes in Gmsh's documented node order (Gmsh reference manual, "Node ordering"):
#     tetrahedron vertices (0,0,0), (1,0,0), (0,1,0), (0,0,1), edges (0,1), (1,2), (2,0), (3,0),
#     (3,2), (3,1) with their nodes running from the first vertex of the pair, faces (0,2,1),
#     (0,1,3), (0,3,2), (3,1,2); hexahedron vertices (-1,-1,-1), (1,-1,-1), (1,1,-1), (-1,1,-1) and
#     the same at z = 1, edges (0,1), (0,3), (0,4), (1,2), (1,5), (2,3), (2,6), (3,7), (4,5), (4,7),
#     (5,6), (6,7), faces (0,3,2,1), (0,1,5,4), (0,4,7,3), (1,2,6,5), (2,3,7,6), (4,5,6,7), centre;
#     prism (0,0,-1), (1,0,-1), (0,1,-1) and the same at z = 1; pyramid base counter-clockwise seen
#     from the apex, then the apex (0,0,1).  --self-test compares the tetrahedra and hex27 with the
#     meshes Gmsh itself wrote (tests/data/element_order/*.msh).
#   * Lagrange shape functions: N = m(r) V^-1 over a monomial basis m (complete of degree p for
#     tetrahedra, degree p per axis for hexahedra, {1,x,y} x {1,z} for the prism), V the
#     Vandermonde matrix of the reference nodes, so N_a(r_b) = delta_ab; the pyramid's rational
#     basis of Bedrosian (1992) in closed form: D = 1 - z, corner signs (sx, sy),
#     N_a = [(D + sx x)(D + sy y) + sx sy x y z / D] / (4 D), N_apex = z.
#   * quadrature of the degree docs/high_order.md documents, written from the literature so that
#     pbng's energies (not polynomial: J, cofactors, logs) are reproduced to round-off:
#       tet4: centroid, degree 1; tet10: the 4-point degree-2 rule, barycentric
#       ((5+3 sqrt5)/20, (5-sqrt5)/20 x 3) and permutations, weights V/4; tet20: the 14-point
#       degree-5 rule with positive weights (Walkington 2000; three orbits, see TET14);
#       hex8 / hex27: Gauss-Legendre 2^3 / 3^3 (numpy leggauss); prism: the 3-point interior
#       triangle rule (1/6,1/6), (2/3,1/6), (1/6,2/3) x 2 Gauss points in z; pyramid: 2x2 Gauss on
#       the base collapsed to the apex (x = xi (1-z), y = eta (1-z), Jacobian (1-z)^2) x 3 Gauss
#       points in z, exact for degree 3.  --self-test integrates every monomial up to each rule's
#       degree against the closed forms.  (The prism and pyramid rules cannot be compared with
#       pbng's yet: pbng generates neither kind; a different rule would change the energy by the
#       quadrature error only.)
#   * XDMF cells as ParaView reads them (VTK's cell definitions): Tetrahedron_10 edges (0,1), (1,2),
#     (2,0), (0,3), (1,3), (2,3); Hexahedron_27 edges (0,1), (1,2), (2,3), (3,0), (4,5), (5,6),
#     (6,7), (7,4), (0,4), (1,5), (2,6), (3,7), faces x=-1, x=1, y=-1, y=1, z=-1, z=1, centre (the
#     vtkTriQuadraticHexahedron figure and parametric coordinates; the face list in its class
#     comment disagrees with both); Wedge: (0,1,2) is the base whose right-hand normal points AWAY
#     from (3,4,5) (vtkWedge's documentation; the opposite of Gmsh's prism, see meshio PR 863);
#     Pyramid as Gmsh's.  Each is checked by interpolation: the element's own (Gmsh-order)
#     interpolation of the rest geometry at VTK node k's reference point must be the node the XDMF
#     cell lists at k, and both interpolations must agree at the quadrature points.  In a Mixed
#     topology hex27 is 8 linear hexahedra instead (ParaView 5.11's XDMF readers take 24 nodes for a
#     Hexahedron_27 there): the octants of [-1,1]^3, cell i + 2j + 4k on octant (i, j, k), corners in
#     vtkHexahedron's order on the octant's axes (hex27_octant_cells), compared value by value.

TET_V = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], float)
TET_EDGES = ((0, 1), (1, 2), (2, 0), (3, 0), (3, 2), (3, 1))
TET_FACES = ((0, 2, 1), (0, 1, 3), (0, 3, 2), (3, 1, 2))
HEX_V = np.array([[-1, -1, -1], [1, -1, -1], [1, 1, -1], [-1, 1, -1],
                  [-1, -1, 1], [1, -1, 1], [1, 1, 1], [-1, 1, 1]], float)
HEX_EDGES = ((0, 1), (0, 3), (0, 4), (1, 2), (1, 5), (2, 3), (2, 6), (3, 7), (4, 5), (4, 7), (5, 6), (6, 7))
HEX_FACES = ((0, 3, 2, 1), (0, 1, 5, 4), (0, 4, 7, 3), (1, 2, 6, 5), (2, 3, 7, 6), (4, 5, 6, 7))
VTK_TET10_EDGES = ((0, 1), (1, 2), (2, 0), (0, 3), (1, 3), (2, 3))
VTK_HEX27_EDGES = ((0, 1), (1, 2), (2, 3), (3, 0), (4, 5), (5, 6), (6, 7), (7, 4), (0, 4), (1, 5), (2, 6), (3, 7))
VTK_HEX27_FACES = ((0, 4, 7, 3), (1, 2, 6, 5), (0, 1, 5, 4), (3, 2, 6, 7), (0, 1, 2, 3), (4, 5, 6, 7))
PRISM_V = np.array([[0, 0, -1], [1, 0, -1], [0, 1, -1], [0, 0, 1], [1, 0, 1], [0, 1, 1]], float)
VTK_WEDGE_V = np.array([[0, 0, -1], [0, 1, -1], [1, 0, -1], [0, 0, 1], [0, 1, 1], [1, 0, 1]], float)
PYRAMID_V = np.array([[-1, -1, 0], [1, -1, 0], [1, 1, 0], [-1, 1, 0], [0, 0, 1]], float)
VTK_HEX_V = HEX_V               # vtkHexahedron's corners: (0,0,0), (1,0,0), (1,1,0), (0,1,0), then t = 1

# 14-point degree-5 rule on the tetrahedron (Walkington 2000), weights normalised to sum 1:
# (a, a, a, 1-3a) x 4 for two values of a, (b, b, 1/2-b, 1/2-b) x 6.
TET14 = ((0.0927352503108912264, 0.0734930431163619495),
         (0.3108859192633006097, 0.1126879257180158508),
         (0.0455037041256496494, 0.0425460207770814664))


def tet_nodes(p):
    """Reference nodes of the order-p Lagrange tetrahedron in Gmsh's order (p = 1, 2, 3)."""
    nodes = list(TET_V)
    for a, b in TET_EDGES:
        for k in range(1, p):
            nodes.append(TET_V[a] + k / p * (TET_V[b] - TET_V[a]))
    if p == 3:
        nodes += [TET_V[list(f)].mean(axis=0) for f in TET_FACES]
    return np.array(nodes)


def hex_nodes(p, edges=HEX_EDGES, faces=HEX_FACES):
    """Reference nodes of hex8 (p = 1) or hex27 (p = 2) with the given edge and face order."""
    nodes = list(HEX_V)
    if p == 2:
        nodes += [(HEX_V[a] + HEX_V[b]) / 2 for a, b in edges]
        nodes += [HEX_V[list(f)].mean(axis=0) for f in faces]
        nodes.append(np.zeros(3))
    return np.array(nodes)


def vtk_tet10_nodes():
    return np.array(list(TET_V) + [(TET_V[a] + TET_V[b]) / 2 for a, b in VTK_TET10_EDGES])


def hex27_octant_cells():
    """hex27 in a Mixed topology (ParaView 5.11 reads no Hexahedron_27 there): 8 linear hexahedra [8, 8]
    of hex27's (Gmsh-order) local nodes, cell i + 2j + 4k on the octant (i, j, k) of [-1, 1]^3 (0: the
    half towards -1), its corner c at VTK's hexahedron corner c of the octant (so oriented as the
    element)."""
    ref = hex_nodes(2)
    cells = []
    for k in (0, 1):
        for j in (0, 1):
            for i in (0, 1):
                corners = np.array([i, j, k], float) - 1.0 + (VTK_HEX_V + 1.0) / 2.0
                cells.append([int(np.flatnonzero((ref == c).all(axis=1))[0]) for c in corners])
    return np.array(cells)


class Lagrange:
    """Lagrange basis on `nodes` over the monomials x^i y^j z^k, (i, j, k) in `exps`."""

    def __init__(self, nodes, exps):
        self.nodes = np.asarray(nodes, float)
        self.exps = np.array(exps, int)
        V = self.mono(self.nodes)
        if V.shape[0] != V.shape[1]:
            raise ValueError("Vandermonde matrix not square")
        self.C = np.linalg.inv(V)

    def mono(self, r):
        return np.prod(np.asarray(r, float)[:, None, :] ** self.exps[None, :, :], axis=2)

    def N(self, r):
        return self.mono(r) @ self.C

    def dN(self, r):
        r = np.asarray(r, float)
        pw = r[:, None, :] ** self.exps[None, :, :]                     # [P, m, 3]
        d = np.empty(pw.shape)
        for k in range(3):
            e = self.exps[:, k]
            dk = np.where(e > 0, e * r[:, None, k] ** np.maximum(e - 1, 0), 0.0)
            others = [j for j in range(3) if j != k]
            d[:, :, k] = dk * pw[:, :, others[0]] * pw[:, :, others[1]]
        return np.einsum("pmd,ma->pad", d, self.C)                      # [P, n, 3]


class Pyramid:
    """Bedrosian's rational basis on the pyramid, closed form (see above)."""

    nodes = PYRAMID_V

    def N(self, r):
        x, y, z = r[:, 0], r[:, 1], r[:, 2]
        apex = z >= 1.0                                  # the limit there: N_apex = 1, the others 0
        D = np.where(apex, 1.0, 1.0 - z)
        out = np.empty((len(r), 5))
        for a in range(4):
            sx, sy = PYRAMID_V[a, 0], PYRAMID_V[a, 1]
            out[:, a] = np.where(apex, 0.0, ((D + sx * x) * (D + sy * y) + sx * sy * x * y * z / D) / (4.0 * D))
        out[:, 4] = z
        return out

    def dN(self, r):
        x, y, z = r[:, 0], r[:, 1], r[:, 2]
        D = 1.0 - z
        out = np.zeros((len(r), 5, 3))
        for a in range(4):
            sx, sy = PYRAMID_V[a, 0], PYRAMID_V[a, 1]
            A = (D + sx * x) * (D + sy * y)
            B = sx * sy * x * y * z / D
            out[:, a, 0] = (sx * (D + sy * y) + sx * sy * y * z / D) / (4.0 * D)
            out[:, a, 1] = (sy * (D + sx * x) + sx * sy * x * z / D) / (4.0 * D)
            A_z = -(D + sy * y) - (D + sx * x)
            B_z = sx * sy * x * y / D ** 2            # d/dz (z/D) = 1/D^2
            out[:, a, 2] = (A_z + B_z) / (4.0 * D) + (A + B) / (4.0 * D ** 2)
        out[:, 4, 2] = 1.0
        return out


def tet_exps(p):
    return [(i, j, k) for i in range(p + 1) for j in range(p + 1) for k in range(p + 1) if i + j + k <= p]


def hex_exps(p):
    return [(i, j, k) for i in range(p + 1) for j in range(p + 1) for k in range(p + 1)]


PRISM_EXPS = [(i, j, k) for k in (0, 1) for (i, j) in ((0, 0), (1, 0), (0, 1))]


def tet_rule(kind):
    """Points r [Q,3] and weights w [Q] (sum 1/6) of the tetrahedral rules above."""
    if kind == "tet4":
        bary = [[0.25] * 4]
        w = [1.0]
    elif kind == "tet10":
        a, b = (5.0 - np.sqrt(5.0)) / 20.0, (5.0 + 3.0 * np.sqrt(5.0)) / 20.0
        bary = [[b if i == j else a for i in range(4)] for j in range(4)]
        w = [0.25] * 4
    else:
        bary, w = [], []
        for a, wa in TET14[:2]:
            for j in range(4):
                bary.append([1.0 - 3.0 * a if i == j else a for i in range(4)])
                w.append(wa)
        b, wb = TET14[2]
        for i, j in ((0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)):
            row = [0.5 - b] * 4
            row[i] = row[j] = b
            bary.append(row)
            w.append(wb)
    bary = np.array(bary)
    return bary[:, 1:].copy(), np.array(w) / 6.0


def gauss_tensor(n):
    x, w = np.polynomial.legendre.leggauss(n)
    g = np.array([[x[i], x[j], x[k]] for k in range(n) for j in range(n) for i in range(n)])
    return g, np.array([w[i] * w[j] * w[k] for k in range(n) for j in range(n) for i in range(n)])


def prism_rule():
    tri = np.array([[1 / 6, 1 / 6], [2 / 3, 1 / 6], [1 / 6, 2 / 3]])
    z, wz = np.polynomial.legendre.leggauss(2)
    r = np.array([[t[0], t[1], zz] for zz in z for t in tri])
    return r, np.array([wzz / 6.0 for wzz in wz for _ in tri])


def pyramid_rule():
    xi, wxi = np.polynomial.legendre.leggauss(2)
    t, wt = np.polynomial.legendre.leggauss(3)
    z, wz = (t + 1.0) / 2.0, wt / 2.0                                    # Gauss on [0, 1]
    r, w = [], []
    for zk, wk in zip(z, wz):
        for yj, wj in zip(xi, wxi):
            for xi_, wi in zip(xi, wxi):
                r.append([xi_ * (1.0 - zk), yj * (1.0 - zk), zk])
                w.append(wi * wj * wk * (1.0 - zk) ** 2)
    return np.array(r), np.array(w)


class Kind:
    """One element kind: Gmsh-order basis, quadrature, XDMF cell description."""

    def __init__(self, name, basis, rule, xdmf_type, xdmf_dataset, vtk_nodes=None, subcells=0):
        self.name, self.basis = name, basis
        self.n = len(basis.nodes)
        self.qr, self.qw = rule
        self.N_q = basis.N(self.qr)                                     # [Q, n]
        self.dN_q = basis.dN(self.qr)                                   # [Q, n, 3]
        self.xdmf_type, self.xdmf_dataset = xdmf_type, xdmf_dataset
        self.vtk_nodes = vtk_nodes                                      # reference points of XDMF node k
        self.subcells = subcells                                        # tet20: linear sub-tetrahedra


def make_kinds():
    return {
        "tet4": Kind("tet4", Lagrange(tet_nodes(1), tet_exps(1)), tet_rule("tet4"),
                     "Tetrahedron", "tetrahedra", tet_nodes(1)),
        "tet10": Kind("tet10", Lagrange(tet_nodes(2), tet_exps(2)), tet_rule("tet10"),
                      "Tetrahedron_10", "xdmf_cells", vtk_tet10_nodes()),
        "tet20": Kind("tet20", Lagrange(tet_nodes(3), tet_exps(3)), tet_rule("tet20"),
                      "Tetrahedron", "xdmf_cells", None, subcells=27),
        "hex8": Kind("hex8", Lagrange(hex_nodes(1), hex_exps(1)), gauss_tensor(2),
                     "Hexahedron", "elements", hex_nodes(1)),
        "hex27": Kind("hex27", Lagrange(hex_nodes(2), hex_exps(2)), gauss_tensor(3),
                      "Hexahedron_27", "xdmf_cells", hex_nodes(2, VTK_HEX27_EDGES, VTK_HEX27_FACES)),
        "prism6": Kind("prism6", Lagrange(PRISM_V, PRISM_EXPS), prism_rule(),
                       "Wedge", None, VTK_WEDGE_V),
        "pyramid5": Kind("pyramid5", Pyramid(), pyramid_rule(), "Pyramid", None, PYRAMID_V),
    }


KINDS = make_kinds()
KIND_DEGREE = {"tet4": 1, "tet10": 2, "tet20": 5}          # total degree of the tetrahedral rules


def kind_geometry(kind, Xe):
    """Rest geometry of elements Xe [M,n,3]: det J [M,Q], V_q [M,Q], grad N [M,Q,n,3]."""
    J = np.einsum("ead,qak->eqdk", Xe, kind.dN_q)                        # dX_d/dr_k
    det = np.linalg.det(J)
    Jinv = np.linalg.inv(np.where((det != 0)[:, :, None, None], J, np.eye(3)))
    G = np.einsum("qak,eqkd->eqad", kind.dN_q, Jinv)                     # J^-T dN/dr
    return det, kind.qw[None, :] * det, G


def kind_group(rep, kind_name, X, el, color, what):
    """Elements el [M,n] of one kind: no repeated node, det J > 0 at every quadrature point, no two
    nodes of one color; their rest geometry (V_q, grad N) as a dict, or None after a failure."""
    kind = KINDS[kind_name]
    srt = np.sort(el, axis=1)
    dup = np.flatnonzero((srt[:, 1:] == srt[:, :-1]).any(axis=1))
    if not rep.check(dup.size == 0, f"{dup.size} {what} list a node twice (first: element {dup[:1]})"):
        return None
    det, Vq, G = kind_geometry(kind, X[el])
    size = np.linalg.norm(X[el].max(axis=1) - X[el].min(axis=1), axis=1)      # element diagonal
    bad = np.flatnonzero(~(det > 1e-12 * size[:, None] ** 3).all(axis=1))
    if not rep.check(bad.size == 0, f"{bad.size} {what} with det J <= 0 (or degenerate) at a "
                                    f"quadrature point of the rest shape (first: element {bad[:1]})"):
        return None
    if color is not None:
        rep.check(color.min() >= 0, "negative color")
        c = np.sort(color[el], axis=1)
        clash = (c[:, 1:] == c[:, :-1]).any(axis=1)
        rep.check(not clash.any(), f"{int(clash.sum())} {what} with two nodes of the same color "
                                   f"(first: element {np.flatnonzero(clash)[0] if clash.any() else -1})")
    return {"kind": kind_name, "X": X, "elements": el, "Vq": Vq, "G": G, "vol": Vq.sum(axis=1), "size": size,
            "G_norm": np.sqrt(np.einsum("eqad,eqad->eqa", G, G))}


def with_nodes(rep, h5, mesh, X, fixed, part):
    """The node-level entries of a mesh dict: fixed/free nodes and weak constraints."""
    if part is not None:
        rep.check(part.min() >= 0, "negative partition")
    n = X.shape[0]
    free = np.ones(n, bool)
    free[fixed] = False
    mesh.update({"X": X, "fixed": fixed, "free": free, "weak": read_weak_constraints(rep, h5, n), "node_loads": read_node_loads(rep, h5, n),
                 "handle_stiffness": read_handle_stiffness(rep, h5, n, fixed)})
    return mesh


def check_mesh_kind(rep, h5, kind_name):
    """/mesh/elements of a kind other than tet4: dtypes, ranges, det J > 0, colouring, XDMF cells."""
    kind = KINDS[kind_name]
    rep.check("mesh/tetrahedra" not in h5, f"element {kind_name}: /mesh/tetrahedra present (expected /mesh/elements only)")
    base = read_mesh_datasets(rep, h5, "elements", kind.n)
    if base is None:
        return None
    X, el, fixed, color, part = base
    mesh = kind_group(rep, kind_name, X, el, color, f"{kind_name} elements")
    return None if mesh is None else with_nodes(rep, h5, mesh, X, fixed, part)


# Gmsh element type ids (/mesh/element_types of a mesh mixing kinds) and XDMF's Mixed-topology ids
# (negative: pbng's own kinds without a Gmsh type, -1 the bending stencil)
GMSH_TYPES = {4: "tet4", 11: "tet10", 29: "tet20", 5: "hex8", 12: "hex27", 6: "prism6", 7: "pyramid5", 2: "tri3", -1: "bend4"}
XDMF_MIXED_IDS = {"tet4": 6, "pyramid5": 7, "prism6": 8, "hex8": 9, "tet10": 38, "tri3": 4}
HEX27_OCTANT_CELLS = hex27_octant_cells()


def check_mesh_mixed(rep, h5):
    """Root element "mixed": /mesh/elements [M, n] padded with -1 after each element's nodes and
    /mesh/element_types [M] (Gmsh ids, -1 for bend4); each kind's elements checked as a group of their
    own (sheet kinds: sheet_group, with the sheet material of the root attributes, and the stencils
    against the triangles)."""
    rep.check("mesh/tetrahedra" not in h5, "element mixed: /mesh/tetrahedra present (expected /mesh/elements only)")
    if not rep.check("mesh/elements" in h5 and h5["mesh/elements"].ndim == 2, "element mixed: no 2-D /mesh/elements"):
        return None
    width = h5["mesh/elements"].shape[1]
    base = read_mesh_datasets(rep, h5, "elements", width, padded=True)
    types = check_dataset(rep, h5, "mesh/element_types", np.int32, (h5["mesh/elements"].shape[0],))
    if base is None or types is None:
        return None
    X, el, fixed, color, part = base
    unknown = sorted(set(np.unique(types).tolist()) - set(GMSH_TYPES))
    if not rep.check(not unknown, f"/mesh/element_types holds unknown Gmsh types {unknown}"):
        return None
    rep.check(len(np.unique(types)) > 1, "element mixed: /mesh/element_types holds one kind")
    groups = []
    sheet = read_sheet_material(rep, h5) if any(GMSH_TYPES[int(t)] in SHEET_NODES for t in np.unique(types)) else None
    for gtype, name in GMSH_TYPES.items():
        rows = np.flatnonzero(types == gtype)
        if rows.size == 0:
            continue
        n = kind_nodes(name)
        if not rep.check(n <= width and (el[rows, n:] == -1).all() and (el[rows, :n] >= 0).all(),
                         f"element mixed: {name} rows are not {n} nodes then -1 (first row {rows[0]})"):
            return None
        if name in SHEET_NODES:
            group = sheet_group(rep, name, X, el[rows, :n], color, sheet, f"{name} elements")
        else:
            group = kind_group(rep, name, X, el[rows, :n], color, f"{name} elements")
        if group is None:
            return None
        group["rows"] = rows
        groups.append(group)
    sheets = {g["kind"]: g["elements"] for g in groups if g["kind"] in SHEET_NODES}
    if "bend4" in sheets:
        check_stencils(rep, sheets.get("tri3", np.zeros((0, 3), np.int64)), sheets["bend4"])
    if sheets and sheet is None:
        return None
    if sheets:
        table, index = read_sheet_table(rep, h5, sheet)
        if table is not None:
            if not rep.check(len(index) == len(types), "/mesh/sheet_material: not one entry per element"):
                return None
            for g in groups:
                if g["kind"] in SHEET_NODES:
                    g["sheet"] = per_element_material(table, index[g["rows"]])
            by = {g["kind"]: index[g["rows"]] for g in groups if g["kind"] in SHEET_NODES}
            if "bend4" in sheets and "tri3" in sheets:
                check_stencil_entries(rep, table, sheets["tri3"], by["tri3"], sheets["bend4"], by["bend4"])
    return with_nodes(rep, h5, {"kind": "mixed", "elements": el, "types": types, "groups": groups}, X, fixed, part)


def elastic_mixed(mesh, x, material, mu, lam, eps_p=None):
    """Each group's elastic terms (elastic_kind, or a sheet kind's) summed over the kinds' groups; eps_p
    [M, 6] (volume kinds only): the plastic strains of the file's element rows, each group given its own."""
    if eps_p is None:
        parts = [physics_of(g)[0](g, x, material, mu, lam) for g in mesh["groups"]]
    else:
        parts = [physics_of(g)[0](g, x, material, mu, lam, eps_p[g["rows"]]) for g in mesh["groups"]]
    return (sum(p[0] for p in parts), sum(p[1] for p in parts), sum(p[2] for p in parts), sum(p[3] for p in parts))


def lumped_mass_mixed(mesh, rho):
    """HRZ masses (sheets: their lumped masses) summed over the kinds' groups."""
    return sum(physics_of(g)[1](g, rho) for g in mesh["groups"])


def load_weights_mixed(mesh, rho):
    """Consistent load weights (sheets: their lumped masses) summed over the kinds' groups."""
    return sum(physics_of(g)[2](g, rho) for g in mesh["groups"])


def physics_of(mesh):
    """(elastic, lumped mass, quasistatic gravity load weights) functions of the mesh or group: linear
    tetrahedra (whose load weights are their lumped masses), one other kind, a sheet kind, or mixed."""
    if mesh.get("pd") is not None:     # peridynamic sheets: the ring energies, the masses and loads of the kinds
        _, mass, load = physics_of({k: v for k, v in mesh.items() if k != "pd"})
        return elastic_pd, mass, load
    if mesh.get("kind") == "mixed":
        return elastic_mixed, lumped_mass_mixed, load_weights_mixed
    if mesh.get("kind") == "tri3":
        return elastic_tri3, lumped_mass_tri3, lumped_mass_tri3
    if mesh.get("kind") == "cloth6":
        return elastic_cloth6, lumped_mass_cloth6, lumped_mass_cloth6
    if mesh.get("kind") == "bend4":
        return elastic_bend4, no_mass, no_mass
    return (elastic_kind, lumped_mass_kind, load_weights_kind) if "elements" in mesh else (elastic, lumped_mass, lumped_mass)


def xdmf_permutation(kind):
    """XDMF node k of a cell is Gmsh node perm[k] (same reference point)."""
    d = np.linalg.norm(kind.vtk_nodes[:, None, :] - kind.basis.nodes[None, :, :], axis=2)
    return d.argmin(axis=1)


def mixed_form(mesh):
    """The Mixed list the elements must give, value by value, with -1 where a tet20's sub-tetrahedra
    list their nodes (no XDMF cell: checked by their properties), and where each tet20's 27 x 5 values
    start (tet20s in row order). Every other kind exactly: its XDMF type id and its nodes in XDMF's
    order; hex27 as its 8 octant hexahedra (HEX27_OCTANT_CELLS), each `9` and its 8 nodes; bend4 as
    nothing (no cell: its triangles are drawn as tri3 cells)."""
    el, types = mesh["elements"], mesh["types"]
    parts, tet20_at, at = [], [], 0
    for e in range(len(el)):
        name = GMSH_TYPES[int(types[e])]
        if name == "tet20":
            part = [6, -1, -1, -1, -1] * KINDS["tet20"].subcells
            tet20_at.append(at)
        elif name == "bend4":
            part = []
        elif name == "tri3":
            part = [XDMF_MIXED_IDS[name]] + el[e, :3].tolist()
        elif name == "hex27":
            part = np.column_stack([np.full(8, XDMF_MIXED_IDS["hex8"]), el[e][HEX27_OCTANT_CELLS]]).reshape(-1).tolist()
        else:
            part = [XDMF_MIXED_IDS[name]] + el[e, xdmf_permutation(KINDS[name])].tolist()
        parts.append(part)
        at += len(part)
    return np.array([v for p in parts for v in p], dtype=np.int64), np.array(tet20_at, dtype=np.int64)


def mixed_cell_count(types):
    """Cells of the Mixed topology: one per element, 27 per tet20, 8 per hex27, none per bend4."""
    per = {"tet20": KINDS["tet20"].subcells, "hex27": len(HEX27_OCTANT_CELLS), "bend4": 0}
    return sum(per.get(GMSH_TYPES[int(t)], 1) for t in types)


def check_xdmf_mixed(rep, h5, xpath, base, grids, mesh):
    """A Mixed topology: every grid reads /mesh/xdmf_cells [L], which is each element in order as its
    cells (mixed_form): exactly where the kind has a cell ParaView reads or hex27's octants, and tet20's
    sub-tetrahedra by check_subtetrahedra."""
    flat, tet20_at = mixed_form(mesh)
    ncells = mixed_cell_count(mesh["types"])
    for k, g in enumerate(grids):
        top = g.find("Topology")
        if not rep.check(top is not None and top.get("TopologyType") == "Mixed", f"{xpath}: grid {k} topology is not Mixed"):
            continue
        rep.check(top.get("NumberOfElements") == str(ncells), f"{xpath}: grid {k} NumberOfElements is not {ncells}")
        item = top.find("DataItem")
        ok = item is not None and item.get("Dimensions") == str(flat.size) and (item.text or "").strip() == f"{base}:/mesh/xdmf_cells"
        rep.check(ok, f"{xpath}: grid {k} topology is not {base}:/mesh/xdmf_cells of {flat.size} values")
    cells = check_dataset(rep, h5, "mesh/xdmf_cells", np.int64, (flat.size,))
    if cells is None:
        return
    bad = np.flatnonzero((cells != flat) & (flat != -1))
    rep.check(bad.size == 0, f"/mesh/xdmf_cells: {bad.size} values differ from the elements in XDMF's Mixed form "
                             f"(first at {bad[:1]})")
    if tet20_at.size:
        n = KINDS["tet20"].subcells
        idx = tet20_at[:, None, None] + 5 * np.arange(n)[None, :, None] + np.arange(1, 5)[None, None, :]
        group = next(g for g in mesh["groups"] if g["kind"] == "tet20")
        check_subtetrahedra(rep, group, cells[idx], "/mesh/xdmf_cells (Mixed, tet20)")


def elastic_kind(mesh, x, material, mu, lam, eps_p=None):
    """As elastic() for any kind: sum_e sum_q V_q Psi(F_q), f_a = -sum_q V_q P_q grad N_a, scales; eps_p
    [M, 6]: each element's plastic strain, the same at all its quadrature points, or None."""
    el, G, Vq = mesh["elements"], mesh["G"], mesh["Vq"]
    M, Q = Vq.shape
    F = np.einsum("eai,eqak->eqik", x[el], G)                           # sum_a x_a (x) grad N_a
    psi, P, I1, C = stress(material, F.reshape(-1, 3, 3), mu, lam, None if eps_p is None else np.repeat(eps_p, Q, axis=0))
    P = P.reshape(M, Q, 3, 3)
    H = np.einsum("eq,eqik,eqak->eai", Vq, P, G)                        # sum_q V_q P_q grad N_a
    n = len(x)
    f_int = -scatter(el, H, n)
    # round-off scale: the stress terms' size times the cancellation in F = sum_a x_a (x) grad N_a
    cond = 1.0 + np.abs(x).max() * mesh["G_norm"].sum(axis=2)           # [M, Q]
    sigma = Vq * (mu + abs(lam)) * (np.sqrt(I1) + np.sqrt(np.einsum("eij,eij->e", C, C))).reshape(M, Q) * cond
    term = np.einsum("eq,eqa->ea", sigma, mesh["G_norm"])
    mag = np.bincount(el.reshape(-1), weights=term.reshape(-1), minlength=n)
    return float(np.sum(Vq * psi.reshape(M, Q))), f_int, mag, float(mu * np.sum(Vq * I1.reshape(M, Q)))


def lumped_mass_kind(mesh, rho):
    """HRZ: m_a = rho sum_q V_q N_a(q)^2, scaled per element to sum to rho sum_q V_q."""
    kind = KINDS[mesh["kind"]]
    diag = np.einsum("eq,qa->ea", mesh["Vq"], kind.N_q ** 2)
    m = rho * diag * (mesh["vol"] / diag.sum(axis=1))[:, None]
    return np.bincount(mesh["elements"].reshape(-1), weights=m.reshape(-1), minlength=len(mesh["X"]))


def load_weights_kind(mesh, rho):
    """Consistent gravity load weights: w_a = rho sum_q V_q N_a(q) (= int rho N_a dV)."""
    kind = KINDS[mesh["kind"]]
    w = rho * np.einsum("eq,qa->ea", mesh["Vq"], kind.N_q)
    return np.bincount(mesh["elements"].reshape(-1), weights=w.reshape(-1), minlength=len(mesh["X"]))


def check_subtetrahedra(rep, mesh, sub, what):
    """tet20's linear sub-tetrahedra sub [M, 27, 4] of the elements mesh["elements"] [M, 20]: only the
    element's own nodes, positive volumes, a conforming tiling of the element (each inner triangle
    shared by two sub-tetrahedra, 36 boundary triangles) and, for straight-sided elements, volumes
    summing to the element's."""
    X, el = mesh["X"], mesh["elements"]
    M, nsub = sub.shape[:2]
    member = (sub[:, :, :, None] == el[:, None, None, :]).any(axis=3)
    bad = np.flatnonzero(~member.all(axis=(1, 2)))
    rep.check(bad.size == 0, f"{what}: sub-tetrahedra of {bad.size} elements use nodes of other elements "
                             f"(first: element {bad[:1]})")
    P = X[sub.reshape(-1, 4)]
    vol = np.linalg.det(np.stack([P[:, 1] - P[:, 0], P[:, 2] - P[:, 0], P[:, 3] - P[:, 0]], axis=2)) / 6.0
    bad = np.flatnonzero(~(vol > 0))
    rep.check(bad.size == 0, f"{what}: {bad.size} sub-tetrahedra with non-positive volume (first: sub-tetrahedron {bad[:1]})")
    # conforming: every triangle inside an element is shared by two of its sub-tetrahedra, the
    # 4 x 9 on its boundary by one (27 x 4 = 2 x 36 + 36 faces)
    faces = np.sort(np.concatenate([sub[:, :, [1, 2, 3]], sub[:, :, [0, 2, 3]], sub[:, :, [0, 1, 3]],
                                    sub[:, :, [0, 1, 2]]], axis=1), axis=2)     # [M, 108, 3]
    nonconf = 0
    for e in range(M):
        _, cnt = np.unique(faces[e], axis=0, return_counts=True)
        nonconf += not (cnt.max() <= 2 and (cnt == 1).sum() == 36)
    rep.check(nonconf == 0, f"{what}: the sub-tetrahedra of {nonconf} elements do not tile them conformingly")
    # affine (straight-sided) elements: the sub-volumes sum to the element's volume
    lin = KINDS["tet4"].basis.N(KINDS["tet20"].basis.nodes)        # P1 interpolation of the vertices
    affine = np.abs(np.einsum("av,evd->ead", lin, X[el[:, :4]]) - X[el]).max(axis=(1, 2)) <= 1e-12 * mesh["size"]
    vsum = vol.reshape(M, nsub).sum(axis=1)
    diff = np.abs(vsum - mesh["vol"])[affine]
    rep.check(not diff.size or diff.max() <= 1e-12 * mesh["vol"][affine].max(),
              f"{what}: sub-tetrahedra volumes do not sum to the element volumes (max diff {diff.max() if diff.size else 0:.3e})")


def check_xdmf_cells(rep, h5, mesh, dataset):
    """The XDMF connectivity `dataset` against /mesh/elements (see the kinds' notes above)."""
    kind = KINDS[mesh["kind"]]
    X, el = mesh["X"], mesh["elements"]
    M = len(el)
    if kind.subcells:
        cells = check_dataset(rep, h5, f"mesh/{dataset}", np.int64, (kind.subcells * M, 4))
        if cells is not None:
            check_subtetrahedra(rep, mesh, cells.reshape(M, kind.subcells, 4), "xdmf_cells")
        return
    cells = check_dataset(rep, h5, f"mesh/{dataset}", np.int64, (M, kind.n))
    if cells is None:
        return
    if not rep.check(np.array_equal(np.sort(cells, axis=1), np.sort(el, axis=1)),
                     f"/mesh/{dataset} rows are not permutations of /mesh/elements rows"):
        return
    # node k of the XDMF cell sits at VTK reference point k: the element's own interpolation there
    want = np.einsum("ka,ead->ekd", kind.basis.N(kind.vtk_nodes), X[el])
    err = np.abs(X[cells] - want).max(axis=(1, 2))
    bad = np.flatnonzero(err > 1e-10 * mesh["size"])
    rep.check(bad.size == 0, f"/mesh/{dataset}: {bad.size} cells not in {kind.xdmf_type} (VTK) node order "
                             f"(first: element {bad[:1]}, node misplaced by {err.max():.3e})")
    # and the two interpolations agree inside (at the quadrature points)
    vtk = Lagrange(kind.vtk_nodes, tet_exps(2) if kind.name == "tet10" else hex_exps(2)) \
        if kind.name in ("tet10", "hex27") else None
    if vtk is not None:
        a = np.einsum("qa,ead->eqd", vtk.N(kind.qr), X[cells])
        b = np.einsum("qa,ead->eqd", kind.N_q, X[el])
        rep.check(np.abs(a - b).max() <= 1e-10 * mesh["size"].max(),
                  f"/mesh/{dataset}: VTK-order interpolation differs from the element's inside the cells")


def check_xdmf_topology(rep, h5, xpath, base, grids, mesh):
    """Every grid's Topology: type, counts, dataset for the kind; then the dataset itself."""
    kind = KINDS[mesh["kind"]]
    M = len(mesh["elements"])
    rows, npe = (kind.subcells * M, 4) if kind.subcells else (M, kind.n)
    datasets = set()
    for k, g in enumerate(grids):
        top = g.find("Topology")
        if not rep.check(top is not None, f"{xpath}: grid {k} has no Topology"):
            continue
        rep.check(top.get("TopologyType") == kind.xdmf_type,
                  f"{xpath}: grid {k} TopologyType {top.get('TopologyType')}, expected {kind.xdmf_type} for {kind.name}")
        rep.check(top.get("NumberOfElements") == str(rows), f"{xpath}: grid {k} NumberOfElements is not {rows}")
        rep.check(top.get("NodesPerElement") in (None, str(npe)), f"{xpath}: grid {k} NodesPerElement is not {npe}")
        item = top.find("DataItem")
        if not rep.check(item is not None and item.text, f"{xpath}: grid {k} Topology without DataItem"):
            continue
        rep.check(item.get("Dimensions") == f"{rows} {npe}", f"{xpath}: grid {k} topology Dimensions "
                                                             f"{item.get('Dimensions')}, expected '{rows} {npe}'")
        ref = item.text.strip()
        if rep.check(ref.startswith(base + ":/mesh/"), f"{xpath}: grid {k} topology '{ref}' not in {base}:/mesh/"):
            datasets.add(ref[len(base) + 7:])
    if not rep.check(len(datasets) == 1, f"{xpath}: topology datasets {sorted(datasets)} (expected one)"):
        return
    ds = datasets.pop()
    if kind.xdmf_dataset is not None:
        rep.check(ds == kind.xdmf_dataset, f"{xpath}: topology from /mesh/{ds}, expected /mesh/{kind.xdmf_dataset}")
    if rep.check(ds in ("elements", "xdmf_cells"), f"{xpath}: topology from /mesh/{ds}"):
        check_xdmf_cells(rep, h5, mesh, ds)
    if "mesh/xdmf_cells" in h5 and ds != "xdmf_cells":
        rep.fail(f"/mesh/xdmf_cells present but the XDMF does not use it")


# ----------------------------------------------------------------------------
# thin sheets (issue 18, docs/cloth.md): membrane triangles tri3 and bending stencils bend4
#
# Written from the formulas of docs/cloth.md (the seed's Sec. 4.3 and Bergou et al. 2006), not from
# core/membrane.c or core/bending.c:
#   * the sheet material: root attributes sheet_membrane_C [3, 3] (Voigt, on (E_xx, E_yy, 2 E_xy)),
#     sheet_thickness t, sheet_bending_stiffness k_b, sheet_weft [3], sheet_density rho_s;
#   * tri3 (Gmsh type 2; XDMF Triangle, Mixed id 4): rest normal n = (X1-X0) x (X2-X0) normalised,
#     e1 = the weft projected onto the rest plane and normalised (the first edge's direction where
#     |weft.n| > 1 - 1e-6 |weft|), e2 = n x e1; the shape gradients from the barycentric gradients
#     grad l_a = n x (X_{a+2} - X_{a+1}) / (2A) (indices mod 3) in 3-D, taken in (e1, e2):
#     g_a = (e1.grad l_a, e2.grad l_a); F = sum_a x_a g_a^T (3 x 2), E = (F^T F - I)/2,
#     energy t A 1/2 e.C e with e = (E_xx, E_yy, 2 E_xy), gradient t A (F S) g_a with S the 2 x 2
#     symmetric matrix of C e; lumped mass rho_s t A / 3 per corner (also the quasistatic gravity load);
#   * bend4 (x0 x1 the shared edge, x2 and x3 the opposite corners; no Gmsh type: -1 in
#     /mesh/element_types; no XDMF cell): cot_v(a, b) the cotangent of the rest angle at vertex v
#     between its edges to a and b, c01 = cot_x1(x0, x2), c02 = cot_x0(x1, x2), c04 = cot_x1(x0, x3),
#     c03 = cot_x0(x1, x3), K = (c01 + c04, c02 + c03, -c01 - c02, -c03 - c04),
#     energy k_b/2 3/(A0 + A1) |v|^2 with v = sum_i K_i x_i, gradient k_b 3/(A0 + A1) K_i v; no mass;
#     each stencil's two triangles must be tri3 rows, one stencil per interior edge.
# --self-test checks these against central differences, rigid motions, a flat stencil, a folded hinge
# and a uniaxial stretch along the weft.

SHEET_NODES = {"tri3": 3, "bend4": 4}
SHEET_ATTRS = ("sheet_membrane_C", "sheet_thickness", "sheet_bending_stiffness", "sheet_weft", "sheet_density")
WEFT_ALONG_NORMAL = 1e-6       # |weft.n| > 1 - this: e1 is the first edge


def kind_nodes(name):
    """Nodes per element of a volume or sheet kind."""
    return SHEET_NODES[name] if name in SHEET_NODES else KINDS[name].n


def read_sheet_material(rep, h5):
    """The sheet material's root attributes as a dict (C [3,3], t, kb, weft [3], rho), or None."""
    missing = [k for k in SHEET_ATTRS if k not in h5.attrs]
    if not rep.check(not missing, f"sheet kinds without the root attributes {missing}"):
        return None
    v = {k: np.asarray(h5.attrs[k], dtype=np.float64) for k in SHEET_ATTRS}
    ok = rep.check(v["sheet_membrane_C"].shape == (3, 3), f"sheet_membrane_C shape {v['sheet_membrane_C'].shape}, expected (3, 3)")
    ok &= rep.check(v["sheet_weft"].shape == (3,), f"sheet_weft shape {v['sheet_weft'].shape}, expected (3,)")
    for k in ("sheet_thickness", "sheet_bending_stiffness", "sheet_density"):
        ok &= rep.check(v[k].size == 1 and np.all(np.isfinite(v[k])), f"root attribute '{k}' is not a finite scalar")
    if not ok:
        return None
    C = v["sheet_membrane_C"]
    m = {"C": C, "t": float(v["sheet_thickness"].reshape(-1)[0]), "kb": float(v["sheet_bending_stiffness"].reshape(-1)[0]),
         "weft": v["sheet_weft"], "rho": float(v["sheet_density"].reshape(-1)[0])}
    ok = rep.check(np.all(np.isfinite(C)) and np.abs(C - C.T).max() <= 1e-12 * np.abs(C).max(), "sheet_membrane_C not symmetric")
    ok &= rep.check(np.linalg.eigvalsh(0.5 * (C + C.T)).min() > 0, "sheet_membrane_C not positive definite")
    ok &= rep.check(m["t"] > 0, "sheet_thickness <= 0")
    ok &= rep.check(m["kb"] >= 0, "sheet_bending_stiffness < 0")
    ok &= rep.check(np.linalg.norm(m["weft"]) > 0, "sheet_weft is zero")
    ok &= rep.check(m["rho"] > 0, "sheet_density <= 0")
    return m if ok else None


def read_sheet_table(rep, h5, base):
    """With per-group sheet materials (root attributes sheet_groups and sheet_table_*, /mesh/sheet_material):
    the table as a list of material dicts like read_sheet_material's (entry 0 must be the run's material
    `base`, entries 1..n the groups', then one per pair a < b of those n + 1 with k_b = (k_b[a] + k_b[b]) / 2
    and a's other values) and each element's entry [M]; (None, None) without groups or after a failure."""
    if "sheet_groups" not in h5.attrs:
        return None, None
    names = h5.attrs["sheet_groups"]
    names = (names.decode() if isinstance(names, bytes) else str(names)).split(",")
    n = len(names)
    size = (n + 1) + (n + 1) * n // 2
    keys = ("sheet_table_C", "sheet_table_thickness", "sheet_table_bending_stiffness", "sheet_table_density")
    if not rep.check(all(k in h5.attrs for k in keys) and "mesh/sheet_material" in h5, "sheet_groups without the sheet_table_* attributes or /mesh/sheet_material"):
        return None, None
    C = np.asarray(h5.attrs["sheet_table_C"], np.float64).reshape(-1)
    t, kb, rho = (np.asarray(h5.attrs[k], np.float64).reshape(-1) for k in keys[1:])
    if not rep.check(C.size == 9 * size and t.size == kb.size == rho.size == size, f"sheet_table_*: not {size} entries for {n} groups"):
        return None, None
    table = [{"C": C[9 * k:9 * k + 9].reshape(3, 3), "t": t[k], "kb": kb[k], "rho": rho[k], "weft": base["weft"]} for k in range(size)]
    ok = rep.check(np.allclose(table[0]["C"], base["C"], rtol=0, atol=0) and table[0]["t"] == base["t"] and table[0]["kb"] == base["kb"],
                   "sheet_table entry 0 is not the run's sheet material")
    entry = n + 1
    for a in range(n + 1):
        for b in range(a + 1, n + 1):
            ok &= rep.check(table[entry]["kb"] == 0.5 * (table[a]["kb"] + table[b]["kb"]), f"sheet_table entry {entry}: k_b not the mean of {a} and {b}")
            entry += 1
    for m in table:
        ok &= rep.check(m["t"] > 0 and m["kb"] >= 0 and m["rho"] > 0 and np.linalg.eigvalsh(m["C"]).min() > 0, "a sheet_table entry is not a valid material")
    index = np.asarray(h5["mesh/sheet_material"][()]).reshape(-1)
    ok &= rep.check(index.min() >= 0 and index.max() < size, "/mesh/sheet_material out of the table's range")
    return (table, index) if ok else (None, None)


def per_element_material(table, entries):
    """The material dict of elements with table entries `entries` [M]: arrays per element (C [M, 3, 3])."""
    return {"C": np.stack([table[k]["C"] for k in entries]) if len(entries) else np.zeros((0, 3, 3)),
            "t": np.array([table[k]["t"] for k in entries]), "kb": np.array([table[k]["kb"] for k in entries]),
            "rho": np.array([table[k]["rho"] for k in entries]), "weft": table[0]["weft"]}


def check_stencil_entries(rep, table, tri, tri_entry, bend, bend_entry):
    """Each stencil's entry is its two triangles' (x0 x1 x2 and x0 x1 x3) material, or their pair's (a table
    of (n + 1)(n + 2) / 2 entries for n groups)."""
    n = (math.isqrt(8 * len(table) + 1) - 3) // 2
    of = {tuple(sorted(t)): e for t, e in zip(tri.tolist(), tri_entry.tolist())}
    wrong = 0
    for s, e in zip(bend.tolist(), bend_entry.tolist()):
        a, b = of.get(tuple(sorted(s[:3])), -1), of.get(tuple(sorted((s[0], s[1], s[3]))), -1)
        a, b = min(a, b), max(a, b)
        want = a if a == b else (n + 1) + a * (2 * (n + 1) - a - 1) // 2 + (b - a - 1)
        wrong += e != want
    rep.check(wrong == 0, f"{wrong} bend4 stencils whose sheet material is not their triangles' (or their pair's)")


def twice_areas(A, B, C):
    """|(B - A) x (C - A)| of triangles [M, 3] each."""
    return np.linalg.norm(np.cross(B - A, C - A), axis=1)


def degenerate_triangles(A, B, C):
    """Triangles whose twice-area is not above 1e-12 times their longest edge squared."""
    longest = np.max([np.einsum("ed,ed->e", P - Q, P - Q) for P, Q in ((B, A), (C, A), (C, B))], axis=0)
    return ~(twice_areas(A, B, C) > 1e-12 * longest)


def triangle_rest(X0, X1, X2, weft):
    """Rest area A [M] and shape gradients g [M, 3, 2] in each triangle's weft/warp frame (see above)."""
    c = np.cross(X1 - X0, X2 - X0)
    two_a = np.linalg.norm(c, axis=1)
    n = c / two_a[:, None]
    w = np.asarray(weft, float) / np.linalg.norm(weft)
    wn = n @ w
    t = np.where((np.abs(wn) > 1.0 - WEFT_ALONG_NORMAL)[:, None], X1 - X0, w[None, :] - wn[:, None] * n)
    e1 = t / np.linalg.norm(t, axis=1)[:, None]
    e2 = np.cross(n, e1)
    corners = (X0, X1, X2)
    grad = np.stack([np.cross(n, corners[(a + 2) % 3] - corners[(a + 1) % 3]) / two_a[:, None] for a in range(3)], axis=1)
    g = np.stack([np.einsum("ead,ed->ea", grad, e1), np.einsum("ead,ed->ea", grad, e2)], axis=2)
    return 0.5 * two_a, g


def voigt_matrix(s):
    """The symmetric 2 x 2 matrices [M, 2, 2] of Voigt stresses s [M, 3] = (S_xx, S_yy, S_xy)."""
    return np.stack([np.stack([s[:, 0], s[:, 2]], axis=1), np.stack([s[:, 2], s[:, 1]], axis=1)], axis=1)


def membrane_terms(mat, A, g, xe):
    """Per triangle (rest area A [M], gradients g [M,3,2], corners xe [M,3,3]): the energy t A 1/2 e.C e
    [M], the energy gradient per corner [M, 3, 3] and F [M, 3, 2]."""
    F = np.einsum("eai,eak->eik", xe, g)
    E = 0.5 * (np.einsum("eik,eil->ekl", F, F) - np.eye(2))
    e = np.stack([E[:, 0, 0], E[:, 1, 1], 2.0 * E[:, 0, 1]], axis=1)
    s = np.einsum("eij,ej->ei", np.broadcast_to(mat["C"], (len(e), 3, 3)), e)
    tA = mat["t"] * A
    energy = 0.5 * tA * np.einsum("ei,ei->e", e, s)
    P = np.einsum("eik,ekl->eil", F, voigt_matrix(s))
    return energy, tA[:, None, None] * np.einsum("eil,eal->eai", P, g), F


def cotangent_at(v, a, b):
    """cot of the angle at vertex v between its edges to a and b ([M, 3] each)."""
    u, w = a - v, b - v
    return np.einsum("ed,ed->e", u, w) / np.linalg.norm(np.cross(u, w), axis=1)


def stencil_rest(Xe):
    """Bergou's weights K [M, 4] and 3 / (A0 + A1) [M] of rest stencils Xe [M, 4, 3] (see above)."""
    x0, x1, x2, x3 = (Xe[:, i] for i in range(4))
    c01, c02 = cotangent_at(x1, x0, x2), cotangent_at(x0, x1, x2)
    c04, c03 = cotangent_at(x1, x0, x3), cotangent_at(x0, x1, x3)
    K = np.stack([c01 + c04, c02 + c03, -c01 - c02, -c03 - c04], axis=1)
    return K, 3.0 / (0.5 * twice_areas(x0, x1, x2) + 0.5 * twice_areas(x0, x1, x3))


def bending_terms(kb, K, scale, xe):
    """Per stencil: energy kb/2 scale |v|^2 [M], gradient kb scale K_i v [M, 4, 3], v [M, 3]."""
    v = np.einsum("ei,eid->ed", K, xe)
    return 0.5 * kb * scale * np.einsum("ed,ed->e", v, v), (kb * scale)[:, None, None] * K[:, :, None] * v[:, None, :], v


def check_row_colors(rep, el, color, what):
    """No two nodes of a row share a color."""
    if color is None:
        return
    rep.check(color.min() >= 0, "negative color")
    c = np.sort(color[el], axis=1)
    clash = (c[:, 1:] == c[:, :-1]).any(axis=1)
    rep.check(not clash.any(), f"{int(clash.sum())} {what} with two nodes of the same color "
                               f"(first: element {np.flatnonzero(clash)[0] if clash.any() else -1})")


def sheet_group(rep, name, X, el, color, mat, what):
    """Rows el [M, 3 or 4] of a sheet kind: no node twice, no degenerate triangle, no two nodes of one
    color; their rest data (tri3: A, g; bend4: K, scale) as a dict, or None after a failure."""
    srt = np.sort(el, axis=1)
    dup = np.flatnonzero((srt[:, 1:] == srt[:, :-1]).any(axis=1))
    if not rep.check(dup.size == 0, f"{dup.size} {what} list a node twice (first: element {dup[:1]})"):
        return None
    Xe = X[el]
    tris = ((0, 1, 2),) if name == "tri3" else ((0, 1, 2), (1, 0, 3))
    bad = np.flatnonzero(np.any([degenerate_triangles(Xe[:, a], Xe[:, b], Xe[:, c]) for a, b, c in tris], axis=0))
    if not rep.check(bad.size == 0, f"{bad.size} {what} with a degenerate rest triangle (first: element {bad[:1]})"):
        return None
    check_row_colors(rep, el, color, what)
    group = {"kind": name, "X": X, "elements": el, "sheet": mat}
    if mat is None:
        return group
    if name == "tri3":
        group["A"], group["g"] = triangle_rest(Xe[:, 0], Xe[:, 1], Xe[:, 2], mat["weft"])
    else:
        group["K"], group["scale"] = stencil_rest(Xe)
    return group


def check_stencils(rep, tri, bend):
    """Each stencil's triangles (x0, x1, x2) and (x0, x1, x3) are tri3 rows, and the stencils are one per
    interior edge (an edge of two triangles)."""
    opposite = {}
    for t in tri.tolist():
        for a in range(3):
            key = (min(t[a], t[(a + 1) % 3]), max(t[a], t[(a + 1) % 3]))
            opposite.setdefault(key, []).append(t[(a + 2) % 3])
    seen, wrong = set(), 0
    for s in bend.tolist():
        key = (min(s[0], s[1]), max(s[0], s[1]))
        wrong += sorted(opposite.get(key, [])) != sorted(s[2:]) or key in seen
        seen.add(key)
    interior = sum(len(v) == 2 for v in opposite.values())
    rep.check(wrong == 0, f"{wrong} bend4 stencils are not an edge of two tri3 triangles with their opposite corners (or repeat one)")
    rep.check(len(bend) == interior, f"{len(bend)} bend4 stencils for {interior} interior edges of the tri3 triangles")


def check_mesh_sheet(rep, h5, name):
    """A file of tri3 elements only (root element "tri3"): /mesh/elements [M, 3]."""
    rep.check("mesh/tetrahedra" not in h5, f"element {name}: /mesh/tetrahedra present (expected /mesh/elements only)")
    base = read_mesh_datasets(rep, h5, "elements", SHEET_NODES[name])
    if base is None:
        return None
    X, el, fixed, color, part = base
    mat = read_sheet_material(rep, h5)
    table, index = read_sheet_table(rep, h5, mat) if mat is not None else (None, None)
    mesh = sheet_group(rep, name, X, el, color, mat, f"{name} elements")
    if mesh is not None and table is not None and rep.check(len(index) == len(el), "/mesh/sheet_material: not one entry per element"):
        mesh["sheet"] = per_element_material(table, index)
    return None if mesh is None or mat is None else with_nodes(rep, h5, mesh, X, fixed, part)


def elastic_tri3(mesh, x, material, mu, lam):
    """Membrane energy, nodal forces, round-off scale and energy scale t A |C| |F|^2 (|E| + 1e-6 |F|^2)
    (the volume material is unused).
    The scale of corner a: t A |g_a| |C| |F| (|F|^2 + 1) (1 + max|x| sum_b |g_b|), the size of the terms of
    P = F S and the cancellation in F = sum_b x_b g_b^T."""
    mat, el, A, g = mesh["sheet"], mesh["elements"], mesh["A"], mesh["g"]
    energy, grad, F = membrane_terms(mat, A, g, x[el])
    n = len(x)
    gnorm = np.linalg.norm(g, axis=2)
    Fn2 = np.einsum("eik,eik->e", F, F)
    cond = 1.0 + np.abs(x).max() * gnorm.sum(axis=1)
    Cn = np.linalg.norm(np.broadcast_to(mat["C"], (len(el), 3, 3)), axis=(1, 2))
    size = mat["t"] * A * Cn * np.sqrt(Fn2) * (Fn2 + 1.0) * cond
    mag = np.bincount(el.reshape(-1), weights=(size[:, None] * gnorm).reshape(-1), minlength=n)
    # the energy's round-off: t A |C| |e| times the round-off of e = (F^T F - I)/2 (|F|^2), with a margin
    e = 0.5 * (np.einsum("eik,eil->ekl", F, F) - np.eye(2))
    escale = mat["t"] * A * Cn * Fn2 * (np.sqrt(np.einsum("ekl,ekl->e", e, e)) + 1e-6 * Fn2)
    return float(energy.sum()), -scatter(el, grad, n), mag, float(escale.sum())


def elastic_bend4(mesh, x, material, mu, lam):
    """Bending energy, nodal forces, round-off scale (k_b scale |K_i| sum_j |K_j| |x_j|, the size of the
    cancelling sum v) and energy scale k_b scale sum_j |K_j| |x_j| (|v| + 1e-6 sum_j |K_j| |x_j|)."""
    mat, el, K, scale = mesh["sheet"], mesh["elements"], mesh["K"], mesh["scale"]
    energy, grad, v = bending_terms(mat["kb"], K, scale, x[el])
    n = len(x)
    terms = np.einsum("ei,ei->e", np.abs(K), np.linalg.norm(x[el], axis=2))
    mag = np.bincount(el.reshape(-1), weights=(mat["kb"] * scale * terms)[:, None].repeat(4, axis=1).reshape(-1) * np.abs(K).reshape(-1),
                      minlength=n)
    escale = mat["kb"] * scale * terms * (np.linalg.norm(v, axis=1) + 1e-6 * terms)
    return float(energy.sum()), -scatter(el, grad, n), mag, float(escale.sum())


def lumped_mass_tri3(mesh, rho):
    """rho_s t A / 3 per corner (the sheet's own density, not the volume's rho)."""
    mat = mesh["sheet"]
    m = np.repeat(mat["rho"] * mat["t"] * mesh["A"] / 3.0, 3)
    return np.bincount(mesh["elements"].reshape(-1), weights=m, minlength=len(mesh["X"]))


def no_mass(mesh, rho):
    """Bending stencils carry no mass."""
    return np.zeros(len(mesh["X"]))


def check_xdmf_triangles(rep, h5, xpath, base, grids, mesh):
    """A file of tri3 only: every grid's Topology is Triangle, M cells of 3 nodes, from /mesh/elements."""
    M = len(mesh["elements"])
    for k, g in enumerate(grids):
        top = g.find("Topology")
        if not rep.check(top is not None and top.get("TopologyType") == "Triangle", f"{xpath}: grid {k} topology is not Triangle"):
            continue
        rep.check(top.get("NumberOfElements") == str(M), f"{xpath}: grid {k} NumberOfElements is not {M}")
        rep.check(top.get("NodesPerElement") in (None, "3"), f"{xpath}: grid {k} NodesPerElement is not 3")
        item = top.find("DataItem")
        ok = item is not None and item.get("Dimensions") == f"{M} 3" and (item.text or "").strip() == f"{base}:/mesh/elements"
        rep.check(ok, f"{xpath}: grid {k} topology is not {base}:/mesh/elements of {M} x 3")
    rep.check("mesh/xdmf_cells" not in h5, "/mesh/xdmf_cells present in a tri3 file (the XDMF reads /mesh/elements)")


# ----------------------------------------------------------------------------
# the six-dimensional cloth stencil (issue 43 item 4; root element "cloth6", sheet_model "cloth6",
# docs/cloth.md#the-six-dimensional-cloth-stencil)
#
# Written from the formulas of docs/cloth.md and the GPBD seed's Sec. 4.2, not from core/gpbd_strain.c or
# core/cloth6.c. /mesh/elements [M, 6]: a triangle x0 x1 x2 (counter-clockwise), then for each edge i (from
# x_{i+1} to x_{i+2}) the third vertex of the other triangle on that edge, or x_i itself where no other
# triangle has the edge (a free edge: no bending there); the checker rebuilds these from the triangles.
#   * the triangle's rest frame and shape gradients g_a as tri3's (triangle_rest), A its rest area, l the
#     mean rest edge length; F = sum_a x_a g_a^T, I = F^T F;
#   * s_x = sqrt(I_xx) - 1, s_a = I_xy / sqrt(I_xx I_yy), s_y = sqrt(I_yy) - 1 (the seed's Eq. 22);
#   * II = 2 sum_i c_i g_i g_i^T over the edges with a neighbour, c_i = (x_i - x_{i+1}) . m_i, m_i the unit
#     mid-edge normal (n + n_i)/|n + n_i| of the unit normals of (x0, x1, x2) and (x_{i+2}, x_{i+1}, x_{3+i});
#     II0 the same at rest;
#   * energy A [k_weft (s_x^2/2 + b s_x^4/4) + k_warp (s_y^2/2 + b s_y^4/4) + k_shear (s_a^2/2 + b s_a^4/4)
#     + k_bend/2 |II - II0|_F^2] with (k_weft, k_warp, k_shear, b, k_bend) the root attribute sheet_cloth6;
#     lumped mass rho_s t A / 3 on x0, x1, x2 (none on the neighbours);
#   * the forces by complex steps of the energy (18 per stencil; exact to round-off).
# --self-test checks II = 1/R on a cylinder, rigid motions, the complex steps against central differences.

CLOTH6_H = 1e-30    # complex step


def cloth6_neighbours(tri):
    """The across-edge vertices [M, 3] of triangles tri [M, 3] (corner i itself on a free edge), or None for a
    non-manifold or inconsistently oriented edge."""
    edges = {}
    for t, c in enumerate(tri.tolist()):
        for i in range(3):
            a, b = c[(i + 1) % 3], c[(i + 2) % 3]
            edges.setdefault((a, b), []).append((t, i))
    across = tri.copy()
    for (a, b), uses in edges.items():
        if len(uses) > 1 or (a, b) in edges and (b, a) in edges and len(edges[(b, a)]) > 1:
            return None
        back = edges.get((b, a))
        if back:
            t, i = uses[0]
            u, j = back[0]
            across[t, i] = tri[u, j]
    return across


def cloth6_unit(v):
    """v / |v| for real or complex v [..., 3] (|v| = sqrt(v.v), analytic for complex steps)."""
    return v / np.sqrt(np.einsum("...d,...d->...", v, v))[..., None]


def cloth6_second_form(g, has, xe):
    """II [M, 3] = (xx, xy, yy) of stencils xe [M, 6, 3] (real or complex), g [M, 3, 2], has [M, 3] (edge i has a neighbour)."""
    n = cloth6_unit(np.cross(xe[:, 1] - xe[:, 0], xe[:, 2] - xe[:, 0]))
    II = np.zeros((len(xe), 3), dtype=xe.dtype)
    for i in range(3):
        j, k = (i + 1) % 3, (i + 2) % 3
        ni = cloth6_unit(np.cross(xe[:, j] - xe[:, k], xe[:, 3 + i] - xe[:, k]))
        u = n + ni
        ok = has[:, i] & (np.linalg.norm(u.real, axis=1) > 1e-12)
        m = cloth6_unit(np.where(ok[:, None], u, 1.0))
        c = np.where(ok, np.einsum("ed,ed->e", xe[:, i] - xe[:, j], m), 0.0)
        gx, gy = g[:, i, 0], g[:, i, 1]
        II += 2.0 * c[:, None] * np.stack([gx * gx, gx * gy, gy * gy], axis=1)
    return II


def cloth6_energy(mesh, xe):
    """Energies [M] of stencils xe [M, 6, 3] (real or complex) and their strains s [M, 6]."""
    k_weft, k_warp, k_shear, b, k_bend = mesh["cloth6"]
    g, A = mesh["g"], mesh["A"]
    F = np.einsum("eai,eak->eik", xe[:, :3], g)
    I = np.einsum("eik,eil->ekl", F, F)
    rx, ry = np.sqrt(I[:, 0, 0]), np.sqrt(I[:, 1, 1])
    sx, sa, sy = rx - 1.0, I[:, 0, 1] / (rx * ry), ry - 1.0
    dII = cloth6_second_form(g, mesh["has"], xe) - mesh["II0"]
    law = lambda k, t: k * (0.5 * t * t + 0.25 * b * t ** 4)  # noqa: E731
    W = law(k_weft, sx) + law(k_warp, sy) + law(k_shear, sa) + 0.5 * k_bend * (dII[:, 0] ** 2 + 2 * dII[:, 1] ** 2 + dII[:, 2] ** 2)
    return A * W, np.stack([sx, sa, sy, dII[:, 0], dII[:, 1], dII[:, 2]], axis=1)


def cloth6_gradient(mesh, xe):
    """dE/dx [M, 6, 3] by complex steps (a free edge's repeated corner gets its own column, zero)."""
    grad = np.zeros(xe.shape)
    for a in range(6):
        for d in range(3):
            xc = xe.astype(complex)
            xc[:, a, d] += 1j * CLOTH6_H
            grad[:, a, d] = cloth6_energy(mesh, xc)[0].imag / CLOTH6_H
    return grad


def read_cloth6(rep, h5):
    """sheet_cloth6 [5] = (k_weft, k_warp, k_shear, beta, k_bend), or None."""
    v = np.asarray(h5.attrs.get("sheet_cloth6", []), dtype=np.float64).reshape(-1)
    ok = rep.check(v.shape == (5,) and np.all(np.isfinite(v)), "element cloth6 without the root attribute sheet_cloth6 [5]")
    ok = ok and rep.check(np.all(v[:3] > 0) and v[3] >= 0 and v[4] >= 0, f"sheet_cloth6 {v}: moduli must be > 0, beta and k_bend >= 0")
    model = h5.attrs.get("sheet_model")
    rep.check(model is not None and as_str(model) == "cloth6", "element cloth6 without sheet_model cloth6")
    return v if ok else None


def check_mesh_cloth6(rep, h5):
    """A file of cloth6 stencils (root element "cloth6"): /mesh/elements [M, 6], each row a triangle and its
    across-edge vertices (rebuilt here from the triangles), the rest data."""
    base = read_mesh_datasets(rep, h5, "elements", 6)
    if base is None:
        return None
    X, el, fixed, color, part = base
    mat, moduli = read_sheet_material(rep, h5), read_cloth6(rep, h5)
    if mat is None or moduli is None:
        return None
    tri = el[:, :3]
    across = cloth6_neighbours(tri)
    if not rep.check(across is not None and np.array_equal(across, el[:, 3:]),
                     "cloth6 rows: the last three nodes are not the vertices across the triangle's edges (corner i on a free edge)"):
        return None
    if color is not None:
        clash = sum(int(color[a] == color[b]) for r in el.tolist() for a in set(r) for b in set(r) if a < b)
        rep.check(clash == 0, f"{clash} node pairs of a cloth6 row share a color")
    bad = np.flatnonzero(degenerate_triangles(X[tri[:, 0]], X[tri[:, 1]], X[tri[:, 2]]))
    if not rep.check(bad.size == 0, f"{bad.size} cloth6 stencils with a degenerate rest triangle"):
        return None
    mesh = {"kind": "cloth6", "X": X, "elements": el, "sheet": mat, "cloth6": moduli, "has": el[:, 3:] != el[:, :3]}
    mesh["A"], mesh["g"] = triangle_rest(X[tri[:, 0]], X[tri[:, 1]], X[tri[:, 2]], mat["weft"])
    mesh["II0"] = np.zeros((len(el), 3))
    mesh["II0"] = cloth6_second_form(mesh["g"], mesh["has"], X[el])
    return with_nodes(rep, h5, mesh, X, fixed, part)


def elastic_cloth6(mesh, x, material, mu, lam):
    """Energy, nodal forces (complex steps), round-off scale and energy scale of the cloth6 stencils. The scale
    of node a: A (max k (1 + b) (|F|^2 + 1) + k_bend / l^2) |g|_max (1 + max|x| sum|g|) per stencil holding it
    (the size of the strain's terms times the cancellation in F and in the edge vectors)."""
    el = mesh["elements"]
    xe = x[el]
    E, s = cloth6_energy(mesh, xe)
    grad = cloth6_gradient(mesh, xe)
    k_weft, k_warp, k_shear, b, k_bend = mesh["cloth6"]
    g, A = mesh["g"], mesh["A"]
    gmax = np.abs(g).max(axis=(1, 2))
    l2 = 1.0 / gmax ** 2
    F = np.einsum("eai,eak->eik", xe[:, :3], g)
    Fn2 = np.einsum("eik,eik->e", F, F)
    kmax = max(k_weft, k_warp, k_shear) * (1.0 + b)
    size = A * (kmax * (Fn2 + 1.0) + k_bend / l2) * gmax * (1.0 + np.abs(x).max() * 3.0 * gmax)
    n = len(x)
    mag = np.bincount(el.reshape(-1), weights=np.repeat(size, 6), minlength=n)
    escale = A * (kmax * Fn2 * (np.abs(s[:, :3]).sum(axis=1) + 1e-6 * Fn2) + k_bend * (np.abs(s[:, 3:]).sum(axis=1) + 1e-6 / np.sqrt(l2)) / np.sqrt(l2))
    return float(E.sum()), -scatter(el, grad, n), mag, float(escale.sum())


def lumped_mass_cloth6(mesh, rho):
    """rho_s t A / 3 on each stencil's triangle corners."""
    mat = mesh["sheet"]
    m = np.repeat(mat["rho"] * mat["t"] * mesh["A"] / 3.0, 3)
    return np.bincount(mesh["elements"][:, :3].reshape(-1), weights=m, minlength=len(mesh["X"]))


def check_xdmf_cloth6(rep, h5, xpath, base, grids, mesh):
    """A file of cloth6 stencils: every grid draws the triangles, /mesh/xdmf_cells [M, 3] = the rows' first three nodes."""
    M = len(mesh["elements"])
    for k, g in enumerate(grids):
        top = g.find("Topology")
        ok = top is not None and top.get("TopologyType") == "Triangle" and top.get("NumberOfElements") == str(M)
        item = top.find("DataItem") if top is not None else None
        ok = ok and item is not None and (item.text or "").strip() == f"{base}:/mesh/xdmf_cells"
        rep.check(ok, f"{xpath}: grid {k} topology is not {M} Triangles from {base}:/mesh/xdmf_cells")
    cells = check_dataset(rep, h5, "mesh/xdmf_cells", np.int64, (M, 3))
    if cells is not None:
        rep.check(np.array_equal(cells, mesh["elements"][:, :3]), "/mesh/xdmf_cells are not the cloth6 stencils' triangles")


def self_test_cloth6(rep, rng):
    """II = 1/R on a cylinder; zero energy and force under rigid motions; complex steps = central differences."""
    P = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0], [-1, 1, 0], [1, -1, 0]], float) * 0.05
    el = np.array([[0, 1, 2, 3, 4, 5]])
    mat = {"C": np.eye(3), "t": 1.0, "kb": 0.3, "weft": np.array([1.0, 0, 0]), "rho": 1.0}
    mesh = {"elements": el, "sheet": mat, "cloth6": np.array([2.0, 1.5, 0.7, 30.0, 0.3]), "has": np.ones((1, 3), bool)}
    mesh["A"], mesh["g"] = triangle_rest(P[None, 0], P[None, 1], P[None, 2], mat["weft"])
    mesh["II0"] = np.zeros((1, 3))
    R = 2.0
    wrap = np.stack([R * np.sin(P[:, 0] / R), P[:, 1], R * (1 - np.cos(P[:, 0] / R))], axis=1)  # bent about y: II_xx = 1/R
    II = cloth6_second_form(mesh["g"], mesh["has"], wrap[el])[0]
    rep.check(abs(abs(II[0]) - 1 / R) < 0.02 / R and abs(II[1]) < 1e-3 / R and abs(II[2]) < 1e-3 / R, f"cloth6 self-test: II on a cylinder {II}, expected (1/R, 0, 0)")
    mesh["II0"] = cloth6_second_form(mesh["g"], mesh["has"], P[el])
    Q = _random_rotation(rng)
    moved = P @ Q.T + rng.normal(size=3)
    E, _ = cloth6_energy(mesh, moved[el])
    rep.check(abs(E[0]) < 1e-20, f"cloth6 self-test: energy {E[0]} under a rigid motion")
    x = P + 0.01 * rng.normal(size=P.shape)
    grad = cloth6_gradient(mesh, x[el])[0]
    fd = _central_gradient(lambda y: cloth6_energy(mesh, y[el])[0][0], x, 1e-7)
    rep.check(np.abs(grad - fd).max() <= 1e-6 * np.abs(grad).max(), f"cloth6 self-test: complex steps vs central differences {np.abs(grad - fd).max()}")


# ----------------------------------------------------------------------------
# peridynamic membranes (issue 20; root attribute sheet_model "peridynamic", docs/peridynamics.md)
#
# Written from the equations of docs/peridynamics.md (the seed's Eq. 8-15, 36-43), not from
# core/peridynamics.c or problem/pd_terms.c. The tri3 rows only define the rings (and, as for every
# sheet, the lumped masses rho_s t A / 3 per corner); the bend4 rows add nothing. The sheet energy is
#     E_sheet = sum_i (W_i + E_b,i) over every vertex i of the triangles, with
#   * the ring of i: its neighbours j (every other corner of a triangle holding i), rest bonds
#     xi_j = X_j - X_i, weights 1, deformed bonds eta_j = y_j - y_i;
#   * the virtual bond x_perp = xi_t norm(sum_T theta_T n_T) over i's triangles T, each taken in its own
#     orientation starting at i, (i, a, b): theta_T the angle at i between a - i and b - i and n_T the
#     unit normal of (a - i) x (b - i) (a degenerate triangle adds nothing); y_perp the same on the
#     deformed triangles. xi_t is the root attribute pd_thickness, or with pd_thickness 0 the mean sheet
#     thickness of i's triangles (sheet_thickness, or their table entries' with per-group materials);
#     a consistent orientation of the fan is needed only for the normal (x_perp and y_perp flip together);
#   * K = sum_j xi_j xi_j^T + x_perp x_perp^T, F = (sum_j eta_j xi_j^T + y_perp x_perp^T) K^-1, J = det F,
#     C = F^T F, V_i = sum over i's triangles of t A / 3;
#   * W_i = V_i Psi(F): pd_material neohookean Psi = s0 (tr C - 3 - 2 ln J) + s1 (J - 1)^2, stretching
#     Psi = s0/3 ((tr C^2 - 3)/4 + (tr C^-1 - 3)/2); +inf for J <= 0 (s0 = pd_s0, s1 = pd_s1);
#   * E_b,i = V_i k_b/2 sum_j |F^-1 eta_j - xi_j|^2 (k_b = pd_kb), with the same F.
# The forces are minus the gradient of E_sheet in every position, the moving normal y_perp included.
# This checker does not differentiate the formulas by hand: it takes the gradient by COMPLEX STEPS,
# dE/dy_pd = Im E(y + i h e_pd) / h for every node p and direction d, evaluating only the rings that hold
# p (its own and its neighbours'), h = PD_COMPLEX_STEP x the rest box size. Every formula above is
# analytic (norms as sqrt(v.v), the angle as 2 atan(|a x b| / (|a||b| + a.b))), so unlike central
# differences this has no subtractive cancellation: the error is O(h^2) (nil) plus the round-off of one
# energy evaluation, and the residual is compared with the same tolerances as every other file
# (RESIDUAL_RTOL x the stored residual + RESIDUAL_FLOOR x a round-off scale; see elastic_pd). Central
# differences (h ~ 1e-7 x the mesh size) would leave a noise of ~ eps |E_ring| / h per entry, ~1e-8 of
# the force scale: a residual tolerance of ~1e-5 relative plus such a floor would then be needed, which
# is above the converged residuals pbng stores (the self-test checks the complex steps against central
# differences to that accuracy).

PD_ATTRS = ("pd_material", "pd_s0", "pd_s1", "pd_kb", "pd_thickness")
PD_MATERIALS = ("neohookean", "stretching")
PD_COMPLEX_STEP = 1e-20      # complex step, relative to the rest box size
PD_CHUNK = 20000             # ring evaluations per vectorised batch
PD_ENERGY_MARGIN = 1e-4      # the energy's scale: sum_r |terms of E_r| (|C_r - I| + this), see elastic_pd


def read_pd_options(rep, h5):
    """The peridynamic root attributes as a dict (material, s0, s1, kb, thickness), or None."""
    missing = [k for k in PD_ATTRS if k not in h5.attrs]
    if not rep.check(not missing, f"sheet_model peridynamic without the root attributes {missing}"):
        return None
    mat = as_str(h5.attrs["pd_material"])
    ok = rep.check(mat in PD_MATERIALS, f"unknown pd_material '{mat}' (expected one of {PD_MATERIALS})")
    o = {"material": mat}
    for k in PD_ATTRS[1:]:
        v = np.asarray(h5.attrs[k], np.float64)
        ok &= rep.check(v.size == 1 and np.all(np.isfinite(v)), f"root attribute '{k}' is not a finite scalar")
        o[k[3:]] = float(v.reshape(-1)[0]) if v.size == 1 else float("nan")
    if not ok:
        return None
    ok &= rep.check(o["s0"] > 0, "pd_s0 <= 0")
    ok &= rep.check(o["s1"] >= 0, "pd_s1 < 0")
    ok &= rep.check(o["kb"] >= 0, "pd_kb < 0")
    ok &= rep.check(o["thickness"] >= 0, "pd_thickness < 0 (0: the sheet's thickness)")
    return o if ok else None


def _pd_norm(v):
    """|v| over the last axis as sqrt(v.v): analytic, so complex steps go through it."""
    return np.sqrt(np.einsum("...d,...d->...", v, v))


def _pd_normal_sum(Y, tri):
    """sum_T theta_T n_T over each ring's triangles: Y [B, S, 3] ring positions (slot 0 the centre),
    tri [B, T, 2] the slots (a, b) of each triangle (i, a, b); padding (0, 0) and degenerate triangles add
    nothing."""
    idx = np.arange(len(Y))[:, None]
    e1 = Y[idx, tri[:, :, 0]] - Y[:, None, 0]
    e2 = Y[idx, tri[:, :, 1]] - Y[:, None, 0]
    c = np.cross(e1, e2)
    s = _pd_norm(c)
    live = s.real > 0
    s_safe = np.where(live, s, 1.0)
    theta = 2.0 * np.arctan(s_safe / np.where(live, _pd_norm(e1) * _pd_norm(e2) + np.einsum("btd,btd->bt", e1, e2), 1.0))
    return np.einsum("bt,btd->bd", np.where(live, theta / s_safe, 0.0), c)


def pd_rings(rep, tris, X, t_tri, opt):
    """The rings of every vertex of the triangles tris [M, 3] (rest positions X, sheet thickness per
    triangle t_tri [M]) as a dict of padded arrays, or None when a ring is not one consistently oriented
    fan or is degenerate."""
    n_nodes = len(X)
    corner = np.concatenate([tris[:, [c, (c + 1) % 3, (c + 2) % 3]] for c in range(3)])   # (i, a, b) per corner
    tri_of = np.tile(np.arange(len(tris)), 3)
    order = np.argsort(corner[:, 0], kind="stable")
    corner, tri_of = corner[order], tri_of[order]
    centres, start = np.unique(corner[:, 0], return_index=True)
    stop = np.append(start[1:], len(corner))
    slots, tri_slots, volume, thick, bad = [], [], np.zeros(len(centres)), np.zeros(len(centres)), []
    A = 0.5 * twice_areas(X[tris[:, 0]], X[tris[:, 1]], X[tris[:, 2]])
    for r, (i, s0, s1) in enumerate(zip(centres, start, stop)):
        ab = corner[s0:s1, 1:]
        nb = np.unique(ab)
        # one fan, consistently oriented: every neighbour at most once as a and once as b, at most one open end
        first = np.bincount(np.searchsorted(nb, ab[:, 0]), minlength=len(nb))
        second = np.bincount(np.searchsorted(nb, ab[:, 1]), minlength=len(nb))
        if first.max() > 1 or second.max() > 1 or int(((first == 1) & (second == 0)).sum()) > 1 or len(nb) < 2:
            bad.append(int(i))
        slots.append(np.concatenate([[i], nb]))
        tri_slots.append(1 + np.searchsorted(nb, ab))
        e = tri_of[s0:s1]
        volume[r] = np.sum(t_tri[e] * A[e]) / 3.0
        thick[r] = opt["thickness"] if opt["thickness"] > 0 else float(np.mean(t_tri[e]))
    if not rep.check(not bad, f"peridynamic rings: {len(bad)} vertices whose triangles are not one consistently oriented fan "
                              f"(first: node {bad[:1]})"):
        return None
    R = len(centres)
    S = max(len(s) for s in slots)
    T = max(len(t) for t in tri_slots)
    slot_node = np.repeat(centres[:, None], S, axis=1)        # padding: the centre (a zero bond)
    tslot = np.zeros((R, T, 2), np.int64)                     # padding: (0, 0), a zero triangle
    for r in range(R):
        slot_node[r, :len(slots[r])] = slots[r]
        tslot[r, :len(tri_slots[r])] = tri_slots[r]
    Y = X[slot_node] - X[centres][:, None, :]
    s = _pd_normal_sum(Y, tslot)
    sn = np.linalg.norm(s, axis=1)
    degenerate = ~(sn > 0)
    xperp = thick[:, None] * s / np.where(degenerate, 1.0, sn)[:, None]
    K = np.einsum("rsi,rsj->rij", Y, Y) + np.einsum("ri,rj->rij", xperp, xperp)
    diag = np.einsum("rii->ri", K).max(axis=1)
    degenerate |= ~(np.linalg.det(K) > 1e-12 * diag ** 3)
    if not rep.check(not degenerate.any(), f"peridynamic rings: {int(degenerate.sum())} degenerate rest rings "
                                            f"(first: node {centres[degenerate][:1]})"):
        return None
    bond = np.linalg.norm(Y, axis=2)
    nbonds = (slot_node != centres[:, None]).sum(axis=1)
    # (ring, slot) pairs of the nodes each ring holds: the centre and its neighbours, each once
    pair_r, pair_s = np.nonzero(np.arange(S)[None, :] < (nbonds + 1)[:, None])
    return {"centre": centres, "slot_node": slot_node, "tri": tslot, "xi": Y, "xperp": xperp, "K_inv": np.linalg.inv(K),
            "V": volume, "thickness": thick, "bond_mean": bond.sum(axis=1) / nbonds, "pair_r": pair_r, "pair_s": pair_s,
            "opt": opt, "h": PD_COMPLEX_STEP * box_size(X), "n": n_nodes}


def pd_ring_energy(pd, rings, Y):
    """W_i + E_b,i of rings `rings` [B] at ring positions Y [B, S, 3] (slot order of pd["slot_node"]; real or
    complex), the size of the terms summed in each and the strain |C - I| (both real: round-off scales)."""
    opt = pd["opt"]
    xi, xperp, Kinv, V = pd["xi"][rings], pd["xperp"][rings], pd["K_inv"][rings], pd["V"][rings]
    eta = Y - Y[:, None, 0]
    s = _pd_normal_sum(Y, pd["tri"][rings])
    sn = _pd_norm(s)
    ok = sn.real > 0
    yperp = pd["thickness"][rings][:, None] * s / np.where(ok, sn, 1.0)[:, None]
    F = (np.einsum("bsi,bsj->bij", eta, xi) + np.einsum("bi,bj->bij", yperp, xperp)) @ Kinv
    J = np.linalg.det(F)
    ok &= J.real > 0
    F = np.where(ok[:, None, None], F, np.eye(3))
    J = np.where(ok, J, 1.0)
    C = np.einsum("bki,bkj->bij", F, F)
    trC = np.einsum("bii->b", C)
    s0, s1 = opt["s0"], opt["s1"]
    if opt["material"] == "neohookean":
        lnJ = np.log(J)
        psi = s0 * (trC - 3.0 - 2.0 * lnJ) + s1 * (J - 1.0) ** 2
        size = s0 * (np.abs(trC) + 3.0 + 2.0 * np.abs(lnJ)) + s1 * (np.abs(J) ** 2 + 1.0)
    else:
        trC2 = np.einsum("bij,bij->b", C, C)
        trCi = np.einsum("bii->b", np.linalg.inv(C))
        psi = s0 / 3.0 * ((trC2 - 3.0) / 4.0 + (trCi - 3.0) / 2.0)
        size = s0 / 3.0 * ((np.abs(trC2) + 3.0) / 4.0 + (np.abs(trCi) + 3.0) / 2.0)
    res = np.einsum("bij,bsj->bsi", np.linalg.inv(F), eta) - xi
    eb = 0.5 * opt["kb"] * np.einsum("bsi,bsi->b", res, res)
    size = V * (np.abs(size) + 0.5 * opt["kb"] * (np.abs(np.einsum("bsi,bsi->b", res + xi, res + xi)) + np.einsum("bsi,bsi->b", xi, xi)))
    E = V * (psi + eb)
    return np.where(ok, E, np.inf), size.real, np.sqrt(np.abs(np.einsum("bij,bij->b", C - np.eye(3), C - np.eye(3))))


def elastic_pd(mesh, x, material, mu, lam, eps_p=None):
    """The peridynamic sheet energy sum_i W_i + E_b,i, its nodal forces (complex steps), the round-off
    scale per node and the energy's scale, plus the volume kinds' elastic terms of a mixed mesh (the
    tri3 and bend4 groups add nothing of their own). The round-off scale of node p is
        sum over the rings r holding p of |terms of E_r| / (mean bond of r) x (1 + max|x| / mean bond of r),
    the size of the energy's terms per unit length times the cancellation in eta = y_j - y_i (|x|/bond),
    as elastic() does for the tetrahedra. The energy's scale is sum_r |terms of E_r| (|C_r - I| + 1e-4): Psi's
    terms (tr C, 3, ln J, ...) cancel to O(strain) but are evaluated to round-off of their own size, so
    unlike the FEM sheets' (whose e = (F^T F - I)/2 carries a 1e-6 margin) the margin is 1e-4: with
    ENERGY_RTOL 1e-10 a tolerance of 1e-14 of the terms' size at rest, ~50 times their round-off."""
    pd = mesh["pd"]
    n = len(x)
    W, f_int, mag, wscale = 0.0, np.zeros((n, 3)), np.zeros(n), 0.0
    for g in mesh.get("groups", []):
        if g["kind"] not in SHEET_NODES:
            part = physics_of(g)[0](g, x, material, mu, lam) if eps_p is None else physics_of(g)[0](g, x, material, mu, lam, eps_p[g["rows"]])
            W, f_int, mag, wscale = W + part[0], f_int + part[1], mag + part[2], wscale + part[3]
    R = len(pd["centre"])
    Y = x[pd["slot_node"]] - x[pd["centre"]][:, None, :]
    E, size, strain = pd_ring_energy(pd, np.arange(R), Y)
    W += float(E.sum())
    wscale += float(np.dot(size, strain + PD_ENERGY_MARGIN))
    # the gradient: for every (ring, slot) pair and direction d, Im E_r(Y + i h e_slot,d) / h
    pr, ps, h = pd["pair_r"], pd["pair_s"], pd["h"]
    grad = np.zeros((n, 3))
    for d in range(3):
        for lo in range(0, len(pr), PD_CHUNK):
            r, s = pr[lo:lo + PD_CHUNK], ps[lo:lo + PD_CHUNK]
            Yc = Y[r].astype(complex)
            Yc[np.arange(len(r)), s, d] += 1j * h
            Ec = pd_ring_energy(pd, r, Yc)[0]
            grad[:, d] += np.bincount(pd["slot_node"][r, s], weights=Ec.imag / h, minlength=n)
    f_int -= grad
    bond = pd["bond_mean"]
    per_ring = size / bond * (1.0 + np.abs(x).max() / bond)
    mag += np.bincount(pd["slot_node"][pr, ps], weights=per_ring[pr], minlength=n)
    return W, f_int, mag, wscale


def pd_mesh(rep, mesh, opt):
    """The rings of the mesh's tri3 rows (a tri3 file, or the tri3 group of a mixed one) into mesh["pd"];
    False after a failure."""
    tri = mesh if mesh.get("kind") == "tri3" else next((g for g in mesh.get("groups", []) if g["kind"] == "tri3"), None)
    if not rep.check(tri is not None, "sheet_model peridynamic without tri3 rows"):
        return False
    t = np.broadcast_to(np.asarray(tri["sheet"]["t"], np.float64), (len(tri["elements"]),))
    pd = pd_rings(rep, tri["elements"], mesh["X"], t, opt)
    if pd is None:
        return False
    mesh["pd"] = pd
    return True



# the contact barrier in the frame's energy (-pd_contact_kappa > 0; docs/peridynamics.md#the-barrier-in-the-frames-residual)
#
# Written from the seed's formulas (projective-peridynamics-membranes.txt Eq. 3, 48, 51), not from pbng's C code:
#     E_B = kappa sum_c B(f(d_c) - xi),  B(x) = -(x - dhat)^2 ln(x / dhat) for 0 < x < dhat, 0 beyond,
#     f(d) = (1 + eps) xi for d <= xi, (d - xi)^2 / (4 eps xi) + (1 + eps) xi up to (1 + 2 eps) xi, d beyond,
# over the pairs c of the sheet's triangles (vertex-triangle and edge-edge, check_thickness.py's candidates and
# exclusions: sharing a vertex or a mesh edge apart, of one body and closer than the rest exclusion at rest) and the
# free vertices' obstacle pairs (signed distances), whose distance d_c is below xi + dhat — found here by brute force.
# Its force on vertex s of pair c is -kappa B'(f(d) - xi) f'(d) grad_s d, with grad_s d the unit vector between the
# closest points weighted by s's barycentric coordinate in its primitive (minus on the second primitive).

def barrier_B(x, dhat):
    return np.where(x < dhat, -(x - dhat) ** 2 * np.log(np.minimum(x, dhat) / dhat), 0.0)


def barrier_dB(x, dhat):
    return np.where(x < dhat, -2 * (x - dhat) * np.log(np.minimum(x, dhat) / dhat) - (x - dhat) ** 2 / x, 0.0)


def rescaled_gap(d, xi, eps):
    """f(d) - xi of Eq. 51 and f'(d)."""
    band = (d - xi) ** 2 / (4 * eps * xi) + (1 + eps) * xi
    f = np.where(d <= xi, (1 + eps) * xi, np.where(d <= (1 + 2 * eps) * xi, band, d))
    df = np.where(d <= xi, 0.0, np.where(d <= (1 + 2 * eps) * xi, (d - xi) / (2 * eps * xi), 1.0))
    return f - xi, df


def closest_on_segment(p, a, b):
    """Parameters t in [0, 1] of the points of segments [a, b] closest to p."""
    ab = b - a
    den = np.einsum("ij,ij->i", ab, ab)
    return np.clip(np.einsum("ij,ij->i", p - a, ab) / np.where(den > 0, den, 1), 0, 1)


def closest_on_triangle(p, a, b, c):
    """Barycentric coordinates (m, 3) of the points of triangles (a, b, c) closest to p: the plane's projection when
    inside, else the nearest edge's point."""
    n = np.cross(b - a, c - a)
    nn = np.einsum("ij,ij->i", n, n)
    q = p - (np.einsum("ij,ij->i", p - a, n) / np.where(nn > 0, nn, 1))[:, None] * n
    area = [np.einsum("ij,ij->i", np.cross(v - u, q - u), n) for u, v in ((b, c), (c, a), (a, b))]
    beta = np.stack(area, axis=1) / np.where(nn > 0, nn, 1)[:, None]
    inside = (nn > 0) & np.all(beta >= 0, axis=1)
    best, best_d = beta.copy(), np.where(inside, 0.0, np.inf)
    best_d = np.where(inside, np.linalg.norm(p - q, axis=1), np.inf)
    for i, j in ((0, 1), (1, 2), (2, 0)):
        u, v = (a, b, c)[i], (a, b, c)[j]
        t = closest_on_segment(p, u, v)
        d = np.linalg.norm(p - (u + t[:, None] * (v - u)), axis=1)
        take = ~inside & (d < best_d)
        e = np.zeros((len(p), 3))
        e[:, i], e[:, j] = 1 - t, t
        best = np.where(take[:, None], e, best)
        best_d = np.where(take, d, best_d)
    return best


def closest_on_segments(a0, a1, b0, b1):
    """Parameters (s, t) of the closest points of segments [a0, a1] and [b0, b1]: the interior stationary point when it
    lies inside both, else the best of the four endpoint-segment projections."""
    u, v, w = a1 - a0, b1 - b0, a0 - b0
    A, B, C = np.einsum("ij,ij->i", u, u), np.einsum("ij,ij->i", u, v), np.einsum("ij,ij->i", v, v)
    D, E = np.einsum("ij,ij->i", u, w), np.einsum("ij,ij->i", v, w)
    den = A * C - B * B
    good = den > 1e-14 * np.maximum(A * C, 1e-300)
    s = np.where(good, (B * E - C * D) / np.where(good, den, 1), -1)
    t = np.where(good, (A * E - B * D) / np.where(good, den, 1), -1)
    interior = good & (s > 0) & (s < 1) & (t > 0) & (t < 1)
    dist = lambda s, t: np.linalg.norm(a0 + s[:, None] * u - b0 - t[:, None] * v, axis=1)
    best_s, best_t = np.where(interior, s, 0.0), np.where(interior, t, 0.0)
    best_d = np.where(interior, dist(best_s, best_t), np.inf)
    zero, one = np.zeros(len(a0)), np.ones(len(a0))
    for cs, ct in ((zero, closest_on_segment(a0, b0, b1)), (one, closest_on_segment(a1, b0, b1)),
                   (closest_on_segment(b0, a0, a1), zero), (closest_on_segment(b1, a0, a1), one)):
        d = dist(cs, ct)
        take = ~interior & (d < best_d)
        best_s, best_t, best_d = np.where(take, cs, best_s), np.where(take, ct, best_t), np.where(take, d, best_d)
    return best_s, best_t


def obstacle_gradient(row, x):
    """The gradient of the obstacle's signed distance (check_thickness.obstacle_distance) at points x."""
    kind, p = int(row[0]), row[1:]
    if kind == 0:
        return np.broadcast_to(p[3:6] / np.linalg.norm(p[3:6]), x.shape)
    if kind == 3:
        r = x - p[0:3]
        return r / np.linalg.norm(r, axis=1)[:, None]
    lo, hi = p[0:3], p[3:6]
    walls = np.concatenate([x - lo, hi - x], axis=1)     # distances to the six faces, inward
    k = np.argmin(walls, axis=1)
    inward = np.zeros_like(x)
    inward[np.arange(len(x)), k % 3] = np.where(k < 3, 1.0, -1.0)
    if kind == 2:   # container: the distance to the nearest wall, inside
        return inward
    out = x - np.clip(x, lo, hi)
    outside = ~np.all((x > lo) & (x < hi), axis=1)
    no = np.linalg.norm(out, axis=1)
    return np.where(outside[:, None], out / np.where(no > 0, no, 1)[:, None], -inward)


def read_pd_barrier(rep, h5, mesh):
    """The barrier's parameters and the surface's pairs' topology (check_thickness.topology), or None when the file has
    no barrier in its energy (pd_contact 0, or pd_contact_kappa absent or 0)."""
    if not int(h5.attrs.get("pd_contact", 0)) or float(h5.attrs.get("pd_contact_kappa", 0.0)) <= 0:
        return None
    missing = [k for k in ("pd_contact_thickness", "pd_contact_dhat", "pd_contact_eps", "pd_contact_rest_exclusion") if k not in h5.attrs]
    if not rep.check(not missing, f"pd_contact_kappa without the root attributes {missing}"):
        return None
    from check_thickness import topology     # (check_thickness imports this module: here, not at the top)
    a = h5.attrs
    obstacles = np.asarray(a["pd_obstacles"], dtype=np.float64).reshape(-1, 7) if "pd_obstacles" in a else np.zeros((0, 7))
    return {"kappa": float(a["pd_contact_kappa"]), "xi": float(a["pd_contact_thickness"]), "dhat": float(a["pd_contact_dhat"]),
            "eps": float(a["pd_contact_eps"]), "rest_exclusion": float(a["pd_contact_rest_exclusion"]), "obstacles": obstacles,
            "topology": topology(h5), "rest": mesh["X"]}


def barrier_pairs(bar, x):
    """The vertex-triangle pairs (vertex, triangle index) and edge-edge pairs (edge, edge) within xi + dhat at x, after
    check_thickness.py's exclusions."""
    from check_thickness import candidates, point_triangle, edge_edge, rest_excluded
    tris, edges, near, body = bar["topology"]
    rest, reach, r_ex = bar["rest"], bar["xi"] + bar["dhat"], bar["rest_exclusion"]
    tlo, thi = x[tris].min(axis=1), x[tris].max(axis=1)
    vt = candidates((x, x), tlo, thi, reach)
    vt = vt[np.asarray([k for k, (v, t) in enumerate(vt) if not any(c in near[v] for c in tris[t])], dtype=np.int64)].reshape(-1, 2)
    if len(vt):
        d_rest = point_triangle(rest[vt[:, 0]], *(rest[tris[vt[:, 1], j]] for j in range(3)))
        vt = vt[~rest_excluded(d_rest, body[vt[:, 0]] == body[tris[vt[:, 1], 0]], r_ex)]
    elo, ehi = x[edges].min(axis=1), x[edges].max(axis=1)
    ee = candidates((elo, ehi), elo, ehi, reach)
    ee = ee[ee[:, 0] < ee[:, 1]]
    ee = ee[np.asarray([k for k, (e, f) in enumerate(ee) if not any(c in near[edges[e, 0]] or c in near[edges[e, 1]] for c in edges[f])],
                       dtype=np.int64)].reshape(-1, 2)
    if len(ee):
        d_rest = edge_edge(*(rest[edges[ee[:, j // 2], j % 2]] for j in range(4)))
        ee = ee[~rest_excluded(d_rest, body[edges[ee[:, 0], 0]] == body[edges[ee[:, 1], 0]], r_ex)]
    return vt, ee


def barrier_terms(mesh, x):
    """(E_B, its nodal forces, their magnitudes per node) at positions x."""
    bar = mesh["pd_barrier"]
    kappa, xi, dhat, eps = bar["kappa"], bar["xi"], bar["dhat"], bar["eps"]
    tris, edges = bar["topology"][0], bar["topology"][1]
    n = len(x)
    f, mag, energy = np.zeros((n, 3)), np.zeros(n), 0.0
    vt, ee = barrier_pairs(bar, x)
    groups = []     # (vertex ids (m, k), weights (m, k), closest-point difference (m, 3))
    if len(vt):
        p, tri = vt[:, 0], tris[vt[:, 1]]
        beta = closest_on_triangle(x[p], x[tri[:, 0]], x[tri[:, 1]], x[tri[:, 2]])
        q = np.einsum("ij,ijk->ik", beta, x[tri])
        groups.append((np.concatenate([p[:, None], tri], axis=1), np.concatenate([np.ones((len(p), 1)), -beta], axis=1), x[p] - q))
    if len(ee):
        ea, eb = edges[ee[:, 0]], edges[ee[:, 1]]
        s, t = closest_on_segments(x[ea[:, 0]], x[ea[:, 1]], x[eb[:, 0]], x[eb[:, 1]])
        pa = x[ea[:, 0]] + s[:, None] * (x[ea[:, 1]] - x[ea[:, 0]])
        pb = x[eb[:, 0]] + t[:, None] * (x[eb[:, 1]] - x[eb[:, 0]])
        groups.append((np.concatenate([ea, eb], axis=1), np.stack([1 - s, s, -(1 - t), -t], axis=1), pa - pb))
    for ids, w, diff in groups:
        d = np.linalg.norm(diff, axis=1)
        gap, df = rescaled_gap(d, xi, eps)
        act = gap < dhat
        ids, w, diff, d, gap, df = ids[act], w[act], diff[act], d[act], gap[act], df[act]
        energy += float(kappa * barrier_B(gap, dhat).sum())
        unit = diff / np.where(d > 0, d, 1)[:, None]
        slope = kappa * barrier_dB(gap, dhat) * df      # dE/dd of each pair
        for k in range(ids.shape[1]):
            fk = -(slope * w[:, k])[:, None] * unit
            np.add.at(f, ids[:, k], fk)
            np.add.at(mag, ids[:, k], np.linalg.norm(fk, axis=1))
    free = np.flatnonzero(mesh["free"])
    free = np.intersect1d(free, np.unique(tris))
    from check_thickness import obstacle_distance
    for row in bar["obstacles"]:
        d = obstacle_distance(row, x[free])
        gap, df = rescaled_gap(d, xi, eps)
        act = gap < dhat
        v = free[act]
        energy += float(kappa * barrier_B(gap[act], dhat).sum())
        fk = -(kappa * barrier_dB(gap[act], dhat) * df[act])[:, None] * obstacle_gradient(row, x[v])
        np.add.at(f, v, fk)
        np.add.at(mag, v, np.linalg.norm(fk, axis=1))
    return energy, f, mag


def _random_rotation(rng):
    Q, R = np.linalg.qr(rng.normal(size=(3, 3)))
    Q = Q * np.sign(np.diag(R))
    return Q if np.linalg.det(Q) > 0 else -Q


def _central_gradient(energy, x, h):
    """Central differences of a scalar energy(x) over every entry of x [k, 3]."""
    grad = np.zeros_like(x)
    for i in np.ndindex(*x.shape):
        d = np.zeros_like(x)
        d[i] = h
        grad[i] = (energy(x + d) - energy(x - d)) / (2 * h)
    return grad


def self_test_sheets(rep, rng):
    """The sheet formulas above: rest frame, rigid motions, uniaxial stretch, gradients; Bergou's weights."""
    C = np.array([[3.0, 0.7, 0.0], [0.7, 2.0, 0.0], [0.0, 0.0, 0.9]])
    mat = {"C": C, "t": 0.3, "kb": 1.7, "weft": np.array([1.0, 0.2, 0.1]), "rho": 2.0}
    for trial in range(20):
        X = rng.normal(size=(3, 3))
        A, g = triangle_rest(X[None, 0], X[None, 1], X[None, 2], mat["weft"])
        rep.check(abs(A[0] - 0.5 * np.linalg.norm(np.cross(X[1] - X[0], X[2] - X[0]))) < 1e-14 * (1 + A[0]), "self-test tri3: area")
        rep.check(np.abs(g[0].sum(axis=0)).max() < 1e-12 * np.abs(g).max(), "self-test tri3: shape gradients do not sum to 0")
        e0, _, F = membrane_terms(mat, A, g, X[None])
        rep.check(np.abs(F[0].T @ F[0] - np.eye(2)).max() < 1e-12 and abs(e0[0]) < 1e-20, "self-test tri3: F^T F != I at rest")
        Q, b = _random_rotation(rng), rng.normal(size=3)
        er, grad_r, _ = membrane_terms(mat, A, g, (X @ Q.T + b)[None])
        rep.check(abs(er[0]) < 1e-20 and np.abs(grad_r).max() < 1e-10, "self-test tri3: energy or force under a rigid motion")
        # the local x axis is the weft projected onto the triangle: a stretch along it is E_xx only
        n = np.cross(X[1] - X[0], X[2] - X[0])
        n /= np.linalg.norm(n)
        e1 = mat["weft"] - (mat["weft"] @ n) * n
        e1 /= np.linalg.norm(e1)
        lam = 1.0 + 0.1 * rng.random()
        xs = X + (lam - 1.0) * np.outer((X - X[0]) @ e1, e1)
        es, _, Fs = membrane_terms(mat, A, g, xs[None])
        Exx = 0.5 * (lam ** 2 - 1.0)
        rep.check(abs(es[0] - 0.5 * mat["t"] * A[0] * C[0, 0] * Exx ** 2) < 1e-12 * es[0], "self-test tri3: uniaxial stretch along the weft")
        x = X + 0.3 * rng.normal(size=(3, 3))
        _, grad, _ = membrane_terms(mat, A, g, x[None])
        fd = _central_gradient(lambda y: membrane_terms(mat, A, g, y[None])[0][0], x, 1e-6)
        rep.check(np.abs(fd - grad[0]).max() < 1e-6 * (1 + np.abs(grad).max()), "self-test tri3: gradient differs from central differences "
                                                                                  f"by {np.abs(fd - grad[0]).max():.2e}")
        # the weft along the normal: the first edge
        A2, g2 = triangle_rest(X[None, 0], X[None, 1], X[None, 2], n)
        _, _, F2 = membrane_terms(mat, A2, g2, X[None])
        d = (X[1] - X[0]) / np.linalg.norm(X[1] - X[0])
        rep.check(np.abs(F2[0][:, 0] - d).max() < 1e-12, "self-test tri3: a weft along the normal does not give the first edge as x axis")
    for trial in range(20):
        # a flat stencil in a random plane: v = 0; folded about x0x1 by theta: |v| = 2 |e| sin(theta/2)
        Q, b = _random_rotation(rng), rng.normal(size=3)
        p = np.array([[0.0, 0.0, 0.0], [1.0 + rng.random(), 0.0, 0.0],
                      [rng.random(), 0.5 + rng.random(), 0.0], [rng.random(), -0.5 - rng.random(), 0.0]])
        X = p @ Q.T + b
        K, scale = stencil_rest(X[None])
        rep.check(abs(K.sum()) < 1e-12 * np.abs(K).sum(), "self-test bend4: weights do not sum to 0")
        _, _, v = bending_terms(mat["kb"], K, scale, X[None])
        rep.check(np.linalg.norm(v) < 1e-12 * np.abs(K).sum() * (1 + np.abs(X).max()), "self-test bend4: v != 0 on a flat stencil")
        th = rng.uniform(-2.5, 2.5)
        fold = p.copy()
        fold[3, 1:] = [p[3, 1] * np.cos(th), p[3, 1] * np.sin(th)]
        eb, _, _ = bending_terms(mat["kb"], K, scale, (fold @ Q.T + b)[None])
        want = 0.5 * mat["kb"] * scale[0] * (2 * p[1, 0] * np.sin(th / 2)) ** 2
        rep.check(abs(eb[0] - want) < 1e-10 * (want + 1e-300), f"self-test bend4: folded hinge energy {eb[0]:.6e}, closed form {want:.6e}")
        x = X + 0.2 * rng.normal(size=(4, 3))
        _, grad, _ = bending_terms(mat["kb"], K, scale, x[None])
        fd = _central_gradient(lambda y: bending_terms(mat["kb"], K, scale, y[None])[0][0], x, 1e-6)
        rep.check(np.abs(fd - grad[0]).max() < 1e-6 * (1 + np.abs(grad).max()), "self-test bend4: gradient differs from central differences")


# ----------------------------------------------------------------------------
# --self-test: the kinds' definitions against closed forms and Gmsh's own files

def _moment(kind, e):
    """Exact integral of x^i y^j z^k over the kind's reference element."""
    from math import factorial as f
    i, j, k = e

    def line(p):                       # int_{-1}^{1} t^p
        return 2.0 / (p + 1) if p % 2 == 0 else 0.0
    if kind.startswith("tet"):
        return f(i) * f(j) * f(k) / f(i + j + k + 3)
    if kind.startswith("hex"):
        return line(i) * line(j) * line(k)
    if kind == "prism6":
        return f(i) * f(j) / f(i + j + 2) * line(k)
    if i % 2 or j % 2:
        return 0.0
    return 4.0 / ((i + 1) * (j + 1)) * f(k) * f(i + j + 2) / f(i + j + k + 3)


def _rule_exps(kind):
    r = range(6)
    if kind.startswith("tet"):
        return [e for e in hex_exps(5) if sum(e) <= KIND_DEGREE[kind]]
    if kind.startswith("hex"):
        p = 3 if kind == "hex8" else 5
        return [e for e in hex_exps(p)]
    if kind == "prism6":
        return [(i, j, k) for i in r for j in r for k in range(4) if i + j <= 2]
    return [e for e in hex_exps(3) if sum(e) <= 3]


def _sample(kind, rng, m):
    """m random points inside the reference element (away from the pyramid's apex)."""
    u = rng.random((m, 3))
    if kind.startswith("tet"):
        b = -np.log(rng.random((m, 4)))
        return (b / b.sum(axis=1, keepdims=True))[:, 1:]
    if kind.startswith("hex"):
        return 2 * u - 1
    if kind == "prism6":
        flip = u[:, 0] + u[:, 1] > 1
        u[flip, :2] = 1 - u[flip, :2]
        return np.column_stack([u[:, 0], u[:, 1], 2 * u[:, 2] - 1])
    z = 0.9 * u[:, 2]
    return np.column_stack([(2 * u[:, 0] - 1) * (1 - z), (2 * u[:, 1] - 1) * (1 - z), z])


def _read_msh22(path):
    """Nodes {tag: xyz} and elements [(type, [node tags])] of a Gmsh 2.2 ASCII file."""
    lines = open(path, encoding="ascii").read().split("\n")
    i = lines.index("$Nodes")
    nodes = {}
    for line in lines[i + 2:i + 2 + int(lines[i + 1])]:
        t = line.split()
        nodes[int(t[0])] = np.array([float(v) for v in t[1:4]])
    i = lines.index("$Elements")
    elems = []
    for line in lines[i + 2:i + 2 + int(lines[i + 1])]:
        t = [int(v) for v in line.split()]
        elems.append((t[1], t[3 + t[2]:]))
    return nodes, elems


def self_test_plasticity(rep, rng):
    """StVK with a plastic strain: P against central differences of Psi in F, the Voigt packing, a fully
    relaxed element (eps_p = E: no energy, no stress), eps_p = 0 as plain StVK; the handle springs' force
    against central differences of their energy."""
    mu, lam = 3.0, 5.0
    F = np.eye(3)[None] + 0.3 * rng.normal(size=(4, 3, 3))
    eps = 0.05 * rng.normal(size=(4, 6))
    E = strain_from_voigt(eps)
    rep.check(np.array_equal(E, E.transpose(0, 2, 1)) and np.array_equal(strain_from_voigt(np.arange(6.0)[None])[0],
                                                                         np.array([[0, 5, 4], [5, 1, 3], [4, 3, 2]])),
              "self-test plasticity: Voigt packing is not (xx, yy, zz, yz, xz, xy)")
    psi, P, _, _ = stress("stvk", F, mu, lam, eps)
    fd = np.stack([_central_gradient(lambda G: stress("stvk", G[None], mu, lam, eps[e:e + 1])[0][0], F[e], 1e-6) for e in range(len(F))])
    rep.check(np.abs(fd - P).max() < 1e-6 * (1 + np.abs(P).max()), f"self-test plasticity: P differs from dPsi/dF by {np.abs(fd - P).max():.3e}")
    green = 0.5 * (np.einsum("eki,ekj->eij", F, F) - np.eye(3))
    relaxed = np.stack([green[:, 0, 0], green[:, 1, 1], green[:, 2, 2], green[:, 1, 2], green[:, 0, 2], green[:, 0, 1]], axis=1)
    psi_r, P_r, _, _ = stress("stvk", F, mu, lam, relaxed)
    rep.check(np.abs(psi_r).max() < 1e-14 and np.abs(P_r).max() < 1e-13, "self-test plasticity: eps_p = E leaves energy or stress")
    psi_0, P_0, _, _ = stress("stvk", F, mu, lam, np.zeros((4, 6)))
    psi_e, P_e, _, _ = stress("stvk", F, mu, lam)
    rep.check(np.array_equal(psi_0, psi_e) and np.array_equal(P_0, P_e), "self-test plasticity: eps_p = 0 differs from StVK")
    k = np.array([0.0, 2.0, 7.5])
    x, T = rng.normal(size=(3, 3)), rng.normal(size=(3, 3))
    T[0] = 0.0
    _, f, _, _ = handle_terms(k, T, x)
    fd = _central_gradient(lambda y: handle_terms(k, T, y)[0], x, 1e-6)
    rep.check(np.abs(fd + f).max() < 1e-8 * (1 + np.abs(f).max()), "self-test handles: force is not minus the energy's gradient")


def self_test_log_neohookean(rep, rng):
    """neohookean_log: Psi at a hand-computed F, P against central differences of Psi, no stress at rest,
    Psi = +inf (and P not a number) where J <= 0."""
    mu, lam = 500000.0 / 13.0, 750000.0 / 13.0      # E = 1e5, nu = 0.3
    F0 = np.array([[[0.9, 0.2, 0.1], [0.0, 0.8, 0.3], [0.1, 0.0, 0.7]]])   # J = 0.502, |F|^2 = 2.09
    psi0 = stress("neohookean_log", F0, mu, lam)[0][0]
    rep.check(abs(psi0 - 22706.010941263394) < 1e-9 * 22706.0, f"self-test neohookean_log: Psi(F0) = {psi0!r}, not 22706.0109412634")
    F = np.eye(3)[None] + 0.25 * rng.normal(size=(6, 3, 3))
    F = F[np.linalg.det(F) > 0.2]
    psi, P, _, _ = stress("neohookean_log", F, mu, lam)
    fd = np.stack([_central_gradient(lambda G: stress("neohookean_log", G[None], mu, lam)[0][0], F[e], 1e-7) for e in range(len(F))])
    rep.check(len(F) > 0 and np.abs(fd - P).max() < 1e-6 * (mu + np.abs(P).max()),
              f"self-test neohookean_log: P differs from dPsi/dF by {np.abs(fd - P).max():.3e}")
    psi_i, P_i, _, _ = stress("neohookean_log", np.eye(3)[None], mu, lam)
    rep.check(abs(psi_i[0]) < 1e-9 and np.abs(P_i).max() < 1e-9 * mu, "self-test neohookean_log: energy or stress at rest")
    inv = np.array([np.diag([-1.0, 1.0, 1.0]), np.diag([1.0, 1.0, 0.0])])
    psi_n, P_n, _, _ = stress("neohookean_log", inv, mu, lam)
    rep.check(np.all(psi_n == np.inf) and np.all(np.isnan(P_n)), "self-test neohookean_log: J <= 0 must have Psi = +inf and no stress")


def self_test(rep, data_dir):
    rng = np.random.default_rng(1)
    self_test_sheets(rep, rng)
    self_test_cloth6(rep, rng)
    self_test_plasticity(rep, rng)
    self_test_log_neohookean(rep, rng)
    for name, kind in KINDS.items():
        b = kind.basis
        n = kind.n
        rep.check(np.abs(b.N(b.nodes) - np.eye(n)).max() < 1e-12, f"self-test {name}: N_a(r_b) != delta_ab")
        r = _sample(name, rng, 50)
        N, dN = b.N(r), b.dN(r)
        rep.check(np.abs(N.sum(axis=1) - 1).max() < 1e-12, f"self-test {name}: no partition of unity")
        rep.check(np.abs(np.einsum("ad,pak->pdk", b.nodes, dN) - np.eye(3)).max() < 1e-11,
                  f"self-test {name}: sum_a r_a (x) dN_a != I (not complete of degree 1)")
        h = 1e-6
        fd = np.stack([(b.N(r + h * np.eye(3)[k]) - b.N(r - h * np.eye(3)[k])) / (2 * h) for k in range(3)], axis=2)
        rep.check(np.abs(fd - dN).max() < 1e-7, f"self-test {name}: dN differs from central differences "
                                                f"by {np.abs(fd - dN).max():.2e}")
        mono = Lagrange.__new__(Lagrange)
        exps = _rule_exps(name)
        mono.exps = np.array(exps)
        got = mono.mono(kind.qr).T @ kind.qw
        want = np.array([_moment(name, e) for e in exps])
        rep.check(np.abs(got - want).max() < 1e-15 * 50, f"self-test {name}: the quadrature misses a monomial "
                                                        f"by {np.abs(got - want).max():.2e}")
        rep.check(np.all(kind.qw > 0), f"self-test {name}: non-positive quadrature weight")
        load = kind.N_q.T @ kind.qw    # int N_a over the reference element
        rep.check(abs(load.sum() - kind.qw.sum()) < 1e-14, f"self-test {name}: load weights do not sum to the volume")
        if name == "tet10":            # the textbook P2 values: corners -V/20, edges V/5
            V = kind.qw.sum()
            rep.check(np.abs(load[:4] + V / 20).max() < 1e-15 and np.abs(load[4:] - V / 5).max() < 1e-15,
                      f"self-test tet10: load weights {load} are not -V/20 (corners), V/5 (edges)")
        if kind.vtk_nodes is not None:   # the XDMF node set is the element's node set
            d = np.linalg.norm(kind.vtk_nodes[:, None] - b.nodes[None], axis=2)
            rep.check(np.array_equal(np.sort(d.argmin(axis=1)), np.arange(n)) and d.min(axis=1).max() < 1e-14,
                      f"self-test {name}: VTK reference nodes are not the element's nodes permuted")
    # hex27's octant hexahedra tile the reference cube, each positive (trilinear det J at its Gauss points)
    det, Vq, _ = kind_geometry(KINDS["hex8"], KINDS["hex27"].basis.nodes[HEX27_OCTANT_CELLS])
    rep.check((det > 0).all() and abs(Vq.sum() - 8.0) < 1e-14 and np.allclose(Vq.sum(axis=1), 1.0, rtol=0, atol=1e-15)
              and len(np.unique(HEX27_OCTANT_CELLS[:, [0, 6]], axis=0)) == 8,
              "self-test hex27: the octant hexahedra do not tile the reference cube positively")
    # Gmsh's own files: each element's nodes mapped back to the reference element (affine meshes)
    for fname, gtype, name in (("tet10.msh", 11, "tet10"), ("tet20.msh", 29, "tet20"), ("hex27.msh", 12, "hex27")):
        path = os.path.join(data_dir, fname)
        if not rep.check(os.path.isfile(path), f"self-test: missing {path}"):
            continue
        nodes, elems = _read_msh22(path)
        ref = KINDS[name].basis.nodes
        count = 0
        for t, tags in elems:
            if t != gtype:
                continue
            P = np.array([nodes[k] for k in tags])
            if name.startswith("tet"):
                A = (P[1:4] - P[0]).T
                r = np.linalg.solve(A, (P - P[0]).T).T
            else:
                A = np.column_stack([P[1] - P[0], P[3] - P[0], P[4] - P[0]])
                r = 2 * np.linalg.solve(A, (P - P[0]).T).T - 1
            count += 1
            rep.check(len(tags) == len(ref) and np.abs(r - ref).max() < 1e-9,
                      f"self-test {name}: Gmsh's {fname} element orders its nodes differently")
        rep.check(count > 0, f"self-test: no type-{gtype} element in {path}")


# ----------------------------------------------------------------------------
# optional checks

def box_size(X):
    """Diagonal of the bounding box of the rest positions."""
    return float(np.linalg.norm(X.max(axis=0) - X.min(axis=0)))


def check_patch_test(rep, mesh, frames):
    """Linear patch test: x = A X + b fitted on the fixed nodes holds on every node (final frame)."""
    X, x, fixed = mesh["X"], frames[-1][0], mesh["fixed"]
    L = box_size(X)
    if not rep.check(len(fixed) >= 4, "patch test: fewer than 4 fixed nodes"):
        return
    Xh = np.hstack([X, np.ones((len(X), 1))])
    coef, *_ = np.linalg.lstsq(Xh[fixed], x[fixed], rcond=None)
    fit = np.abs(Xh[fixed] @ coef - x[fixed]).max()
    rep.check(fit <= PATCH_FIT_TOL * L, f"patch test: fixed nodes are not an affine map (max misfit {fit:.3e})")
    err = np.abs(Xh @ coef - x).max()
    rep.check(err <= PATCH_TOL * L,
              f"patch test: final positions deviate from the affine map by {err:.3e} > {PATCH_TOL * L:.3e}")


def check_free_fall(rep, mesh, attrs, frames):
    """Free fall under backward Euler: x^n = x^0 + g dt^2 n(n+1)/2 (constant dt)."""
    rep.check(len(mesh["fixed"]) == 0, f"free fall: {len(mesh['fixed'])} fixed nodes")
    rep.check(attrs["mode"] == "dynamic", f"free fall: mode is {attrs['mode']}")
    t = np.array([a["time"] for _, a in frames])
    if len(t) < 2:
        return
    dt = t[1] - t[0]
    rep.check(np.allclose(np.diff(t), dt, rtol=1e-12, atol=0), "free fall: time step not constant")
    x0 = frames[0][0]
    for n in range(1, len(frames)):
        shift = attrs["gravity"] * dt ** 2 * n * (n + 1) / 2.0
        err = np.abs(frames[n][0] - (x0 + shift)).max()
        tol = FREE_FALL_TOL * max(box_size(mesh["X"]), np.abs(shift).max())
        rep.check(err <= tol, f"free fall: frame {n:06d} off the rigid backward-Euler path by {err:.3e} > {tol:.3e}")


def check_compare(rep, h5, other_path, rtol, frames, upto=None):
    """Same mesh (rest_positions, tetrahedra or elements, fixed_nodes exactly) and positions within rtol."""
    try:
        other = h5py.File(other_path, "r")
    except OSError as err:
        rep.fail(f"compare: cannot open {other_path}: {err}")
        return
    with other:
        conn = "mesh/tetrahedra" if "mesh/tetrahedra" in h5 else "mesh/elements"
        for path in ("mesh/rest_positions", conn, "mesh/fixed_nodes"):
            ok = path in other and other[path].shape == h5[path].shape and np.array_equal(other[path][()], h5[path][()])
            rep.check(ok, f"compare: {path} differs from {other_path}")
        names = frame_names(other)
        if not rep.check(len(names) == len(frames), f"compare: {len(names)} frames in {other_path}, {len(frames)} here"):
            return
        for k, (x, a) in enumerate(frames):
            if upto is not None and k > upto:
                break
            y = other[f"frames/{names[k]}/positions"][()]
            if not rep.check(y.shape == x.shape, f"compare: frame {k:06d} shape {y.shape} vs {x.shape}"):
                continue
            diff = np.abs(x - y).max() / max(np.abs(x).max(), np.finfo(float).tiny)
            rep.check(diff <= rtol, f"compare: frame {k:06d} positions differ by {diff:.3e} (relative) > {rtol:.3e}")


# ----------------------------------------------------------------------------

def parse_args(argv):
    p = argparse.ArgumentParser(description="Independent checker of pbng HDF5 output.")
    p.add_argument("file", nargs="?")
    p.add_argument("--max-relative-residual", type=float, default=None)
    p.add_argument("--frames", type=int, default=None, help="expected number of frames after frame 0")
    p.add_argument("--patch-test", action="store_true")
    p.add_argument("--free-fall", action="store_true")
    p.add_argument("--compare", default=None)
    p.add_argument("--rtol", type=float, default=None)
    p.add_argument("--compare-upto", type=int, default=None, help="--compare: frames 0..K only (the rest are not compared)")
    p.add_argument("--max-penetration", type=float, default=None,
                   help="fail when a surface vertex lies deeper than this inside another body or beyond an obstacle")
    p.add_argument("--max-self-penetration", type=float, default=None,
                   help="fail when a surface vertex lies deeper than this inside another part of its own body")
    p.add_argument("--min-sheet-gap", type=float, default=None,
                   help="fail when a surface vertex comes closer than this to a sheet triangle it shares no element with")
    p.add_argument("--quiet", action="store_true", help="print nothing on success")
    p.add_argument("--self-test", action="store_true",
                   help="check the element kinds' nodes, shape functions and quadrature (no file needed)")
    p.add_argument("--element-order-data", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                                "data", "element_order"),
                   help="directory of Gmsh's reference meshes for --self-test")
    args = p.parse_args(argv)
    if args.file is None and not args.self_test:
        p.error("the following arguments are required: file")
    if args.compare is not None and args.rtol is None:
        p.error("--compare needs --rtol")
    return args


def run(args):
    rep = Report()
    try:
        h5 = h5py.File(args.file, "r")
    except OSError as err:
        rep.fail(f"cannot open {args.file}: {err}")
        return rep, None
    with h5:
        attrs = read_root_attrs(rep, h5)
        kind = as_str(h5.attrs["element"]) if "element" in h5.attrs else "tet4"
        if not rep.check(kind in KINDS or kind in ("mixed", "tri3", "cloth6"), f"unknown element kind '{kind}'"):
            return rep, None
        if kind == "tet4":
            mesh = check_mesh(rep, h5)
        elif kind == "mixed":
            mesh = check_mesh_mixed(rep, h5)
        elif kind == "tri3":
            mesh = check_mesh_sheet(rep, h5, kind)
        elif kind == "cloth6":
            mesh = check_mesh_cloth6(rep, h5)
        else:
            mesh = check_mesh_kind(rep, h5, kind)
        if mesh is not None:
            sheets = kind in ("tri3", "cloth6") or (kind == "mixed" and any(g["kind"] in SHEET_NODES for g in mesh["groups"]))
            stray = [k for k in SHEET_ATTRS if k in h5.attrs]
            rep.check(sheets or not stray, f"root attributes {stray} without sheet kinds")
        frames = check_frames(rep, h5, len(mesh["X"])) if mesh is not None else None
        if frames is None:
            return rep, None
        check_xdmf(rep, args.file, frames, len(mesh["X"]), len(mesh.get("tets", mesh.get("elements"))), h5, mesh)
        if args.frames is not None:
            rep.check(len(frames) == args.frames + 1, f"{len(frames)} frames stored, expected {args.frames + 1}")
        contacts = read_contacts(rep, h5, len(mesh["X"]), len(frames))
        if contacts is not None:
            check_contacts(rep, h5, mesh, contacts, frames)
        fields = read_frame_fields(rep, h5, mesh, attrs, len(frames))
        peridynamic = "sheet_model" in h5.attrs and as_str(h5.attrs["sheet_model"]) == "peridynamic"
        if peridynamic:     # the sheet energy is the rings' (elastic_pd) instead of the tri3 and bend4 terms
            opt = read_pd_options(rep, h5)
            peridynamic_ok = opt is not None and pd_mesh(rep, mesh, opt)
            if peridynamic_ok:
                mesh["pd_barrier"] = read_pd_barrier(rep, h5, mesh)
        if attrs is not None and (not peridynamic or peridynamic_ok):
            check_physics(rep, mesh, attrs, frames, args.max_relative_residual, contacts, fields)
            if args.free_fall:
                check_free_fall(rep, mesh, attrs, frames)
        if args.max_penetration is not None:
            check_penetration(rep, h5, mesh, frames, args.max_penetration)
        if args.min_sheet_gap is not None:
            gap = check_sheet_gap(rep, mesh, frames, args.min_sheet_gap)
            if not args.quiet:
                print(f"sheet gap: smallest {gap:.3e}")
        if args.max_self_penetration is not None:
            depth, flagged = check_self_penetration(rep, mesh, frames, args.max_self_penetration)
            if not args.quiet:
                print(f"self-penetration: {flagged} vertex-frames inside their own body, deepest {depth:.3e}")
        if args.patch_test:
            check_patch_test(rep, mesh, frames)
        if args.compare is not None:
            check_compare(rep, h5, args.compare, args.rtol, frames, args.compare_upto)
    return rep, frames


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.self_test:
        rep = Report()
        self_test(rep, args.element_order_data)
        if rep.failures:
            print(f"check_output: self-test: {rep.failures} failure(s)")
            return 1
        if not args.quiet:
            print(f"check_output: self-test ok ({', '.join(list(KINDS) + list(SHEET_NODES))})")
        if args.file is None:
            return 0
    rep, frames = run(args)
    if rep.failures:
        print(f"check_output: {args.file}: {rep.failures} failure(s)")
        return 1
    rel = frames[-1][1]["relative_residual"]
    if not args.quiet:
        print(f"check_output: {args.file} ok ({len(frames) - 1} frames, final relative residual {rel:.3e})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
