#!/usr/bin/python3
"""The GPBD seed's cloth experiment (issue 19; generalized-position-based-dynamics.txt, the 64^2 and 128^2
sheets): -solver gpbd on sheets (tri3 membranes + bend4 bending stencils, the same energy as PBNG and
Newton) against PBNG and Newton on the same sheets and steps.

--energy cloth6 (issue 43 item 4): the seed's own term instead, the six-dimensional cloth stencil (a triangle and
its three neighbours, -sheet_model cloth6) with its strain-stiffening energy (--stiffening beta, default 1000;
the other moduli from the scene's membrane and k_b: docs/cloth.md#the-six-dimensional-cloth-stencil), again the
same energy for every solver. Results then go to seed-cloth6-<host>-<stamp>.csv.

Sheets: -res 65 (64 x 64 cells, 4,225 vertices) and -res 129 (128 x 128, 16,641 vertices); --quick: 17, 33.
Scenes: hanging = -scene cloth_drape -drape corners (dynamic, the scene's dt 0.01 s, held at two corners,
gravity); stretched = -scene cloth_stretch -mode dynamic -dt 0.003 (pulled edge, dynamic steps).
Solvers: GPBD Gauss-Seidel (-gpbd_form gs), GPBD Jacobi (-gpbd_omega 1.9), PBNG Chebyshev and plain
(-accel none), Newton (PETSc SNES). Every run: --frames frames (default 3; 2 at res 129), -rtol 1e-6,
-iters 3000 sweeps (Newton 50), 1 rank x --threads threads, and a per-frame wall cap -time_budget
(--budget seconds at res 65, --budget129 at res 129): a frame that hits the cap or the sweep cap is
reported as not converged (converged = its final relative residual <= rtol). The caps are in the CSV
(frames, budget_s columns) and the printout.

Per run (one row): per frame the sweeps, seconds and final relative residual (the HDF5 frames/NNNNNN
attributes, gpbdlib.frames), means over the frames, converged frames, s per sweep (summed seconds /
summed sweeps; the seconds include the residual evaluations every 10 sweeps), and the distance to
Newton: max over nodes |x - x_newton| at the last frame (the same frames for every solver of a size).
Ratios: each solver's time per frame and per sweep over GPBD GS's, PBNG Chebyshev's and Newton's of the
same sheet and scene (same script run; --repeats > 1 interleaves the solvers, repeat loop outermost,
medians).
Stability check (--no-stability to skip): GPBD GS and Jacobi (and PBNG Chebyshev) on the stretched sheet
at the smaller size with -dt 0.03, 1 frame of up to --stability-sweeps sweeps / --stability-budget s: GPBD's
sheet projection is only conditionally stable there (docs/gpbd_solver.md#sheets: at res 21 an unstable mode
grows from sweep ~350); a run stopped by the divergence check is a failed row ("failed: ..." in per_frame).
--solvers newton (say) reruns part of the matrix.

    /usr/bin/python3 bench/seed_gpbd/cloth.py [--quick] [--repeats 1] [--threads 2] [--pbng PATH]

Default cost on this 2-core machine: ~12 min (mostly the capped GPBD frames). --quick: ~1-2 min.
Results: bench/results/seed-cloth-<host>-<stamp>.csv.
"""
import os, statistics, sys
import numpy as np
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpbdlib as gl  # noqa: E402
sl = gl.sl

RTOL = 1e-6
SCENES = [
    ("hanging", ["-scene", "cloth_drape", "-drape", "corners"]),
    ("stretched", ["-scene", "cloth_stretch", "-mode", "dynamic", "-dt", "0.003"]),
]
SWEEPS = ["-iters", "3000"]
SOLVERS = [
    ("gpbd_gs", ["-solver", "gpbd", "-gpbd_form", "gs"] + SWEEPS),
    ("gpbd_jacobi_w1.9", ["-solver", "gpbd", "-gpbd_form", "jacobi", "-gpbd_omega", "1.9"] + SWEEPS),
    ("pbng_chebyshev", ["-solver", "pbng", "-accel", "chebyshev"] + SWEEPS),
    ("pbng_plain", ["-solver", "pbng", "-accel", "none"] + SWEEPS),
    # Newton checks the residual every step (-residual_every 1): with the default 10 it runs 10 steps a frame
    # even when 3 reach the tolerance (the check is per -residual_every iterations for every solver).
    ("newton", ["-solver", "newton", "-iters", "50", "-residual_every", "1"]),
]
# --energy cloth6 only: Chebyshev with less over-relaxation (the default gamma 1.7 diverges on the cloth6 sheets;
# 1.3 converges at 16^2: docs/gpbd_solver.md#the-six-dimensional-stencil-gpbd-pbng-and-newton-on-one-energy)
CLOTH6_SOLVERS = [("pbng_chebyshev_g1.3", ["-solver", "pbng", "-accel", "chebyshev", "-gamma", "1.3"] + SWEEPS)]


def positions(path, frame=-1):
    with gl.h5py.File(path, "r") as f:
        names = sorted(f["frames"])
        return f["frames"][names[frame]]["positions"][...], len(names) - 1


