#!/usr/bin/python3
"""The seed's compression test (xpbd-high-order-elements.txt, Sec. 5.1 "Compression", Fig. 3, Table 3,
Table 4; issue 16): a unit cube (E = 1e5, rho = 1000, neo-Hookean, no gravity) crushed by half, for
nu = 0.49, 0.499, 0.4999. Here y is the vertical: the bottom face y = 0 is clamped, the top face y = 1
moved down by 0.5 (both faces held laterally) in 10 quasistatic frames. Meshes: the seed's "biased"
split (-tet_split six: each cell two prisms of three tetrahedra, one diagonal direction everywhere) in
P1, P2, P3 at the same vertex count (13^3 = 2 197 vertices: 12^3, 6^3, 4^3 cells; the seed: 2 331 P1
vertices); the reference: Q2 hexahedra (9^3 cells, 19^3 nodes) solved by Newton to 1e-10 in every frame.

Measured on the mid-height plane Y = 0.5 (rest coordinates), in the last frame:
- error: displacement vs the reference's at the 7 x 7 grid of points (i/6, 0.5, k/6), nodes of every
  mesh: RMS and max over the 49 points;
- asymmetry: the exact solution is symmetric under x -> 1 - x and z -> 1 - z; for every node of the
  plane and both mirrors S, |u(p) - S u(S p)|, max over the plane's nodes (the biased split breaks the
  symmetry; a mesh that behaves well keeps it);
- for P1 locking the error should grow with nu; for P2 and P3 it should not.
Crushed by half, the cube is past a bifurcation: the reference itself leaves the symmetric state
(sideways buckling; its mid-plane asymmetry grows from ~1e-10 to ~0.1 within a few frames), so which
way a mesh buckles decides its error there. Every metric is therefore given twice: in the last frame
(crush 0.5, the seed's setting) and in the last frame at which the reference is still symmetric
(asymmetry < 1e-6; "symmetric" state), where the comparison is well posed.

Solvers per mesh: Newton (-rtol 1e-10: the mesh's own FEM solution), PBNG (multilevel 3, p-multigrid
first for P2/P3; up to 100 cycles per frame to relative residual 1e-8; the last frame's relative
residual of the run is reported) and the seed's XPBD (stable split, 50 substeps at 60 frames/s) at rest: pbng's
xpbd_ho has no damping (bending.py shows the beam swinging without end), and zero-velocity pseudo
steps from the undeformed cube converge slowly (4 000 sweeps of h = 1/3000 s leave 3e-3 of the first
frame's residual on the 6^3 P2 cube at nu = 0.49), so XPBD is started from the mesh's Newton equilibrium
and run 3 simulated seconds of pseudo steps of the seed's substep length h = 1/3000 s: a rest state of
the seed's loop is exactly a fixed point of these steps (seedlib.xpbd_at_rest_args). Its "moved"
column is the largest move of a mid-plane node over the last second (0 = at rest); it is run from both
states' Newton frames. The relative
residual of XPBD's state is its residual over that of Newton's first frame (r0 of the loading).

    /usr/bin/python3 bench/seed_high_order/compression.py [--quick] [--threads 2]

Results: bench/results/seed-compression-<host>-<stamp>.csv (+ .png: RMS error and asymmetry vs nu, both states).
"""
import sys
import numpy as np
import seedlib as sl

POISSON = ["0.49", "0.499", "0.4999"]
FRAMES, DT = 10, 0.1
CRUSH = ["-scene", "box", "-youngs", "1e5", "-material", "neohookean", "-fix_box", "0,0,0,1,0,1",
         "-bc0_box", "0,1,0,1,1,1", "-bc0_velocity", "0,%r,0" % (-0.5 / (FRAMES * DT))]
