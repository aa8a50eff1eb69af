#!/usr/bin/python3
"""The seed's torsion test (xpbd-high-order-elements.txt, Sec. 5.1 "Torsion", Fig. 4 and 5, Table 3,
Table 4; issue 16): a 4 x 1 x 1 beam (E = 1 MPa, nu = 0.35, rho = 1000, neo-Hookean, no gravity), the
end x = 0 clamped, the end x = 4 turned by 180 degrees about the beam's axis (y = z = 0.5) in 18
quasistatic frames of 10 degrees. Meshes as Table 4: P1 16x4x4 cells, P2 8x2x2, P3 4x2x2, each
biased (-tet_split six: 1 536 / 192 / 96 elements) and unbiased (five: 1 280 / 160 / 80), and Q1
16x4x4, Q2 8x2x2 hexahedra; reference: Q2 24x6x6 solved by Newton to 1e-10 in every frame (the seed:
Q1 16x32x32 by semi-explicit Euler).

Metric (the seed's Fig. 5): for every cross-section x = const that holds nodes of the mesh, its angle
of rotation is the mean over the nodes on its boundary ring (|y - 0.5| or |z - 0.5| = 0.5 at rest) of
the angle between (Y - 0.5, Z - 0.5) at rest and (y - 0.5, z - 0.5) in the last frame; its deviation
d(x) is that angle minus the linear interpolation 180 x / 4 degrees (taken in (-180, 180] per node,
so the half turn's wrap-around does not matter). Reported per mesh and solver: max over the sections
of |d(x) - d_ref(x)| (the reference has a section at every x of the meshes), and max |d| for scale.

Solvers per mesh (seedlib.three_solvers): Newton (the mesh's own FEM solution), PBNG (tetrahedra:
multilevel 3, p-multigrid first; hexahedra: single-level with SOR, multilevel being tetrahedral
only; up to 100 / 400 iterations per frame to relative residual 1e-8) and the seed's XPBD (stable
split, 50 substeps at 60 frames/s) at rest, started from Newton's equilibrium of the mesh (why:
compression.py's docstring).

    /usr/bin/python3 bench/seed_high_order/torsion.py [--quick] [--threads 2]

Results: bench/results/seed-torsion-<host>-<stamp>.csv (+ -curves.csv with d(x) per mesh, + .png).
"""
import math, sys
import numpy as np
import seedlib as sl

FRAMES, DT = 18, 0.1
BEAM = ["-scene", "bar_gravity", "-gravity", "0,0,0", "-youngs", "1e6", "-poisson", "0.35",
        "-material", "neohookean", "-bc0_box", "4,0,0,4,1,1", "-bc0_axis", "1,0,0", "-bc0_center", "4,0.5,0.5",
        "-bc0_rotation_rate", repr(math.pi / (FRAMES * DT))]
LOADING = ["-dt", str(DT), "-frames", str(FRAMES)]
SEED = ["-density", "1000"]  # the seed's XPBD only: without gravity the quasistatic FEM has no load from the masses
PBNG_TET = ["-multilevel", "3", "-iters", "100", "-rtol", "1e-8", "-residual_every", "10"]
PBNG_HEX = ["-accel", "sor", "-iters", "400", "-rtol", "1e-8", "-residual_every", "10"]
REST_SECONDS = 3
# (label, element, cells, split)
MESHES = [("P1 biased", "tet4", "16,4,4", "six"), ("P2 biased", "tet10", "8,2,2", "six"), ("P3 biased", "tet20", "4,2,2", "six"),
          ("P1 unbiased", "tet4", "16,4,4", "five"), ("P2 unbiased", "tet10", "8,2,2", "five"),
          ("P3 unbiased", "tet20", "4,2,2", "five"), ("Q1", "hex8", "16,4,4", None), ("Q2", "hex27", "8,2,2", None)]
QUICK = {"P1 biased", "P2 biased", "Q2"}