def main():
    ap = sl.parser(__doc__)
    ap.set_defaults(repeats=1)
    ap.add_argument("--sizes", default="65,129")
    ap.add_argument("--frames", type=int, default=3)
    ap.add_argument("--frames129", type=int, default=2, help="frames at res >= 129 (cap)")
    ap.add_argument("--budget", type=float, default=10.0, help="seconds of iterations per frame at res < 129 (-time_budget)")
    ap.add_argument("--budget129", type=float, default=20.0, help="seconds per frame at res >= 129")
    ap.add_argument("--no-stability", action="store_true")
    ap.add_argument("--solvers", default="", help="comma list: run only these of the matrix (default all)")
    ap.add_argument("--stability-sweeps", type=int, default=1000, help="stability check: -iters (GPBD needs ~350+ sweeps to show it)")
    ap.add_argument("--stability-budget", type=float, default=60.0, help="stability check: -time_budget s")
    ap.add_argument("--energy", choices=("fem", "cloth6"), default="fem",
                    help="fem: tri3 membranes + bend4 stencils; cloth6: the seed's six-dimensional stencil (-sheet_model cloth6)")
    ap.add_argument("--stiffening", type=float, default=1000.0, help="--energy cloth6: -sheet_stiffening beta")
    a = ap.parse_args()
    energy = ["-sheet_model", "cloth6", "-sheet_stiffening", repr(a.stiffening)] if a.energy == "cloth6" else []
    if a.quick:
        a.sizes, a.frames, a.frames129, a.budget, a.budget129, a.stability_budget = "17,33", 2, 2, 2.0, 2.0, 4.0
    matrix = SOLVERS + (CLOTH6_SOLVERS if a.energy == "cloth6" else [])
    chosen = [(n_, s_) for n_, s_ in matrix if not a.solvers or n_ in a.solvers.split(",")]
    sizes = [int(s) for s in a.sizes.split(",")]
    b = sl.Bench("cloth" if a.energy == "fem" else "cloth6", a)
    b.head[0] = b.head[0].replace("cloth6.py", "cloth.py --energy cloth6")  # the header names the script by the bench's name
    b.head.append("# command: %s" % " ".join([sys.executable] + sys.argv))
    res = {}  # (res, scene, solver) -> list of per-repeat dicts
    cmds = {}
    for rep in range(a.repeats):
        for n in sizes:
            frames = a.frames129 if n >= 129 else a.frames
            budget = a.budget129 if n >= 129 else a.budget
            for scene, sargs in SCENES:
                for name, solver in chosen:
                    args = sargs + energy + ["-res", str(n), "-frames", str(frames), "-rtol", repr(RTOL), "-time_budget", repr(budget)] + solver
                    r = gl.run(b, args, "%s-%d-%s-%d" % (scene, n, name, rep))
                    d = dict(ok=int(r["ok"]), wall=r["wall"], path=r["path"])
                    cmds[(n, scene, name)] = r["command"]
                    if r["ok"]:
                        fr = gl.frames(r["path"])
                        d.update(sweeps=[f["iterations"] for f in fr], seconds=[f["seconds"] for f in fr],
                                 rel=[f["relative_residual"] for f in fr])
                        d["x"], d["nframes"] = positions(r["path"])
                    else:
                        d["log"] = r["log"][-600:]
                    os.remove(r["path"]) if os.path.exists(r["path"]) else None
                    res.setdefault((n, scene, name), []).append(d)
                    print("repeat %d  res %3d  %-9s %-17s %s  (load %.2f)" % (
                        rep, n, scene, name,
                        ("sweeps/frame %s  s/frame %s  rel %s" % (
                            [int(s) for s in d["sweeps"]], ["%.2f" % s for s in d["seconds"]], ["%.1e" % v for v in d["rel"]]))
                        if r["ok"] else "FAILED: " + r["log"].strip().splitlines()[-1][:160] if r["log"].strip() else "FAILED",
                        os.getloadavg()[0]), flush=True)
    rows = []
    for n in sizes:
        frames = a.frames129 if n >= 129 else a.frames
        budget = a.budget129 if n >= 129 else a.budget
        for scene, _ in SCENES:
            newton = res.get((n, scene, "newton"), [dict(ok=0)])[-1]
            for name, _ in chosen:
                runs = res[(n, scene, name)]
                last = runs[-1]
                row = dict(res=n, vertices=n * n, scene=scene, solver=name, energy=a.energy, frames=frames, budget_s=budget, ok=last["ok"])
                if last["ok"]:
                    nf = len(last["sweeps"])
                    row["sweeps_per_frame"] = statistics.mean(last["sweeps"])
                    row["s_per_frame"] = statistics.median([statistics.mean(r["seconds"]) for r in runs if r["ok"]])
                    row["s_per_sweep"] = statistics.median([sum(r["seconds"]) / max(sum(r["sweeps"]), 1) for r in runs if r["ok"]])
                    row["converged_frames"] = sum(v <= RTOL * 1.0001 for v in last["rel"])
                    row["worst_rel_residual"] = max(last["rel"])
                    row["last_rel_residual"] = last["rel"][-1]
                    row["capped_frames"] = sum(s >= budget * 0.98 for s in last["seconds"])
                    row["per_frame"] = " ".join("%d/%.2fs/%.1e" % (s, t, v) for s, t, v in zip(last["sweeps"], last["seconds"], last["rel"]))
                    if newton["ok"] and name != "newton" and newton["nframes"] == last["nframes"]:
                        row["max_dist_to_newton"] = float(np.max(np.linalg.norm(last["x"] - newton["x"], axis=1)))
                    elif name == "newton":
                        row["max_dist_to_newton"] = 0.0
                    row["frames_done"] = nf
                else:
                    row["per_frame"] = "failed: " + " ".join(last["log"].split())[-200:].replace('"', "'").replace(",", ";")
                row["command"] = cmds[(n, scene, name)]
                rows.append(row)
            # ratios within this (size, scene)
            by = {r["solver"]: r for r in rows if r["res"] == n and r["scene"] == scene}
            for r in by.values():
                for ref, key in (("gpbd_gs", "gs"), ("pbng_chebyshev", "cheb"), ("newton", "newton")):
                    if r.get("s_per_frame") and by.get(ref, {}).get("s_per_frame"):
                        r["frame_time_over_" + key] = r["s_per_frame"] / by[ref]["s_per_frame"]
                if r.get("s_per_sweep") and by.get("pbng_chebyshev", {}).get("s_per_sweep") and r["solver"] != "newton":
                    r["sweep_time_over_cheb"] = r["s_per_sweep"] / by["pbng_chebyshev"]["s_per_sweep"]
    if not a.no_stability:
        n = sizes[0]
        for name, solver in SOLVERS[:3]:
            args = ["-scene", "cloth_stretch", "-mode", "dynamic", "-dt", "0.03", "-res", str(n), "-frames", "1"] + energy + [
                    "-rtol", repr(RTOL), "-time_budget", repr(a.stability_budget)] + solver + ["-iters", str(a.stability_sweeps)]
            r = gl.run(b, args, "stab-%d-%s" % (n, name))
            row = dict(res=n, vertices=n * n, scene="stretched_dt0.03", solver=name, frames=1, budget_s=a.stability_budget, ok=int(r["ok"]), command=r["command"])
            if r["ok"]:
                fr = gl.frames(r["path"])
                row.update(sweeps_per_frame=fr[0]["iterations"], s_per_frame=fr[0]["seconds"], last_rel_residual=fr[0]["relative_residual"],
                           worst_rel_residual=fr[0]["relative_residual"], converged_frames=int(fr[0]["relative_residual"] <= RTOL * 1.0001),
                           per_frame="%d/%.2fs/%.1e" % (fr[0]["iterations"], fr[0]["seconds"], fr[0]["relative_residual"]), frames_done=1)
                x, _ = positions(r["path"])
                row["max_dist_to_newton"] = None if np.isfinite(x).all() else float("inf")
            else:
                row["per_frame"] = "failed: " + " ".join(r["log"].split())[-200:].replace('"', "'").replace(",", ";")
            if os.path.exists(r["path"]):
                os.remove(r["path"])
            print("stability res %d stretched dt 0.03 %-17s %s" % (n, name, row["per_frame"]), flush=True)
            rows.append(row)
    keys = ["res", "vertices", "scene", "solver", "energy", "frames", "frames_done", "budget_s", "ok", "sweeps_per_frame", "s_per_frame", "s_per_sweep",
            "converged_frames", "capped_frames", "worst_rel_residual", "last_rel_residual", "max_dist_to_newton", "frame_time_over_gs",
            "frame_time_over_cheb", "frame_time_over_newton", "sweep_time_over_cheb", "per_frame", "command"]
    for r in rows:
        r["per_frame"] = '"%s"' % r.get("per_frame", "")
    sl.print_table(rows, [("res", "res", "%d"), ("scene", "scene", "%s"), ("solver", "solver", "%s"), ("frames_done", "frames", "%d"),
                          ("sweeps_per_frame", "sweeps/fr", "%.0f"), ("s_per_frame", "s/frame", "%.3g"), ("s_per_sweep", "s/sweep", "%.3g"),
                          ("converged_frames", "conv", "%d"), ("capped_frames", "capped", "%d"), ("worst_rel_residual", "worst rel", "%.1e"),
                          ("max_dist_to_newton", "|x-x_N|", "%.1e"), ("frame_time_over_gs", "t/GS", "%.3g"),
                          ("frame_time_over_cheb", "t/Cheb", "%.3g"), ("frame_time_over_newton", "t/Newton", "%.3g"),
                          ("sweep_time_over_cheb", "sweep/Cheb", "%.3g")])
    print("caps: -iters 3000 sweeps (Newton 50), -time_budget %.0f s per frame (res < 129) / %.0f s (res >= 129), %d frames (%d at res >= 129)"
          % (a.budget, a.budget129, a.frames, a.frames129))
    b.finish(rows, keys)


if __name__ == "__main__":
    main()