LOADING = ["-dt", str(DT), "-frames", str(FRAMES)]
SEED = ["-density", "1000"]  # the seed's XPBD only: without gravity the quasistatic FEM has no load from the masses
PBNG = ["-multilevel", "3", "-iters", "100", "-rtol", "1e-8", "-residual_every", "10"]
REST_SECONDS = 3
# (label, element, cells per axis): 13^3 vertices each (quick: 7^3)
MESHES = [("P1", "tet4", 12), ("P2", "tet10", 6), ("P3", "tet20", 4)]
GRID = 6  # the common points (i/GRID, 0.5, k/GRID)
SYMMETRIC = 1e-6  # mid-plane asymmetry below which the reference counts as symmetric


def mesh_args(element, n, poisson):
    split = ["-tet_split", "six"] if element.startswith("tet") else []
    return CRUSH + ["-poisson", poisson, "-element", element, "-cells", "%d,%d,%d" % (n, n, n)] + split


def midplane(path, frame=-1):
    """Rest positions and displacements in `frame` of the nodes on Y = 0.5, and the run's result."""
    r = sl.read(path)
    X = r["X"]
    on = np.nonzero(np.abs(X[:, 1] - 0.5) < 1e-9)[0]
    return X[on], r["frames"][frame]["x"][on] - X[on], r


def at(P, U, points):
    """U at the given rest points (each must be a node of the plane)."""
    return np.array([U[sl.node_at(P, p)] for p in points])


def asymmetry(P, U):
    """max |u(p) - S u(S p)| over the plane's nodes and the mirrors x -> 1-x, z -> 1-z."""
    worst = 0.0
    for axis in (0, 2):
        flip = np.ones(3)
        flip[axis] = -1
        Q = P.copy()
        Q[:, axis] = 1 - Q[:, axis]
        worst = max(worst, float(np.max(np.linalg.norm(U - flip * at(P, U, Q), axis=1))))
    return worst


def measure(path, frame, points, ref_u):
    P, U, r = midplane(path, frame)
    e = np.linalg.norm(at(P, U, points) - ref_u, axis=1)
    mid = np.nonzero(np.abs(r["X"][:, 1] - 0.5) < 1e-9)[0]
    return dict(elements=r["elements"], nodes=len(r["X"]), rms_error=float(np.sqrt(np.mean(e**2))), max_error=float(e.max()),
                asymmetry=asymmetry(P, U), max_midplane_displacement=float(np.max(np.linalg.norm(U, axis=1))),
                moved=float(np.max(np.linalg.norm(r["frames"][-1]["x"][mid] - r["frames"][-2]["x"][mid], axis=1))))


def symmetric_frame(ref_path):
    """The last frame up to which the reference's mid-plane stays symmetric (asymmetry < SYMMETRIC)."""
    asym = [asymmetry(*midplane(ref_path, k)[:2]) for k in range(FRAMES + 1)]
    k = next((k - 1 for k in range(FRAMES + 1) if asym[k] >= SYMMETRIC), FRAMES)
    return k, asym


