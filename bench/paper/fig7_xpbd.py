#!/usr/bin/python3
"""Paper Fig. 7 / Sec. 6.2, 10.5: a Res-16 block clamped at x = 0 falls under gravity (backward Euler,
scene block_drop_dynamic: 4,096 nodes, 16,875 tetrahedra; E = 1000, rho = 10).

Claims checked: XPBD reduces its secondary residual (C + alpha~ lambda) reliably but its primary
residual (M(x - x~) - grad C^T lambda), and with it the true residual, stagnates (Fig. 7a); PBNG
reduces the true residual to the tolerance (Fig. 7b).

Both methods solve frames 1..F (default 3) with the same iteration count per frame; the curves are
those of frame F (-monitor: true residual, relative to the frame's first iterate, and for XPBD its
primary and secondary residuals). Material neo-Hookean (XPBD's constraints |F| and det F - 1 - mu/lh).

  /usr/bin/python3 bench/paper/fig7_xpbd.py [--res 16] [--frames 3] [--iters 200]
"""

import paperlib as pl


def main():
    ap = pl.arguments(__doc__.splitlines()[1])
    ap.add_argument("--res", type=int, default=16)
    ap.add_argument("--frames", type=int, default=3)
    ap.add_argument("--iters", type=int, default=200)
    args = ap.parse_args()
    runner = pl.Runner(args)
    scene = ["-scene", "block_drop_dynamic", "-res", args.res, "-frames", args.frames, "-iters", args.iters, "-monitor"]
    rows, curves = [], {}
    for name, opts in (("xpbd", ["-solver", "xpbd"]), ("pbng", ["-solver", "pbng"]), ("pbng_chebyshev", ["-solver", "pbng", "-accel", "chebyshev"])):
        text, _ = runner.run(name, scene + opts)
        curves[name] = pl.monitor_curve(text, frame=args.frames)
        for r in curves[name]:
            rows.append({"method": name, "iteration": r["iter"], "residual": r["residual"], "relative_residual": r["relative"],
                         "primary": r["primary"], "secondary": r["secondary"], "seconds": r["seconds"]})
    print("frame %d after %d iterations:" % (args.frames, args.iters))
    for name, c in curves.items():
        extra = ""
        if name == "xpbd":
            extra = "  primary %.3e -> %.3e, secondary %.3e -> %.3e" % (c[1]["primary"], c[-1]["primary"], c[1]["secondary"], c[-1]["secondary"])
        print("  %-15s relative residual %.3e (min %.3e)%s" % (name, c[-1]["relative"], min(r["relative"] for r in c), extra))
    csv, png = pl.outputs("fig7-xpbd")
    pl.write_csv(csv, pl.header(runner, "paper Fig. 7: block drop (dynamic), res %d, frame %d, %d iterations per frame" %
                                (args.res, args.frames, args.iters)),
                 ["method", "iteration", "residual", "relative_residual", "primary", "secondary", "seconds"], rows)
    plt = pl.pyplot()
    fig, ax = plt.subplots(1, 2, figsize=(11, 4.2))
    x = curves["xpbd"][1:]
    it = [r["iter"] for r in x]
    ax[0].semilogy(it, [r["primary"] for r in x], label="XPBD primary |M(x-x~) - grad C^T lambda| / dt^2")
    ax[0].semilogy(it, [max(r["secondary"], 1e-17) for r in x], label="XPBD secondary |C + alpha~ lambda|")
    ax[0].semilogy(it, [r["residual"] for r in x], label="XPBD true residual")
    ax[0].set_title("(a) XPBD: primary residual stagnates")
    for name, c in curves.items():
        ax[1].semilogy([r["iter"] for r in c], [max(r["relative"], 1e-17) for r in c], label=name)
    ax[1].set_title("(b) true residual (relative)")
    for a in ax:
        a.set_xlabel("iteration")
        a.legend(fontsize=8)
    pl.save_figure(fig, "Fig. 7: Res-%d block falling (backward Euler), frame %d" % (args.res, args.frames), csv, png)


if __name__ == "__main__":
    pl.script(main)