def deviation(path):
    """{x: d(x) in degrees} over the sections holding nodes (last frame)."""
    r = sl.read(path)
    X, x = r["X"], r["frames"][-1]["x"]
    ring = np.maximum(np.abs(X[:, 1] - 0.5), np.abs(X[:, 2] - 0.5)) > 0.5 - 1e-9
    rest = np.arctan2(X[:, 2] - 0.5, X[:, 1] - 0.5)
    turned = np.arctan2(x[:, 2] - 0.5, x[:, 1] - 0.5)
    d = {}
    for xs in np.unique(np.round(X[ring, 0], 9)):
        on = ring & (np.abs(X[:, 0] - xs) < 1e-9)
        lin = math.pi * xs / 4
        delta = np.angle(np.exp(1j * (turned[on] - rest[on] - lin)))  # wrapped to (-pi, pi]
        d[float(xs)] = math.degrees(float(np.mean(delta)))
    return d, r


def compare(d, ref):
    diff = []
    for xs, v in d.items():
        k = min(ref, key=lambda q: abs(q - xs))
        if abs(k - xs) > 1e-9:
            raise RuntimeError("the reference has no section at x = %g" % xs)
        diff.append(abs(v - ref[k]))
    return max(diff)


def plot(base, curves):
    plt = sl.pyplot()
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.5), sharey=True)
    for ax, method in zip(axes, ("newton", "pbng", "xpbd_ho_at_rest")):
        for label in dict.fromkeys(c[0] for c in curves if c[1] in (method, "reference")):
            pts = [c for c in curves if c[0] == label and c[1] in (method, "reference")]
            ax.plot([p[2] for p in pts], [p[3] for p in pts], "k-" if label == "reference" else "o-" if "unbiased" in label else
                    "s--" if "biased" in label else "^:", label=label, ms=3)
        ax.set_xlabel("x"), ax.set_title(method, fontsize=9), ax.legend(fontsize=6)
    axes[0].set_ylabel("section angle - linear interpolation [deg]")
    fig.tight_layout(), fig.savefig(base + ".png", dpi=120)


def main():
    ap = sl.parser(__doc__)
    ap.set_defaults(repeats=1)
    ap.add_argument("--reference-cells", default="24,6,6", help="cells of the Q2 reference (x cells a multiple of 12)")
    a = ap.parse_args()
    meshes = [m for m in MESHES if m[0] in QUICK] if a.quick else MESHES
    if a.quick:
        a.reference_cells = "24,2,2"
    b = sl.Bench("torsion", a)
    ref_path, ref_cmd = b.cached(BEAM + ["-element", "hex27", "-cells", a.reference_cells] + LOADING + sl.NEWTON, "reference")
    ref, _ = deviation(ref_path)
    b.head.append("# reference: %s" % " ".join(ref_cmd))
    curves = [("reference", "reference", xs, v) for xs, v in sorted(ref.items())]
    print("reference: Q2 %s, max |d| %.3f deg" % (a.reference_cells, max(abs(v) for v in ref.values())))
    rows = []
    for label, element, cells, split in meshes:
        args = BEAM + ["-element", element, "-cells", cells] + (["-tet_split", split] if split else [])
        for s in sl.three_solvers(b, args, LOADING, PBNG_TET if split else PBNG_HEX, label, REST_SECONDS, seed_args=SEED):
            d, r = deviation(s["path"])
            curves += [(label, s["method"], xs, v) for xs, v in sorted(d.items())]
            row = dict(mesh=label, element=element, cells=cells, split=split or "-", method=s["method"], elements=r["elements"],
                       nodes=len(r["X"]), max_deviation_vs_reference_deg=compare(d, ref), max_abs_deviation_deg=max(abs(v) for v in d.values()),
                       last_relative_residual=s["relative_residual"], seconds=s["seconds"], command=" ".join(s["command"]))
            rows.append(row)
            print("%-12s %-16s %5d el %5d nodes  max |d - d_ref| %7.3f deg  max |d| %7.3f deg  (rel. res. %.1e, %.1f s)"
                  % (label, s["method"], row["elements"], row["nodes"], row["max_deviation_vs_reference_deg"], row["max_abs_deviation_deg"],
                     row["last_relative_residual"], row["seconds"]), flush=True)
    b.finish(rows, None, curves, ("mesh,method,x,deviation_deg", "%s,%s,%.6g,%.6g"), lambda base: plot(base, curves))


if __name__ == "__main__":
    sys.exit(main())