def run_nu(b, poisson, meshes, ref_cells, rows):
    ref_path, ref_cmd = b.cached(mesh_args("hex27", ref_cells, poisson) + LOADING + sl.NEWTON, "ref-%s" % poisson)
    k_sym, asym = symmetric_frame(ref_path)
    states = [(k_sym, "symmetric"), (FRAMES, "final")]
    points = [(i / GRID, 0.5, k / GRID) for i in range(GRID + 1) for k in range(GRID + 1)]
    ref_u = {k: at(*midplane(ref_path, k)[:2], points) for k, _ in states}
    b.head.append("# reference nu %s: %s; mid-plane asymmetry per frame %s" % (poisson, " ".join(ref_cmd), " ".join("%.1e" % v for v in asym)))
    print("nu %s: reference symmetric up to frame %d (crush %.2f), mid-plane asymmetry in the last frame %.2e" % (poisson, k_sym, crush(k_sym), asym[-1]))
    for label, element, n in meshes:
        for s in sl.three_solvers(b, mesh_args(element, n, poisson), LOADING, PBNG, "%s-%s" % (label, poisson), REST_SECONDS, (k_sym, FRAMES),
                                  seed_args=SEED):
            for k, state in states:
                if "from_frame" in s and s["from_frame"] != k:
                    continue
                row = dict(poisson=poisson, state=state, crush=crush(k), mesh=label, element=element, cells=n, method=s["method"],
                           **measure(s["path"], -1 if "from_frame" in s else k, points, ref_u[k]),
                           last_relative_residual=s["relative_residual"], seconds=s["seconds"], command=" ".join(s["command"]))
                if "from_frame" not in s:
                    row["moved"] = None  # a loading frame's move, not a rest test
                rows.append(row)
                print("nu %-6s crush %.2f %s %-16s %6d el %6d nodes  RMS %.3e  max %.3e  asym %.3e  (max |u| %.3f, rel. res. %.1e, "
                      "last second moved %s, %.1f s)" % (poisson, row["crush"], label, s["method"], row["elements"], row["nodes"], row["rms_error"],
                                                         row["max_error"], row["asymmetry"], row["max_midplane_displacement"],
                                                         row["last_relative_residual"], sl.fmt(row["moved"], "%.1e"), row["seconds"]), flush=True)


def crush(k):
    return 0.5 * k / FRAMES


def plot(base, rows):
    plt = sl.pyplot()
    fig, axes = plt.subplots(2, 2, figsize=(12, 9))
    for j, state in enumerate(("symmetric", "final")):
        for key, ax, title in (("rms_error", axes[j][0], "mid-plane RMS displacement error vs Q2 reference"),
                               ("asymmetry", axes[j][1], "mid-plane asymmetry (max |u(p) - S u(Sp)|)")):
            for mesh, method in dict.fromkeys((r["mesh"], r["method"]) for r in rows):
                pts = [r for r in rows if (r["mesh"], r["method"], r["state"]) == (mesh, method, state)]
                ax.semilogy([float(r["poisson"]) for r in pts], [max(r[key], 1e-16) for r in pts],
                            {"newton": "o-", "pbng": "s--", "xpbd_ho_at_rest": "^:"}[method], label="%s %s" % (mesh, method))
            ax.set_xscale("logit"), ax.set_xlabel("Poisson ratio"), ax.legend(fontsize=6)
            ax.set_title("%s (%s)" % (title, "last frame the reference is symmetric" if state == "symmetric" else "crushed by half"), fontsize=8)
    fig.tight_layout(), fig.savefig(base + ".png", dpi=120)


def main():
    ap = sl.parser(__doc__)
    ap.set_defaults(repeats=1)
    ap.add_argument("--reference-cells", type=int, default=9, help="Q2 reference cells per axis (2 x cells a multiple of %d)" % GRID)
    a = ap.parse_args()
    meshes = MESHES
    if a.quick:
        meshes, a.reference_cells = [(l, e, n // 2) for l, e, n in MESHES], 3
    b = sl.Bench("compression", a)
    rows = []
    for poisson in POISSON:
        run_nu(b, poisson, meshes, a.reference_cells, rows)
    for state in ("symmetric", "final"):
        print("\nP1 locking: mid-plane RMS error (Newton, the mesh's FEM solution), %s state, at nu = %s:" % (state, " / ".join(POISSON)))
        for label, _, _ in meshes:
            print("  %s: %s" % (label, " / ".join("%.3e" % r["rms_error"] for r in rows
                                                  if (r["mesh"], r["method"], r["state"]) == (label, "newton", state))))
    b.finish(rows, ["poisson", "state", "crush", "mesh", "element", "cells", "method", "elements", "nodes", "rms_error", "max_error",
                    "asymmetry", "max_midplane_displacement", "last_relative_residual", "moved", "seconds", "command"],
             plot=lambda base: plot(base, rows))


if __name__ == "__main__":
    sys.exit(main())
