#!/usr/bin/python3
"""Relative residual against iterations and wall time within one dynamic step (issue 19, "residual
against time to a common tolerance"; the GPBD seed, generalized-position-based-dynamics.txt, makes its
comparison with vertex block descent per iteration, Sec. 5.3 / Table 4, and argues Jacobi GPBD needs no
coloring): GPBD Jacobi (omega = 1 and over-relaxed, -gpbd_omega 1.5 and 1.9: the "tuned" omega is the
fastest of these), GPBD Gauss-Seidel, PBNG plain (-accel none) and Chebyshev, and pbng's Newton.

Case: -scene block_drop_dynamic -res 8 (512 nodes, 1,715 tetrahedra; neo-Hookean E = 1000, nu = 0.3,
one side clamped, gravity, -mode dynamic, the scene's dt), its first frame, every solver from the same
start (x^n = X, v = 0), each to -rtol TOL (default 1e-8) or -time_budget seconds of iterations (default
10 s). Curves from -monitor: the residual after every iteration with the cumulative wall time of the
iterations alone (residual evaluations excluded; docs/output.md, as bench/residual_time.py).
Table: iterations and seconds to relative residual 1e-2, 1e-4, 1e-6, 1e-8 (first monitored iterate at
or below; median over --repeats, configurations interleaved, repeat loop outermost).

    /usr/bin/python3 bench/seed_gpbd/residual_vs_time.py [--quick] [--repeats 2] [--threads 1] [--budget 10] [--pbng PATH]

Default cost on this 2-core machine: 7 configurations x 2 repeats, <= 10 s each, ~3 min. --quick: -res 4,
1 repeat, 2 s budget, < 1 min.
Results: bench/results/seed-residual_vs_time-<host>-<stamp>.csv (table), -curves.csv (every monitored
iterate of the last repeat), .png (relative residual against iterations and against seconds).
"""
import os, re, statistics, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpbdlib as gl  # noqa: E402
sl = gl.sl

ITER_LINE = re.compile(r"^\s+frame (\d+) iter\s+(\d+)\s+residual (\S+)\s+relative (\S+)\s+energy \S+(?:\s+(\S+) s)?")
TOLS = (1e-2, 1e-4, 1e-6, 1e-8)
GPBD = ["-solver", "gpbd", "-gpbd_newton_max", "20"]
CONFIGS = [
    ("gpbd_jacobi_w1", GPBD + ["-gpbd_form", "jacobi", "-gpbd_omega", "1"]),
    ("gpbd_jacobi_w1.5", GPBD + ["-gpbd_form", "jacobi", "-gpbd_omega", "1.5"]),
    ("gpbd_jacobi_w1.9", GPBD + ["-gpbd_form", "jacobi", "-gpbd_omega", "1.9"]),
    ("gpbd_gs", GPBD + ["-gpbd_form", "gs"]),
    ("pbng", ["-solver", "pbng", "-accel", "none"]),
    ("pbng_chebyshev", ["-solver", "pbng", "-accel", "chebyshev"]),
    ("newton", ["-solver", "newton"]),
]


def curve(log):
    """[(iteration, seconds, relative residual)] of the monitored iterates (iterate 0 at 0 s)."""
    out = []
    for line in log.splitlines():
        m = ITER_LINE.match(line)
        if m and m.group(1) == "1":
            out.append((int(m.group(2)), float(m.group(5)) if m.group(5) else 0.0, float(m.group(4))))
    return out


def first_at(c, tol):
    for it, s, rel in c:
        if rel <= tol:
            return it, s
    return None, None


def main():
    ap = sl.parser(__doc__)
    ap.set_defaults(threads=1, repeats=2)
    ap.add_argument("--res", type=int, default=8)
    ap.add_argument("--tol", type=float, default=1e-8)
    ap.add_argument("--budget", type=float, default=10.0, help="seconds of iterations per run (-time_budget)")
    a = ap.parse_args()
    if a.quick:
        a.res, a.repeats, a.budget = 4, 1, 2.0
    b = sl.Bench("residual_vs_time", a)
    base = ["-scene", "block_drop_dynamic", "-res", str(a.res), "-frames", "1", "-monitor", "-iters", "1000000",
            "-rtol", repr(a.tol), "-time_budget", repr(a.budget)] + sl.NO_DIVERGENCE
    hits = {}    # (name, tol) -> [(iterations, seconds)]
    curves, cmds, loads = {}, {}, {}
    for rep in range(a.repeats):
        for name, solver in CONFIGS:
            r = gl.run(b, base + solver, "%s-%d" % (name, rep))
            if not r["ok"]:
                raise RuntimeError("failed: %s\n%s" % (r["command"], r["log"][-1500:]))
            c = curve(r["log"])
            curves[name], cmds[name] = c, r["command"]
            loads.setdefault(name, []).append(os.getloadavg()[0])
            for tol in TOLS:
                hits.setdefault((name, tol), []).append(first_at(c, tol))
            print("repeat %d  %-18s %6d iterations  %.3g s  final relative residual %.2e  (load %.2f)"
                  % (rep, name, c[-1][0], c[-1][1], c[-1][2], os.getloadavg()[0]), flush=True)
    rows = []
    for name, _ in CONFIGS:
        row = dict(config=name, iterations=curves[name][-1][0], seconds=curves[name][-1][1], final_relative=curves[name][-1][2])
        for tol in TOLS:
            h = hits[(name, tol)]
            row["iters_to_%g" % tol] = sl.median([x[0] for x in h])
            row["s_to_%g" % tol] = sl.median([x[1] for x in h])
        row.update(load_median=statistics.median(loads[name]), command=cmds[name])
        rows.append(row)
    cols = [("config", "config", "%s")]
    for tol in TOLS:
        cols += [("iters_to_%g" % tol, "it %g" % tol, "%g"), ("s_to_%g" % tol, "s %g" % tol, "%.3g")]
    sl.print_table(rows, cols + [("final_relative", "final", "%.1e")])
    flat = [(n, it, s, rel) for n, _ in CONFIGS for it, s, rel in curves[n]]

    def plot(base_name):
        plt = sl.pyplot()
        fig, ax = plt.subplots(1, 2, figsize=(11, 4.2))
        for n, _ in CONFIGS:
            c = curves[n]
            ax[0].semilogy([x[0] for x in c], [x[2] for x in c], label=n)
            ax[1].semilogy([x[1] for x in c], [x[2] for x in c], label=n)
        ax[0].set_xscale("symlog", linthresh=10)
        ax[0].set_xlabel("iterations (sweeps; Newton: Newton steps)")
        ax[1].set_xscale("log")
        ax[1].set_xlabel("seconds of iterations (%d thread%s)" % (a.threads, "s" if a.threads > 1 else ""))
        for x in ax:
            x.set_ylabel("relative residual")
            x.grid(True, which="both", alpha=0.3)
        ax[1].legend(fontsize=8)
        fig.suptitle("block_drop_dynamic -res %d, frame 1 (dynamic): GPBD vs PBNG vs Newton" % a.res)
        fig.tight_layout()
        fig.savefig(base_name + ".png", dpi=110)

    b.finish(rows, curves=flat, curve_format=("config,iteration,seconds,relative_residual", "%s,%d,%.6g,%.6e"), plot=plot)


if __name__ == "__main__":
    main()
