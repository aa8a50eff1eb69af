#!/usr/bin/python3
"""Cloth throughput (issue 18; the continuum seed's Table 1 cloth: 40 401 vertices, 80 000 triangles, 6.73 ms
per step on its machine): the draped sheet (-scene cloth_drape, dynamic, dt 0.01) at -res 201 (40 401
vertices, 80 000 tri3 + 119 600 bend4) for --frames frames, per method:

- the seed's solver (-solver continuum_pbd, one substep of 5 sweeps per frame: the seed's setting),
- PBNG (backward Euler, plain sweeps, -iters 5 and -rtol 0: five sweeps per frame, the same work count),
- PBNG to the scene's tolerance (-rtol 1e-6, up to 100 sweeps): what an accurate step costs.

Reported: median seconds per step over the frames (the frames' `seconds` attributes: solver time only)
and triangle visits per second (each sweep visits every triangle once per corner: 3 x 80 000 per sweep;
the stencils' visits are counted apart). Medians of --repeats runs; --threads threads, 1 rank (and
--ranks 2 as a second row when given).

    /usr/bin/python3 bench/seed_continuum/cloth_throughput.py [--quick] [--threads 2] [--repeats 3] [--ranks 1]

Results: bench/results/seed-cloth_throughput-<host>-<stamp>.csv.
"""
import os, statistics, subprocess, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "seed_high_order"))
import seedlib as sl  # noqa: E402

METHODS = [("continuum_pbd", ["-solver", "continuum_pbd", "-iters", "5"], 5),
           ("pbng_5", ["-solver", "pbng", "-iters", "5", "-rtol", "0"], 5),
           ("pbng_tol", ["-solver", "pbng"], None)]  # the scene's default solver is Newton since 2026-11-29


def main():
    ap = sl.parser(__doc__)
    ap.add_argument("--frames", type=int, default=10)
    ap.add_argument("--ranks", type=int, default=1)
    a = ap.parse_args()
    b = sl.Bench("cloth_throughput", a)
    res = 51 if a.quick else 201
    tris = 2 * (res - 1) ** 2
    rows = []
    for name, extra, sweeps in METHODS:
        per_step, iters = [], []
        for rep in range(a.repeats):
            out = b.path("%s-%d" % (name, rep))
            cmd = ["mpiexec", "-n", str(a.ranks), "--bind-to", "none", a.pbng, "-scene", "cloth_drape", "-drape", "corners", "-res", str(res), "-frames",
                   str(a.frames)] + extra + ["-threads", str(a.threads), "-output", out]
            p = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1"))
            if p.returncode:
                raise RuntimeError(" ".join(cmd) + "\n" + p.stdout[-2000:] + p.stderr[-2000:])
            r = sl.read(out)
            per_step.append(statistics.median(f["seconds"] for f in r["frames"][1:]))
            import h5py
            with h5py.File(out, "r") as f:
                iters.append(statistics.median(int(f["frames"][k].attrs["iterations"]) for k in sorted(f["frames"])[1:]))
        sec = statistics.median(per_step)
        n_sw = sweeps if sweeps else statistics.median(iters)
        rows.append(dict(method=name, ranks=a.ranks, threads=a.threads, vertices=res * res, triangles=tris, sweeps_per_step=n_sw,
                         ms_per_step=1e3 * sec, triangle_visits_per_s=3 * tris * n_sw / sec))
    sl.print_table(rows, [("method", "method", "%s"), ("vertices", "vertices", "%d"), ("sweeps_per_step", "sweeps/step", "%g"),
                          ("ms_per_step", "ms/step", "%.1f"), ("triangle_visits_per_s", "triangle visits/s", "%.3g")])
    b.finish(rows)


if __name__ == "__main__":
    main()
