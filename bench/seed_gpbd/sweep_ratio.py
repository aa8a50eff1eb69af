#!/usr/bin/python3
"""GPBD's time per sweep against PBNG's time per iteration on the same mesh and threads (issue 43, item 1: the
closed-form update of linear tetrahedra, target <= 5 x a PBNG iteration, both forms).

Two meshes, each run as a user would type it, so that every run stops by itself:
  block_drop   pbng -scene block_drop_dynamic -frames 5 [-solver gpbd [-gpbd_form gs]]  (the scene's defaults but 5 of
               its 30 frames: Res-16, 4,096 nodes, 16,875 tets, -rtol 1e-3 with -iters 40 as the cap; GPBD's local
               Newton takes more steps as the block deforms: 2.4 per element in frame 1, 3.3 in frame 5, 3.7 in 10)
  cube25       the seed's 25^3-cell cube of time_per_iteration.py (-scene box -res 26 -tet_split six: 17,576 nodes,
               93,750 tets), one compress step set-up (bottom clamped, top at -2 m/s, gravity, E 1e5, nu 0.45,
               dt 1e-3, -mode dynamic, neohookean), 2 frames of 5 iterations each (-iters 5 -rtol 0, the seed's few
               GPBD iterations per step)
Solvers: PBNG as typed (the default solver, its default acceleration), GPBD Jacobi (-solver gpbd, the default
form) and GPBD GS (-gpbd_form gs), with the seed's Hessian fix (the default) and, with --fixes, also
-gpbd_hessian_fix qr_when_indefinite. Threads: 1 rank x 1 thread and 1 rank x 2 threads (--thread-counts).

ms per iteration = the frames' summed solver seconds / summed iterations (the result file's frame attributes:
residual evaluations included, as a user's run has them). On a machine shared with other jobs a ratio is taken
within one pairing: every GPBD run follows a PBNG run of the same mesh and threads (P G P G ...), its ratio is
to that run, and the table gives the median over --repeats of the ratios and of the times.

    /usr/bin/python3 bench/seed_gpbd/sweep_ratio.py [--quick] [--repeats 3] [--fixes] [--pbng PATH]

Default cost on this 2-core machine: ~5 min (3 repeats, 2 meshes x 2 thread counts x 2 GPBD forms, PBNG runs
paired); --fixes adds the qr_when_indefinite runs (~+5 min); --quick: small meshes, 1 repeat, < 1 min.
Results: bench/results/seed-sweep_ratio-<host>-<stamp>.csv (one row per mesh, threads and case).
"""
import os, statistics, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpbdlib as gl  # noqa: E402
sl = gl.sl

TARGET = 5.0  # issue 43's bound on a GPBD sweep, in PBNG iterations


def meshes(quick):
    """(name, base arguments, PBNG's solver arguments)."""
    drop = ["-scene", "block_drop_dynamic", "-frames", "2" if quick else "5"] + (["-res", "6"] if quick else [])
    cube = ["-scene", "box", "-res", "8" if quick else "26", "-tet_split", "six", "-mode", "dynamic", "-dt", "1e-3", "-frames", "2",
            "-youngs", "1e5", "-poisson", "0.45", "-gravity", "0,-9.8,0", "-fix_box", "0,0,0,1,0,1", "-bc0_box", "0,1,0,1,1,1",
            "-bc0_velocity", "0,-2,0", "-iters", "5", "-rtol", "0", "-material", "neohookean"]
    return [("block_drop", drop, []), ("cube25", cube, ["-solver", "pbng"])]


def gpbd_cases(fixes):
    """(case name, solver arguments)."""
    cases = [("gpbd_jacobi", ["-solver", "gpbd"]), ("gpbd_gs", ["-solver", "gpbd", "-gpbd_form", "gs"])]
    if fixes:
        cases += [(name + "_qr_when_indefinite", args + ["-gpbd_hessian_fix", "qr_when_indefinite"]) for name, args in cases]
    return cases


