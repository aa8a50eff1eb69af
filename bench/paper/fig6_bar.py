#!/usr/bin/python3
"""Paper Fig. 6 / Sec. 10.4: a bar clamped at x = 0 sags under gravity (quasistatic, E = 1000, rho = 10).

Claims checked: PBD's deflection vanishes as its iteration count grows (it drops the external force in
the quasistatic limit, Sec. 6.1); PBNG converges to the equilibrium (Newton's); XPBD-QS with 10
iterations per pseudo-time step is more converged than with 1.

For each method and each iteration count N (one frame, run from the rest shape), the tip deflection
(mean y displacement of the x = L face) and the relative residual after N iterations. Methods: PBD,
PBNG (plain and Chebyshev), XPBD-QS with 1 and 10 iterations per pseudo step; Newton to 1e-12 gives
the reference. Material corotated (PBD's constraints |F - R| = 0, det F = 1 then describe a rigid bar).

  /usr/bin/python3 bench/paper/fig6_bar.py [--res 6] [--length 4] [--iters 1,10,100,1000,10000]
"""

import paperlib as pl

METHODS = {
    "pbd": ["-solver", "pbd"],
    "pbng": ["-solver", "pbng"],
    "pbng_chebyshev": ["-solver", "pbng", "-accel", "chebyshev"],
    "xpbd_qs_1": ["-solver", "xpbd_qs", "-xpbd_qs_substeps", "1"],
    "xpbd_qs_10": ["-solver", "xpbd_qs", "-xpbd_qs_substeps", "10"],
}


def tip_deflection(path):
    X, x, attrs = pl.positions(path)
    tip = X[:, 0] > X[:, 0].max() - 1e-9
    return float((x - X)[tip, 1].mean()), float(attrs["relative_residual"])


def main():
    ap = pl.arguments(__doc__.splitlines()[1])
    ap.add_argument("--res", type=int, default=6)
    ap.add_argument("--length", type=float, default=4.0)
    ap.add_argument("--iters", default="1,10,100,1000,10000")
    args = ap.parse_args()
    runner = pl.Runner(args)
    iters = [int(k) for k in args.iters.split(",")]
    scene = ["-scene", "bar_gravity", "-res", args.res, "-bar_length", args.length, "-material", "corotated", "-frames", 1]
    _, ref = runner.run("newton", scene + ["-solver", "newton", "-iters", 60, "-rtol", 1e-12])
    newton, _ = tip_deflection(ref)
    rows = [{"method": "newton", "iterations": "", "tip_deflection": newton, "relative_residual": ""}]
    print("Newton tip deflection %.6f" % newton)
    print("%-16s %8s %14s %12s" % ("method", "iters", "tip deflection", "rel.residual"))
    for name, opts in METHODS.items():
        for n in iters:
            _, out = runner.run("%s-%d" % (name, n), scene + opts + ["-iters", n])
            tip, rel = tip_deflection(out)
            rows.append({"method": name, "iterations": n, "tip_deflection": tip, "relative_residual": rel})
            print("%-16s %8d %14.6f %12.3e" % (name, n, tip, rel), flush=True)
    csv, png = pl.outputs("fig6-bar")
    pl.write_csv(csv, pl.header(runner, "paper Fig. 6: bar under gravity, tip deflection after N iterations (one frame from rest)"),
                 ["method", "iterations", "tip_deflection", "relative_residual"], rows)
    plt = pl.pyplot()
    fig, ax = plt.subplots(1, 2, figsize=(11, 4.2))
    for name in METHODS:
        pts = [(r["iterations"], r["tip_deflection"], r["relative_residual"]) for r in rows if r["method"] == name]
        ax[0].semilogx([p[0] for p in pts], [-p[1] for p in pts], "o-", label=name)
        ax[1].loglog([p[0] for p in pts], [p[2] for p in pts], "o-", label=name)
    ax[0].axhline(-newton, color="k", ls="--", label="Newton (equilibrium)")
    ax[0].set_xlabel("iterations")
    ax[0].set_ylabel("tip deflection (downwards)")
    ax[0].legend(fontsize=8)
    ax[1].set_xlabel("iterations")
    ax[1].set_ylabel("relative residual")
    pl.save_figure(fig, "Fig. 6: bar under gravity (res %d, length %g, corotated, E = 1000)" % (args.res, args.length), csv, png)


if __name__ == "__main__":
    pl.script(main)
