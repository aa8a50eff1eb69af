#!/usr/bin/python3
"""Time per iteration on the GPBD seed's 25 x 25 x 25 cube (issue 19; generalized-position-based-dynamics.txt
Sec. 5.3, Table 4: average frame time of a 25^3-cell stable neo-Hookean cube on a GPU, VBD 113 us,
GPBD Gauss-Seidel 629 us, GPBD Jacobi 102 us). Here on the CPU: GPBD Jacobi and GS (each with the seed's
Hessian fix, QR + Gershgorin, and with -gpbd_hessian_fix qr_when_indefinite), PBNG plain (-accel none:
the vertex-descent stand-in, PBNG's node Newton step on the incremental potential without line search)
and PBNG Chebyshev, and XPBD. Reported as ratios to PBNG plain of the same material in the same repeat
(median over repeats), not as absolute comparisons with the seed's GPU.

The cube: -scene box -res 26 -tet_split six: 26^3 = 17,576 vertices, 25^3 x 6 = 93,750 tetrahedra (the
counts of the seed's Table 2 "Cube Impact"). The step: the compress set-up of cube_stability.py (bottom
clamped, top at -2 m/s, gravity), E = 1e5, nu = 0.45, dt = 1e-3, -mode dynamic, 2 steps of 5 iterations
each (-iters 5 -rtol 0: no residual evaluated between iterations); ms per iteration = summed solver
seconds / summed iterations (the frames' `seconds` and `iterations`).

Materials: -material stable_neohookean is pbng's Smith et al. 2018 model (with the log(I_C + 1) term and
Smith's mu' = 4 mu / 3, lambda' = lambda + 5 mu / 6), NOT the seed's Eq. 21 (which is pbng's neohookean
up to a constant, docs/gpbd.md); every solver but XPBD runs both stable_neohookean and neohookean. XPBD
needs a constraint material: it runs -material neohookean only (its two constraints, the seed's Eq. 21
split), and its ratio is to PBNG plain on neohookean.

    /usr/bin/python3 bench/seed_gpbd/time_per_iteration.py [--quick] [--repeats 3] [--threads 2] [--pbng PATH]

Default cost on this 2-core machine: 13 cases x 3 repeats (repeat loop outermost, cases interleaved),
~4 min. --quick: -res 8, 1 repeat, < 1 min.
Results: bench/results/seed-time_per_iteration-<host>-<stamp>.csv (one row per case: median ms per
iteration, median ratio to PBNG plain, the seed's GPU ratios for reference).
"""
import os, statistics, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpbdlib as gl  # noqa: E402
sl = gl.sl

GPBD = ["-solver", "gpbd", "-gpbd_newton_max", "20"]
CASES = [  # name, solver args, materials
    ("pbng", ["-solver", "pbng", "-accel", "none"], ("stable_neohookean", "neohookean")),
    ("pbng_chebyshev", ["-solver", "pbng", "-accel", "chebyshev"], ("stable_neohookean", "neohookean")),
    ("gpbd_jacobi", GPBD + ["-gpbd_form", "jacobi"], ("stable_neohookean", "neohookean")),
    ("gpbd_jacobi_qr_when_indefinite", GPBD + ["-gpbd_form", "jacobi", "-gpbd_hessian_fix", "qr_when_indefinite"], ("stable_neohookean", "neohookean")),
    ("gpbd_gs", GPBD + ["-gpbd_form", "gs"], ("stable_neohookean", "neohookean")),
    ("gpbd_gs_qr_when_indefinite", GPBD + ["-gpbd_form", "gs", "-gpbd_hessian_fix", "qr_when_indefinite"], ("stable_neohookean", "neohookean")),
    ("xpbd", ["-solver", "xpbd"], ("neohookean",)),
]
# The seed's Table 4 (GPU, us per frame) as ratios to VBD (the vertex-descent method PBNG plain stands in for).
SEED = {"gpbd_gs": 629.0 / 113.0, "gpbd_jacobi": 102.0 / 113.0}


def main():
    ap = sl.parser(__doc__)
    ap.add_argument("--res", type=int, default=26)
    ap.add_argument("--iters", type=int, default=5)
    ap.add_argument("--frames", type=int, default=2)
    ap.add_argument("--poisson", type=float, default=0.45)
    a = ap.parse_args()
    if a.quick:
        a.res, a.repeats = 8, 1
    b = sl.Bench("time_per_iteration", a)
    base = ["-scene", "box", "-res", str(a.res), "-tet_split", "six", "-mode", "dynamic", "-dt", "1e-3", "-frames", str(a.frames),
            "-youngs", "1e5", "-poisson", repr(a.poisson), "-gravity", "0,-9.8,0", "-fix_box", "0,0,0,1,0,1",
            "-bc0_box", "0,1,0,1,1,1", "-bc0_velocity", "0,-2,0", "-iters", str(a.iters), "-rtol", "0"]
    ms = {}   # (case, material) -> [ms per iteration per repeat]
    cmds, loads = {}, {}
    for rep in range(a.repeats):
        for name, solver, mats in CASES:
            for mat in mats:
                r = gl.run(b, base + ["-material", mat] + solver, "%s-%s-%d" % (name, mat, rep))
                if not r["ok"]:
                    raise RuntimeError("failed: %s\n%s" % (r["command"], r["log"][-1500:]))
                fr = gl.frames(r["path"])
                v = 1e3 * sum(f["seconds"] for f in fr) / sum(f["iterations"] for f in fr)
                ms.setdefault((name, mat), []).append(v)
                cmds[(name, mat)] = r["command"]
                loads.setdefault((name, mat), []).append(os.getloadavg()[0])
                os.remove(r["path"])
                print("repeat %d  %-32s %-18s %8.2f ms/iteration  (load %.2f)" % (rep, name, mat, v, os.getloadavg()[0]), flush=True)
    rows = []
    for name, solver, mats in CASES:
        for mat in mats:
            ratios = [x / p for x, p in zip(ms[(name, mat)], ms[("pbng", mat)])]
            rows.append(dict(case=name, material=mat, ms_per_iteration=statistics.median(ms[(name, mat)]),
                             ms_min=min(ms[(name, mat)]), ms_max=max(ms[(name, mat)]),
                             ratio_to_pbng=statistics.median(ratios), seed_gpu_ratio_to_vbd=SEED.get(name),
                             load_median=statistics.median(loads[(name, mat)]), repeats=a.repeats, command=cmds[(name, mat)]))
    sl.print_table(rows, [("case", "case", "%s"), ("material", "material", "%s"), ("ms_per_iteration", "ms/iter", "%.2f"),
                          ("ms_min", "min", "%.2f"), ("ms_max", "max", "%.2f"), ("ratio_to_pbng", "/ PBNG plain", "%.2f"),
                          ("seed_gpu_ratio_to_vbd", "seed GPU / VBD", "%.2f"), ("load_median", "load", "%.2f")])
    b.finish(rows)


if __name__ == "__main__":
    main()
