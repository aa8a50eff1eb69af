#!/usr/bin/python3
"""The GPBD seed's cube at high Poisson ratios (issue 19; generalized-position-based-dynamics.txt
Sec. 5.3, Table 5 "Compress", Fig. 7): stability per Poisson ratio and time per step of -solver gpbd with
2-3 GPBD iterations per step, for the log-barrier neo-Hookean model (Eq. 20, -material neohookean_log)
and the seed's Eq. 21 model (= pbng's -material neohookean, lambda_hat = lambda + mu, up to a constant:
docs/gpbd.md), both forms (Jacobi, Gauss-Seidel), on 1 rank x 2 threads and 2 ranks x 1 thread.

The cube: -scene box -res 21 -tet_split six: 21^3 = 9,261 vertices, 20^3 x 6 = 48,000 tetrahedra, the
seed's counts (the default five-tet split would give 40,000). The seed's "Compress" test on it (Table 5),
as closely as pbng's options allow: the bottom face (y = 0) clamped, the top face (y = 1) pushed down at
-bc0_velocity 0,-V,0 (V = 2 m/s), gravity -9.8 y, E = 1e5, rho = 10 (pbng's default), dt = 1e-3,
-mode dynamic, -iters 3 -rtol 0 (3 GPBD sweeps per step), -gpbd_newton_max 20 (the seed's i_N), the
default Hessian fix (the seed's QR + Gershgorin). The seed runs 2 s (2,000 steps); here FRAMES steps
(default 20: the plate travels V * FRAMES * dt = 4 cm), enough to see a blow-up at the start of a
compression but not the seed's full test.

Stability of a run (column `stable`): pbng finished every frame (its divergence check: relative residual
<= 1e6 and finite), every position finite at the end, no element inverted or flat at the end (signed
volume > 0), and max |x - X| <= 2 x the plate's travel. Time per step: mean of the frames' solver
seconds (the `seconds` attribute; under mpiexec the slowest rank's).

    /usr/bin/python3 bench/seed_gpbd/cube_stability.py [--quick] [--frames 20] [--threads 2] [--pbng PATH]
        [--velocity 2] [--nus 0.3,0.45,0.49,0.4995] [--configs both|threads|ranks]

A harsher variant (20 % compression in 20 steps), as run for docs/gpbd_solver.md:
    ... cube_stability.py --velocity 10 --nus 0.49,0.4995 --configs threads [--newton]
(--newton adds a Newton run per Poisson ratio and model, -rtol 1e-6 per step: the converged steps' min J.)

Default cost on this 2-core machine: 32 runs of 20 steps, ~14 min (shared, load 2-3). --quick: -res 5, 3 steps, < 1 min.
Results: bench/results/seed-cube_stability-<host>-<stamp>.csv.
"""
import os, sys
import numpy as np
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpbdlib as gl  # noqa: E402
sl = gl.sl

NUS = (0.3, 0.45, 0.49, 0.4995)
MATERIALS = ("neohookean_log", "neohookean")
FORMS = ("jacobi", "gs")
CONFIGS = ((1, None), (2, 1))  # (ranks, threads): 1 x --threads, 2 ranks x 1 thread
V = 2.0
DT = 1e-3


