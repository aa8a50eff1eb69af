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

Forces and energy.  Lumped mass m_i = sum_{e ni i} rho V_e / 4, f_ext_i = m_i g,
    f_int_i = -sum_e V_e P_e grad N_i^e.
    Weak constraints (/constraints/weak/, optional): C_c = sum_j a_j x_j over the
    row's nodes (signed weights a_j), energy 1/2 C^T K C, force -a_j K C on node j.
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

Usage:
  check_output.py FILE.h5 [--max-relative-residual R] [--frames F]
                  [--patch-test] [--free-fall] [--compare OTHER.h5 --rtol T] [--quiet]
Exit 0 with one summary line when every check passes; otherwise every failure
is printed as "FAIL: ..." and the exit status is 1.
"""

import argparse
import os
import re
import sys
import xml.etree.ElementTree as ET

import h5py
import numpy as np

MATERIALS = ("corotated", "neohookean", "stable_neohookean")
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
    X = check_dataset(rep, h5, "mesh/rest_positions", np.float64, (None, 3))
    if X is None:
        return None
    n = X.shape[0]
    tets = check_dataset(rep, h5, "mesh/tetrahedra", np.int64, (None, 4))
    fixed = check_dataset(rep, h5, "mesh/fixed_nodes", np.int64, (None,))
    color = check_dataset(rep, h5, "mesh/color", np.int32, (n,))
    part = check_dataset(rep, h5, "mesh/partition", np.int32, (n,))
    if tets is None or fixed is None:
        return None
    ok = rep.check(np.all(np.isfinite(X)), "rest_positions not finite")
    ok &= rep.check(tets.shape[0] > 0, "no tetrahedra")
    ok &= rep.check(tets.size == 0 or (tets.min() >= 0 and tets.max() < n),
                    f"tetrahedra indices outside [0, {n})")
    rep.check(fixed.size == 0 or (fixed.min() >= 0 and fixed.max() < n), f"fixed_nodes outside [0, {n})")
    rep.check(np.all(np.diff(fixed) > 0), "fixed_nodes not sorted and unique")
    if not ok:
        return None
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
            "grad_norm": np.sqrt(np.einsum("ejk,ejk->ej", grad, grad)),
            "Dm_inv_norm": np.sqrt(np.einsum("ejk,ejk->e", Dm_inv, Dm_inv))}


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
        frames.append((x, attrs))
    t = np.array([a["time"] for _, a in frames])
    rep.check(np.all(np.diff(t) > 0), f"frame times not increasing: {t}")
    return frames


def check_xdmf(rep, path, frames, n, m):
    """The .xdmf beside the file: parses, one grid per frame, references the h5 basename."""
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
    rep.check(f"{base}:/mesh/tetrahedra" in text, f"{xpath}: no reference to {base}:/mesh/tetrahedra")
    rep.check(f'NumberOfElements="{m}"' in text, f"{xpath}: NumberOfElements is not {m}")
    rep.check(f'Dimensions="{n} 3"' in text, f"{xpath}: no '{n} 3' geometry dimensions")


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


def stress(material, F, mu, lam):
    """Energy density Psi [M] and first Piola-Kirchhoff stress P [M,3,3] (see module doc)."""
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
    return {"nodes": nodes, "weights": w, "K": Ks} if ok else None


def weak_terms(weak, x):
    """Weak-constraint energy, nodal forces and per-node round-off scale."""
    n = len(x)
    if weak is None:
        return 0.0, np.zeros((n, 3)), np.zeros(n)
    idx = np.maximum(weak["nodes"], 0)
    a = weak["weights"]
    C = np.einsum("cj,cjd->cd", a, x[idx])
    KC = np.einsum("cij,cj->ci", weak["K"], C)
    energy = 0.5 * float(np.einsum("ci,ci->", C, KC))
    fj = -a[:, :, None] * KC[:, None, :]
    f = np.zeros((n, 3))
    for d in range(3):
        f[:, d] = np.bincount(idx.reshape(-1), weights=fj[:, :, d].reshape(-1), minlength=n)
    # C is a difference of terms of size sum_j |a_j| |x_j|: its round-off, times |K|, times |a_j|
    scale_c = np.abs(weak["K"]).sum(axis=(1, 2)) * np.einsum("cj,cjd->c", np.abs(a), np.abs(x[idx]))
    size = np.abs(a) * scale_c[:, None]
    mag = np.bincount(idx.reshape(-1), weights=size.reshape(-1), minlength=n)
    return energy, f, mag


def lumped_mass(mesh, rho):
    """m_i = sum over tets containing i of rho V / 4."""
    w = np.repeat(rho * mesh["vol"] / 4.0, 4)
    return np.bincount(mesh["tets"].reshape(-1), weights=w, minlength=len(mesh["X"]))


def elastic(mesh, x, material, mu, lam):
    """Elastic energy sum V Psi, nodal f_int, per-node round-off scale, sum V mu |F|^2.

    The round-off scale of node i is
        sum_e V_e (mu + |lambda|)(|F_e| + |cof F_e|)(1 + max|x| |Dm_e^-1|) |grad N_i^e|:
    the size of the individual stress terms that cancel in P (P(I) = 0 is a
    difference of O(mu) terms, so it is not zero at the rest state) times the
    cancellation factor of Ds = x_j - x_0 (|x|/h)."""
    tets, Dm_inv, vol = mesh["tets"], mesh["Dm_inv"], mesh["vol"]
    F = rest_shape(x, tets) @ Dm_inv                       # Ds Dm^-1
    psi, P, I1, C = stress(material, F, mu, lam)
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


def recompute(mesh, attrs, frames, k, mass):
    """(residual, energy, residual floor scale, energy scale) of frame k (frame 0: no inertia)."""
    mu, lam = lame(attrs)
    g = attrs["gravity"]
    x = frames[k][0]
    W, f_int, mag, wscale = elastic(mesh, x, attrs["material"], mu, lam)
    Wc, f_wc, mag_wc = weak_terms(mesh["weak"], x)
    f_ext = mass[:, None] * g[None, :]
    f = f_int + f_wc + f_ext
    gx = mass * (x @ g)
    energy = W + Wc - gx.sum()
    scale_n = mag + mag_wc + np.linalg.norm(f_ext, axis=1)
    escale = abs(energy) + wscale + Wc + np.abs(gx).sum()
    if attrs["mode"] == "dynamic" and k >= 1:
        t = [a["time"] for _, a in frames]
        dt = t[k] - t[k - 1]
        xp = frames[k - 1][0]
        v = (xp - frames[k - 2][0]) / (t[k - 1] - t[k - 2]) if k >= 2 else np.zeros_like(xp)
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


def check_physics(rep, mesh, attrs, frames, max_rel):
    """Recomputed residual and energy of every frame against the stored attributes.

    Frame 0 (the initial state) is checked too, without an inertia term; the
    --max-relative-residual bound applies to frames >= 1 only."""
    mass = lumped_mass(mesh, attrs["density"])
    tag = f"{attrs['material']}/{attrs['mode']}"
    for k in range(len(frames)):
        a = frames[k][1]
        r, E, fscale, escale = recompute(mesh, attrs, frames, k, mass)
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


def check_compare(rep, h5, other_path, rtol, frames):
    """Same mesh (rest_positions, tetrahedra, fixed_nodes exactly) and positions within rtol."""
    try:
        other = h5py.File(other_path, "r")
    except OSError as err:
        rep.fail(f"compare: cannot open {other_path}: {err}")
        return
    with other:
        for path in ("mesh/rest_positions", "mesh/tetrahedra", "mesh/fixed_nodes"):
            ok = path in other and other[path].shape == h5[path].shape and np.array_equal(other[path][()], h5[path][()])
            rep.check(ok, f"compare: {path} differs from {other_path}")
        names = frame_names(other)
        if not rep.check(len(names) == len(frames), f"compare: {len(names)} frames in {other_path}, {len(frames)} here"):
            return
        for k, (x, a) in enumerate(frames):
            y = other[f"frames/{names[k]}/positions"][()]
            if not rep.check(y.shape == x.shape, f"compare: frame {k:06d} shape {y.shape} vs {x.shape}"):
                continue
            diff = np.abs(x - y).max() / max(np.abs(x).max(), np.finfo(float).tiny)
            rep.check(diff <= rtol, f"compare: frame {k:06d} positions differ by {diff:.3e} (relative) > {rtol:.3e}")


# ----------------------------------------------------------------------------

def parse_args(argv):
    p = argparse.ArgumentParser(description="Independent checker of pbng HDF5 output.")
    p.add_argument("file")
    p.add_argument("--max-relative-residual", type=float, default=None)
    p.add_argument("--frames", type=int, default=None, help="expected number of frames after frame 0")
    p.add_argument("--patch-test", action="store_true")
    p.add_argument("--free-fall", action="store_true")
    p.add_argument("--compare", default=None)
    p.add_argument("--rtol", type=float, default=None)
    p.add_argument("--quiet", action="store_true", help="print nothing on success")
    args = p.parse_args(argv)
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
        mesh = check_mesh(rep, h5)
        frames = check_frames(rep, h5, len(mesh["X"])) if mesh is not None else None
        if frames is None:
            return rep, None
        check_xdmf(rep, args.file, frames, len(mesh["X"]), len(mesh["tets"]))
        if args.frames is not None:
            rep.check(len(frames) == args.frames + 1, f"{len(frames)} frames stored, expected {args.frames + 1}")
        if attrs is not None:
            check_physics(rep, mesh, attrs, frames, args.max_relative_residual)
            if args.free_fall:
                check_free_fall(rep, mesh, attrs, frames)
        if args.patch_test:
            check_patch_test(rep, mesh, frames)
        if args.compare is not None:
            check_compare(rep, h5, args.compare, args.rtol, frames)
    return rep, frames


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
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
