#!/usr/bin/python3
"""Paper Fig. 9 / Sec. 7.2, 10.1.3: plain, SOR (omega 1.7) and Chebyshev (rho 0.95, gamma 1.7) PBNG on
the Res-32 box stretch-and-twist, first time step: relative residual against iterations (and time).

Claim checked: the convergence rate of plain PBNG slows down with the iteration count; Chebyshev and SOR
accelerate it and behave similarly.

  /usr/bin/python3 bench/paper/fig9_accel.py [--res 32] [--iters 300]
"""

import paperlib as pl

ACCELS = ("none", "sor", "chebyshev")
MARKS = (10, 40, 100, 300, 1000)


def main():
    ap = pl.arguments(__doc__.splitlines()[1])
    ap.add_argument("--res", type=int, default=32)
    ap.add_argument("--iters", type=int, default=300)
    args = ap.parse_args()
    runner = pl.Runner(args)
    rows, curves = [], {}
    for accel in ACCELS:
        text, _ = runner.run("accel-" + accel, ["-scene", "box_stretch_twist", "-res", args.res, "-frames", 1, "-iters", args.iters,
                                                "-accel", accel, "-monitor"])
        curves[accel] = pl.monitor_curve(text, frame=1)
        rows += [{"accel": accel, "iteration": r["iter"], "relative_residual": r["relative"], "seconds": r["seconds"]} for r in curves[accel]]
    marks = [m for m in MARKS if m <= args.iters]
    print("relative residual after N iterations (Res-%d, first frame)" % args.res)
    print("%-10s" % "accel" + "".join("%12d" % m for m in marks))
    for accel in ACCELS:
        print("%-10s" % accel + "".join("%12.3e" % curves[accel][m]["relative"] for m in marks))
    csv, png = pl.outputs("fig9-accel")
    pl.write_csv(csv, pl.header(runner, "paper Fig. 9: PBNG accelerations, Res-%d box stretch-and-twist, first frame" % args.res),
                 ["accel", "iteration", "relative_residual", "seconds"], rows)
    plt = pl.pyplot()
    fig, ax = plt.subplots(1, 2, figsize=(11, 4.2))
    for accel in ACCELS:
        c = curves[accel]
        ax[0].semilogy([r["iter"] for r in c], [r["relative"] for r in c], label=accel)
        ax[1].semilogy([r["seconds"] for r in c], [r["relative"] for r in c], label=accel)
    ax[0].set_xlabel("iteration")
    ax[1].set_xlabel("seconds of iterations (%d rank(s) x %d thread(s))" % (args.ranks, args.threads))
    for a in ax:
        a.set_ylabel("relative residual")
        a.legend()
    pl.save_figure(fig, "Fig. 9: PBNG plain / SOR / Chebyshev, Res-%d stretch and twist, first frame" % args.res, csv, png)


if __name__ == "__main__":
    pl.script(main)