def main():
    ap = sl.parser(__doc__)
    ap.add_argument("--frames", type=int, default=20)
    ap.add_argument("--res", type=int, default=21)
    ap.add_argument("--iters", type=int, default=3)
    ap.add_argument("--velocity", type=float, default=V, help="the top face's downward speed (m/s)")
    ap.add_argument("--nus", default=",".join("%g" % n for n in NUS), help="Poisson ratios, comma-separated")
    ap.add_argument("--configs", choices=("both", "threads", "ranks"), default="both",
                    help="1 rank x --threads, 2 ranks x 1 thread, or both")
    ap.add_argument("--newton", action="store_true",
                    help="also Newton to -rtol 1e-6 per step (1 rank x --threads): the backward-Euler steps' own min J for comparison")
    a = ap.parse_args()
    configs = [c for c in CONFIGS if a.configs == "both" or (c[0] == 1) == (a.configs == "threads")]
    if a.quick:
        a.res, a.frames = 5, 3
    b = sl.Bench("cube_stability", a)
    travel = a.velocity * a.frames * DT
    rows = []
    for nu in [float(v) for v in a.nus.split(",")]:
        for mat in MATERIALS:
            for form in FORMS + (("newton",) if a.newton else ()):
                solver = (["-solver", "newton", "-iters", "50", "-rtol", "1e-6"] if form == "newton" else
                          ["-solver", "gpbd", "-gpbd_form", form, "-iters", str(a.iters), "-rtol", "0", "-gpbd_newton_max", "20"])
                args = ["-scene", "box", "-res", str(a.res), "-tet_split", "six", "-mode", "dynamic", "-dt", repr(DT),
                        "-frames", str(a.frames), "-youngs", "1e5", "-poisson", repr(nu), "-material", mat,
                        "-gravity", "0,-9.8,0", "-fix_box", "0,0,0,1,0,1", "-bc0_box", "0,1,0,1,1,1", "-bc0_velocity", "0,%g,0" % -a.velocity] + solver
                for ranks, threads in (configs if form != "newton" else CONFIGS[:1]):  # the two configurations back to back (interleaved per case)
                    r = gl.run(b, args, "%s-%s-%g-%d" % (mat, form, nu, ranks), ranks=ranks, threads=threads)
                    row = dict(nu=nu, material=mat, form=form, ranks=ranks, threads=threads or a.threads, frames=a.frames,
                               completed=0, stable=0, finite=0, inverted=-1, max_disp=None, min_J=None, last_rel_residual=None,
                               ms_per_step=None, wall_s=r["wall"], load=sl.load_average().split()[0], command=r["command"])
                    if os.path.exists(r["path"]):
                        try:
                            fr = gl.frames(r["path"])
                            st = gl.stability(r["path"], 2 * travel)
                            row.update(completed=len(fr), finite=st["finite"], inverted=st["inverted"], max_disp=st["max_disp"],
                                       min_J=st["min_J"], last_rel_residual=fr[-1]["relative_residual"] if fr else None,
                                       ms_per_step=1e3 * float(np.mean([f["seconds"] for f in fr])) if fr else None)
                            row["stable"] = int(r["ok"] and len(fr) == a.frames and st["stable"])
                        except Exception as e:  # an unreadable result: unstable
                            print("unreadable result %s: %s" % (r["path"], e))
                    if not r["ok"]:
                        print("run stopped: %s\n%s" % (r["command"], r["log"][-600:]))
                    rows.append(row)
                    print("nu %-6g %-14s %-6s %dx%d  stable %d  completed %d/%d  inverted %d  max|x-X| %s  min J %s  %s ms/step"
                          % (nu, mat, form, ranks, row["threads"], row["stable"], row["completed"], a.frames, row["inverted"],
                             sl.fmt(row["max_disp"]), sl.fmt(row["min_J"]), sl.fmt(row["ms_per_step"])), flush=True)
    sl.print_table(rows, [("nu", "nu", "%g"), ("material", "material", "%s"), ("form", "form", "%s"), ("ranks", "ranks", "%d"),
                          ("threads", "thr", "%d"), ("stable", "stable", "%d"), ("completed", "frames", "%d"), ("inverted", "inverted", "%d"),
                          ("max_disp", "max|x-X|", "%.3g"), ("min_J", "min J", "%.3g"), ("last_rel_residual", "last rel.res", "%.2g"),
                          ("ms_per_step", "ms/step", "%.0f")])
    b.head.append("# compress: bottom y=0 clamped, top y=1 at %g m/s, %d steps of dt %g (plate travel %.3g m; stable needs max|x-X| <= %.3g)"
                  % (-a.velocity, a.frames, DT, travel, 2 * travel))
    b.finish(rows)


if __name__ == "__main__":
    main()
