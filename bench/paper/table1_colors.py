#!/usr/bin/python3
"""Paper Table 1 / Sec. 9: node colors (PBNG) against constraint colors (PBD) and milliseconds per
iteration, on the box stretch-and-twist at Res-16, 32 and 64.

For each resolution and method, --repeats runs of --iters iterations of the first frame (the paper
averages the first 200 iterations); the time per iteration is the run's solver time / iterations
(JSON summary), and the table gives the median over the repeats, and the PBD / PBNG ratio of the
medians. Material corotated for both: PBD's corotated constraints (|F - R| = 0, det F = 1) describe a
rigid state, whereas its neo-Hookean ones (|F| = 0 and det F = 1 + mu/lh) contradict each other and
collapse the elements under hard projection.

  /usr/bin/python3 bench/paper/table1_colors.py [--res 16,32,64] [--iters 200] [--repeats 3]
"""

import json
import os
import statistics
import paperlib as pl

PAPER = {16: (5, 39, 3.6, 4.1), 32: (5, 39, 28.0, 26.8), 64: (5, 39, 65.0, 137.0), 128: (5, 40, 1520.0, 1080.0)}


def main():
    ap = pl.arguments(__doc__.splitlines()[1])
    ap.add_argument("--res", default="16,32,64")
    ap.add_argument("--iters", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    runner = pl.Runner(args)
    rows = []
    for res in [int(r) for r in args.res.split(",")]:
        ms = {"pbng": [], "pbd": []}
        info = {}
        for rep in range(args.repeats):
            for method in ("pbng", "pbd"):  # interleaved, so that machine noise hits both alike
                stem = "res%d-%s-%d" % (res, method, rep)
                summary = os.path.join(runner.scratch, stem + ".json")
                runner.run(stem, ["-scene", "box_stretch_twist", "-res", res, "-frames", 1, "-iters", args.iters, "-solver", method, "-material", "corotated",
                                  "-summary", summary])
                s = json.load(open(summary))
                ms[method].append(1e3 * s["seconds_per_iteration"])
                info = {"nodes": s["nodes"], "elements": s["elements"], "node_colors": s["colors"]}
                if method == "pbd":
                    info["constraint_colors"] = s["constraint_colors"]
        for method in ("pbng", "pbd"):
            rows.append(dict(info, res=res, method=method, ms_per_iteration_median=statistics.median(ms[method]),
                             ms_per_iteration_all=" ".join("%.3f" % v for v in ms[method])))
        paper = PAPER.get(res)
        print("Res-%-3d %7d nodes %8d tets  node colors %2d  constraint colors %2d  PBNG %8.2f ms  PBD %8.2f ms  PBD/PBNG %.2f%s" %
              (res, info["nodes"], info["elements"], info["node_colors"], info["constraint_colors"], statistics.median(ms["pbng"]),
               statistics.median(ms["pbd"]), statistics.median(ms["pbd"]) / statistics.median(ms["pbng"]),
               "   (paper: %d / %d colors, %.1f / %.1f ms)" % paper if paper else ""), flush=True)
    csv, png = pl.outputs("table1-colors")
    pl.write_csv(csv, pl.header(runner, "paper Table 1: colors and ms per iteration (median of %d runs of %d iterations)" %
                                (args.repeats, args.iters)),
                 ["res", "method", "nodes", "elements", "node_colors", "constraint_colors", "ms_per_iteration_median", "ms_per_iteration_all"],
                 rows)
    plt = pl.pyplot()
    fig, ax = plt.subplots(figsize=(6, 4.2))
    for method in ("pbng", "pbd"):
        r = [x for x in rows if x["method"] == method]
        ax.loglog([x["elements"] for x in r], [x["ms_per_iteration_median"] for x in r], "o-", label=method)
    ax.set_xlabel("tetrahedra")
    ax.set_ylabel("ms per iteration (median)")
    ax.legend()
    pl.save_figure(fig, "Table 1: PBNG (%d node colors) vs PBD (%d constraint colors)" % (rows[0]["node_colors"], rows[1]["constraint_colors"]), csv, png)


if __name__ == "__main__":
    pl.script(main)
