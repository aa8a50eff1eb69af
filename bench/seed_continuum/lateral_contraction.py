#!/usr/bin/python3
"""The continuum seed's lateral-contraction study (position-based-continuous-materials.txt, Fig. 7; issue
18): a 1 m x 1 m sheet (-scene cloth_stretch: x = 0 edge held, x = 1 edge pulled 0.2 m by t = 1 and held;
isotropic StVK membrane, E h = 1000 N/m, bending k_b = 1e-4) for nu = 0.1, 0.3, 0.499.

- Reference: Newton, quasistatic, 10 frames to relative residual 1e-10 (the converged FEM solution on
  the same mesh; the seed compares with explicit FEM instead).
- PBNG: quasistatic, Chebyshev, 10 frames to 1e-8.
- The seed's solver: -solver continuum_pbd -mode dynamic, dt = 5 ms (the seed's), 5 sweeps per step, damping
  0.02 per step, 2 s (the pull, then 1 s held to settle).
Per method: the distance of its final sheet from the reference, max and mean over the nodes (the nodal
distance bounds the Hausdorff distance between the two triangulated sheets from above; the seed reports
< 4e-4 m and < 8e-6 m against explicit FEM), and the width of the sheet at x = 0.5 (the contraction).

    /usr/bin/python3 bench/seed_continuum/lateral_contraction.py [--quick] [--threads 2] [--res 21]

Results: bench/results/seed-lateral_contraction-<host>-<stamp>.csv.
"""
import os, sys
import numpy as np
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "seed_high_order"))
import seedlib as sl  # noqa: E402


def final(path):
    r = sl.read(path)
    return r["X"], r["frames"][-1]["x"], r["frames"][-1]


def width_at_middle(X, x):
    mid = np.isclose(X[:, 0], 0.5)
    return float(x[mid, 1].max() - x[mid, 1].min())


def main():
    ap = sl.parser(__doc__)
    ap.add_argument("--res", type=int, default=21)
    a = ap.parse_args()
    b = sl.Bench("lateral_contraction", a)
    res = 11 if a.quick else a.res
    rows = []
    for nu in (0.1, 0.3, 0.499):
        base = ["-scene", "cloth_stretch", "-res", str(res), "-sheet_poisson", str(nu)]
        ref, _ = b.run(base + ["-solver", "newton", "-iters", "50", "-rtol", "1e-10"], "newton-%g" % nu)
        X, xr, _ = final(ref)
        runs = [("pbng", base + ["-accel", "chebyshev", "-iters", "20000", "-rtol", "1e-8"]),
                ("continuum_pbd", base + ["-solver", "continuum_pbd", "-mode", "dynamic", "-dt", "0.005", "-frames", "400", "-iters", "5",
                                          "-continuum_pbd_damping", "0.02"])]
        rows.append(dict(nu=nu, method="newton", max_distance=0.0, mean_distance=0.0, width_mid=width_at_middle(X, xr),
                         relative_residual=final(ref)[2]["relative_residual"]))
        for name, args in runs:
            out, _ = b.run(args, "%s-%g" % (name, nu))
            _, x, fr = final(out)
            d = np.linalg.norm(x - xr, axis=1)
            rows.append(dict(nu=nu, method=name, max_distance=float(d.max()), mean_distance=float(d.mean()), width_mid=width_at_middle(X, x),
                             relative_residual=fr["relative_residual"]))
    sl.print_table(rows, [("nu", "nu", "%g"), ("method", "method", "%s"), ("max_distance", "max dist (m)", "%.3g"),
                          ("mean_distance", "mean dist (m)", "%.3g"), ("width_mid", "width at x=0.5", "%.5f"),
                          ("relative_residual", "final rel. residual", "%.2g")])
    b.finish(rows)


if __name__ == "__main__":
    main()
