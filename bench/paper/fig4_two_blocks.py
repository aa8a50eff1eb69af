#!/usr/bin/python3
"""Paper Fig. 4 / Sec. 10.3: two blocks hanging (scene two_blocks_hanging: the upper block clamped at its
top, the lower one bound beneath it by weak constraints k = 1e8 across a one-cell gap; E = 1000,
rho = 10, gravity -9.8 y, quasistatic).

Claims checked: PBNG converges; XPBD-QS fails with either order: elastic constraints first (the paper's
XPBD-QS) over-stretches the lower block's top layer, weak constraints first ("flipped") leaves a gap.
Methods: PBNG (Chebyshev, with its weak-constraint blocks, the default), PBNG node-only (-weak_blocks 0,
the paper's algorithm as written), XPBD-QS elastic_first and weak_first; Newton (LU) is the reference.

Per method: the relative residual after every iteration (-monitor), and at the end the distance to
Newton's equilibrium, the largest binding gap and the stretch of the lower block's top layer.

  /usr/bin/python3 bench/paper/fig4_two_blocks.py [--res 6] [--iters 1000]
"""

import numpy as np

import paperlib as pl

METHODS = {
    "pbng_chebyshev": ["-solver", "pbng", "-accel", "chebyshev"],
    "pbng_node_only": ["-solver", "pbng", "-accel", "chebyshev", "-weak_blocks", "0"],
    "xpbd_qs_elastic_first": ["-solver", "xpbd_qs", "-xpbd_order", "elastic_first"],
    "xpbd_qs_weak_first": ["-solver", "xpbd_qs", "-xpbd_order", "weak_first"],
}


def measures(path, reference):
    """Distance to the reference, largest gap across a binding, top-layer stretch of the lower block."""
    import h5py
    X, x, attrs = pl.positions(path)
    with h5py.File(path, "r") as f:
        bound = f["constraints/weak/nodes"][:, :2]
    lower_top, upper_bottom = bound[:, 0], bound[:, 1]
    gap = float(np.linalg.norm(x[upper_bottom] - x[lower_top], axis=1).max())
    h = float(X[upper_bottom[0], 1] - X[lower_top[0], 1])  # the one-cell gap = the cell size
    below = np.array([np.argmin(np.linalg.norm(X - (X[i] - [0, h, 0]), axis=1)) for i in lower_top])
    stretch = float(((x[lower_top, 1] - x[below, 1]) / h).max())  # top cell layer height / rest height
    dist = float(np.abs(x - reference).max()) if reference is not None else 0.0
    return dist, gap, stretch, float(attrs["relative_residual"])


def main():
    ap = pl.arguments(__doc__.splitlines()[1])
    ap.add_argument("--res", type=int, default=6)
    ap.add_argument("--iters", type=int, default=1000)
    args = ap.parse_args()
    runner = pl.Runner(args)
    scene = ["-scene", "two_blocks_hanging", "-res", args.res, "-frames", 1]
    _, ref = runner.run("newton", scene + ["-solver", "newton", "-newton_pc_type", "lu", "-iters", 30, "-rtol", 1e-14])
    reference = pl.positions(ref)[1]
    _, gap_n, stretch_n, _ = measures(ref, None)
    curves, summary = [], [{"method": "newton", "distance_to_newton": 0.0, "largest_gap": gap_n, "top_layer_stretch": stretch_n}]
    print("%-22s %12s %12s %12s %12s" % ("method", "rel.resid.", "to Newton", "largest gap", "top stretch"))
    print("%-22s %12s %12.3e %12.3e %12.4f" % ("newton", "", 0.0, gap_n, stretch_n))
    for name, opts in METHODS.items():
        text, out = runner.run(name, scene + opts + ["-iters", args.iters, "-monitor"])
        for r in pl.monitor_curve(text, frame=1):
            curves.append({"method": name, "iteration": r["iter"], "relative_residual": r["relative"], "residual": r["residual"]})
        dist, gap, stretch, rel = measures(out, reference)
        summary.append({"method": name, "iterations": args.iters, "relative_residual": rel, "distance_to_newton": dist,
                        "largest_gap": gap, "top_layer_stretch": stretch})
        print("%-22s %12.3e %12.3e %12.3e %12.4f" % (name, rel, dist, gap, stretch), flush=True)
    csv, png = pl.outputs("fig4-two-blocks")
    head = pl.header(runner, "paper Fig. 4: two blocks hanging, res %d, %d iterations" % (args.res, args.iters))
    pl.write_csv(csv, head, ["method", "iterations", "relative_residual", "distance_to_newton", "largest_gap", "top_layer_stretch"],
                 summary)
    pl.write_csv(csv.replace(".csv", "-curves.csv"), head, ["method", "iteration", "residual", "relative_residual"], curves)
    plt = pl.pyplot()
    fig, ax = plt.subplots(1, 2, figsize=(11, 4.2))
    for name in METHODS:
        c = [r for r in curves if r["method"] == name]
        ax[0].semilogy([r["iteration"] for r in c], [max(r["relative_residual"], 1e-17) for r in c], label=name)
        ax[1].semilogy([r["iteration"] for r in c], [max(r["residual"], 1e-17) for r in c], label=name)
    ax[0].set_ylabel("relative residual (to the frame's first)")
    ax[1].set_ylabel("residual |f_int + f_ext| (N)")
    for a in ax:
        a.set_xlabel("iteration")
        a.legend(fontsize=8)
    pl.save_figure(fig, "Fig. 4: two blocks hanging (res %d, k = 1e8, E = 1000)" % args.res, csv, png)


if __name__ == "__main__":
    pl.script(main)