def ms_per_iteration(b, args, label, threads):
    r = gl.run(b, args, label, threads=threads)
    if not r["ok"]:
        raise RuntimeError("failed: %s\n%s" % (r["command"], r["log"][-1500:]))
    fr = gl.frames(r["path"])
    os.remove(r["path"])
    return 1e3 * sum(f["seconds"] for f in fr) / sum(f["iterations"] for f in fr), sum(f["iterations"] for f in fr), r["command"]


def main():
    ap = sl.parser(__doc__)
    ap.add_argument("--fixes", action="store_true", help="also -gpbd_hessian_fix qr_when_indefinite")
    ap.add_argument("--thread-counts", default="1,2", help="threads of the 1-rank runs (comma separated; --threads is not used)")
    a = ap.parse_args()
    if a.quick:
        a.repeats = 1
    threads_list = [int(t) for t in a.thread_counts.split(",")]
    a.threads = max(threads_list)  # the CSV header's "threads": the most any run had (the rows give each run's)
    b = sl.Bench("sweep_ratio", a)
    times, ratios, iters, cmds, loads = {}, {}, {}, {}, {}
    for rep in range(a.repeats):
        for mesh, base, pbng_args in meshes(a.quick):
            for threads in threads_list:
                for case, solver in gpbd_cases(a.fixes):  # P G pairs: each GPBD run right after its PBNG run
                    p_ms, p_it, p_cmd = ms_per_iteration(b, base + pbng_args, "%s-pbng-%d-%s-%d" % (mesh, threads, case, rep), threads)
                    g_ms, g_it, g_cmd = ms_per_iteration(b, base + solver, "%s-%s-%d-%d" % (mesh, case, threads, rep), threads)
                    for key, ms, it, cmd in (((mesh, threads, "pbng"), p_ms, p_it, p_cmd), ((mesh, threads, case), g_ms, g_it, g_cmd)):
                        times.setdefault(key, []).append(ms)
                        iters.setdefault(key, []).append(it)
                        cmds[key] = cmd
                        loads.setdefault(key, []).append(os.getloadavg()[0])
                    ratios.setdefault((mesh, threads, case), []).append(g_ms / p_ms)
                    print("repeat %d  %-10s %d thread(s)  pbng %8.2f ms/iteration  %-30s %9.2f ms/iteration  ratio %6.1f  (load %.2f)"
                          % (rep, mesh, threads, p_ms, case, g_ms, g_ms / p_ms, os.getloadavg()[0]), flush=True)
    rows = []
    for mesh, _, _ in meshes(a.quick):
        for threads in threads_list:
            for case in ["pbng"] + [c for c, _ in gpbd_cases(a.fixes)]:
                key = (mesh, threads, case)
                r = ratios.get(key)
                rows.append(dict(mesh=mesh, ranks=1, threads=threads, case=case, ms_per_iteration=statistics.median(times[key]),
                                 ms_min=min(times[key]), ms_max=max(times[key]), iterations=statistics.median(iters[key]),
                                 ratio_to_pbng=statistics.median(r) if r else 1.0, ratio_min=min(r) if r else 1.0,
                                 ratio_max=max(r) if r else 1.0, within_target=int(statistics.median(r) <= TARGET) if r else None,
                                 load_median=statistics.median(loads[key]), repeats=len(times[key]), command=cmds[key]))
    sl.print_table(rows, [("mesh", "mesh", "%s"), ("threads", "threads", "%d"), ("case", "case", "%s"), ("ms_per_iteration", "ms/iter", "%.2f"),
                          ("ms_min", "min", "%.2f"), ("ms_max", "max", "%.2f"), ("ratio_to_pbng", "/ PBNG", "%.1f"), ("ratio_min", "min", "%.1f"),
                          ("ratio_max", "max", "%.1f"), ("load_median", "load", "%.2f")])
    b.finish(rows)


if __name__ == "__main__":
    main()
