#!/usr/bin/python3
"""The muscles scene (issue 41; docs/muscles.md): an upper arm of 8 muscles bound by connective tissue, flexed at the
elbow in quasistatic frames with contacts, run as a user types it by each configuration of --configs, on --ranks ranks:

    mpiexec -n R --bind-to none build/bin/pbng -scene muscles -scale S [config options] -threads T \\
        -output X.h5 -summary X.json

Configurations (--configs, comma-separated):
    default      nothing more: multilevel PBNG, each frame to -rtol 1e-3 (the user's command)
    secant       -quasistatic_guess secant (each frame from the secant guess, guarded by its energy; opt-in with contacts)
    swept        -quasistatic_guess secant -contact_ccd 1 (and the swept rules of contact detection)
    single       -solver pbng -iters 20000 (single-level PBNG to the same tolerance)
    newton       -solver newton (its default preset, bjacobi_icc: the best measured, docs/newton.md)
    pbd          -solver pbd -rtol 0 -iters N (the constraint baseline, fixed iterations: it has no residual to stop at)
    xpbd_qs      -solver xpbd_qs -rtol 0 -iters N (the paper's XPBD-QS: element constraints, then the weak ones)
    xpbd_flip    -solver xpbd_qs -xpbd_order weak_first -rtol 0 -iters N ("flipped": weak constraints first)
(N = --pbd-iters, 100 by default.) Per run and frame: the iterations, the residual relative to the frame's first (the
problem's: elastic, binding and contact forces; for the constraint solvers it is reported, not stopped at), the contacts,
and from the output alone (independent of pbng's bookkeeping): the largest binding violation |C| = |sum a_j x_j - t|
relative to a muscle's belly radius (0.02 m) over the bindings with a free node — the gap opened between bound
surfaces; the largest principal stretch
of any tetrahedron (singular values of F) and the inverted ones (det F <= 0); the deepest vertex inside another body (tests/check_output.py
frame_penetrations, winding numbers). Per run: the wall time of the whole command, its seconds per frame, the
detection and recoloring share of the frames (the summary's contacts line), and whether every frame reached -rtol.
A run that fails (a divergence) is reported and the others go on.

    /usr/bin/python3 bench/muscles.py [--scale 1] [--ranks 2] [--threads 1] [--frames 10] [--configs default,single,newton]
                                      [--pbd-iters 100] [--repeats 1] [--frame K [--base FILE]]

--frame K times one flexion frame, K, as a user continues a run: the default configuration first solves frames 1..K-1
(once; --base FILE gives such a result instead), then each configuration runs

    mpiexec -n R --bind-to none build/bin/pbng -scene muscles -scale S -initial BASE.h5 -initial_frame K-1 -frames 1 ...

from the same positions (the contacts detected afresh at the frame's start, as every frame does). With --repeats the
configurations alternate (A B A B ...), and the ratios of their median times are printed.

--scale 2.1 is the paper's size (~284K nodes). Results: bench/results/muscles-<host>-<stamp>.csv (one row per run and
frame) and the per-run lines printed. Standard library + numpy + h5py; run with /usr/bin/python3.
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
import check_output  # noqa: E402  (the independent penetration check)
from rows_csv import add_run_arguments, results_path, write_rows  # noqa: E402

RUN_ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMP_WAIT_POLICY="passive")
BELLY_RADIUS = 0.02  # src/mesh/generate_muscles.c pbng_arm_default

CONFIGS = {
    "default": [],
    "secant": ["-quasistatic_guess", "secant"],  # opt-in with contacts (docs/muscles.md#why-the-secant-guess)
    "swept": ["-quasistatic_guess", "secant", "-contact_ccd", "1"],
    "single": ["-solver", "pbng", "-iters", "20000"],
    "newton": ["-solver", "newton"],
    "pbd": ["-solver", "pbd", "-rtol", "0", "-iters", "{N}"],
    "xpbd_qs": ["-solver", "xpbd_qs", "-rtol", "0", "-iters", "{N}"],
    "xpbd_flip": ["-solver", "xpbd_qs", "-xpbd_order", "weak_first", "-rtol", "0", "-iters", "{N}"],
}


def parse():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_run_arguments(ap, HERE)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--frames", type=int, default=10)
    ap.add_argument("--configs", default="default,single,newton")
    ap.add_argument("--pbd-iters", type=int, default=100)
    ap.add_argument("--repeats", type=int, default=1, help="runs per configuration (the median wall time is reported)")
    ap.add_argument("--frame", type=int, default=0, help="time this one frame, continued from frame K-1 (0: the whole run of --frames)")
    ap.add_argument("--base", default=None, help="with --frame: a result holding frame K-1 of this scale (default: solved first)")
    ap.add_argument("--out", default=None, help="CSV path (default bench/results/muscles-<host>-<stamp>.csv)")
    return ap.parse_args()


def binding_gaps(f, mesh, frames):
    """Per frame, max |C| / belly radius over the bindings with a free node (C = sum_j a_j x_j - target)."""
    if "constraints/weak" not in f:
        return [0.0] * len(frames)
    nodes, w = f["constraints/weak/nodes"][()], f["constraints/weak/weights"][()]
    t = f["constraints/weak/target"][()] if "constraints/weak/target" in f else np.zeros((len(nodes), 3))
    idx = np.maximum(nodes, 0)
    fixed = np.ones(len(frames[0][0]), dtype=bool)
    fixed[mesh["free"]] = False
    free = ((nodes >= 0) & ~fixed[idx]).any(axis=1)  # a binding between two prescribed sets acts on nothing
    if not free.any():
        return [0.0] * len(frames)
    return [float(np.linalg.norm(np.einsum("cj,cjd->cd", w[free], x[idx[free]]) - t[free], axis=1).max()) / BELLY_RADIUS for x, _ in frames]


def element_strain(mesh, frames):
    """Per frame, the largest singular value of F = Ds Dm^-1 over the tetrahedra and how many have det F <= 0 (inverted)."""
    tets, X = mesh["tets"], mesh["X"]
    Dm_inv = np.linalg.inv(np.stack([X[tets[:, j]] - X[tets[:, 0]] for j in (1, 2, 3)], axis=2))
    out = []
    for x, _ in frames:
        F = np.stack([x[tets[:, j]] - x[tets[:, 0]] for j in (1, 2, 3)], axis=2) @ Dm_inv
        out.append((float(np.linalg.svd(F, compute_uv=False).max()), int((np.linalg.det(F) <= 0).sum())))
    return out


def frames_arguments(args):
    """-frames F for a whole run; -initial BASE -initial_frame K-1 -frames 1 for one frame K (--frame)."""
    if args.frame:
        return ["-initial", args.base, "-initial_frame", str(args.frame - 1), "-frames", "1"]
    return ["-frames", str(args.frames)]


def make_base(args, tmp):
    """--frame K without --base: frames 1..K-1 solved by the default configuration, once (not timed as a frame)."""
    base = os.path.join(tmp, "base.h5")
    cmd = [args.mpiexec, "-n", str(args.ranks), "--bind-to", "none", args.pbng, "-scene", "muscles", "-scale", f"{args.scale:g}",
           "-frames", str(args.frame - 1), "-threads", str(args.threads), "-output", base]
    t0 = time.monotonic()
    out = subprocess.run(cmd, env=RUN_ENV, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"muscles.py: the base run (frames 1..{args.frame - 1}) failed:\n{out.stdout[-2000:]}{out.stderr[-2000:]}")
    print(f"base: frames 1..{args.frame - 1} by the default configuration in {time.monotonic() - t0:.1f} s")
    return base


def run(args, tmp, name, repeat):
    tag = f"{name}-{repeat}"
    h5, js = os.path.join(tmp, tag + ".h5"), os.path.join(tmp, tag + ".json")
    extra = [a.replace("{N}", str(args.pbd_iters)) for a in CONFIGS[name]]
    cmd = [args.mpiexec, "-n", str(args.ranks), "--bind-to", "none", args.pbng, "-scene", "muscles", "-scale", f"{args.scale:g}"] + \
        frames_arguments(args) + extra + ["-threads", str(args.threads), "-output", h5, "-summary", js]
    t0 = time.monotonic()
    out = subprocess.run(cmd, env=RUN_ENV, capture_output=True, text=True)
    wall = time.monotonic() - t0
    shown = " ".join(cmd[:5] + ["build/bin/pbng"] + cmd[6:-4]).replace(args.base or "\0", "BASE.h5")
    if out.returncode != 0:
        tail = "\n".join((out.stdout + out.stderr).strip().splitlines()[-3:])
        print(f"{shown}: failed ({out.returncode}) after {wall:.1f} s:\n{tail}")
        return [], {"command": shown, "wall": wall, "failed": True}
    contacts = [int(m.group(1)) for m in re.finditer(r"^frame +\d+/\d+ .* contacts (\d+)\b", out.stdout, re.M)]
    share = re.search(r"contacts: .*\(([0-9.]+)% of the frames", out.stdout)
    rep = check_output.Report()
    with h5py.File(h5, "r") as f:
        mesh = check_output.check_mesh(rep, f)
        frames = check_output.check_frames(rep, f, len(mesh["X"]))
        depth = check_output.frame_penetrations(f, mesh, frames[1:])  # the solved frames (frame 0: the start)
        gaps = binding_gaps(f, mesh, frames)
    strain = element_strain(mesh, frames)
    with open(js) as f:
        summary = json.load(f)
    rows = []
    for k in range(1, len(frames)):
        a = frames[k][1]
        rows.append({"config": name, "repeat": repeat, "scale": args.scale, "nodes": len(mesh["X"]), "frame": k + max(0, args.frame - 1),
                     "contacts": contacts[k - 1] if k - 1 < len(contacts) else 0, "iterations": int(a["iterations"]),
                     "relative_residual": a["relative_residual"], "seconds": a["seconds"], "binding_gap_per_radius": gaps[k],
                     "largest_stretch": strain[k][0], "inverted": strain[k][1], "max_penetration": depth[k - 1][0] if depth else float("nan")})
    totals = {"command": shown, "wall": wall, "failed": False, "solver_seconds": summary.get("solver_seconds"),
              "detection_share_percent": float(share.group(1)) if share else float("nan"),
              "all_converged": "every frame reached it" in out.stdout}
    return rows, totals


def report(args, name, walls, t, r):
    """One configuration's line: median wall time over the repeats and the last repeat's figures."""
    frames = 1 if args.frame else args.frames
    print(t["command"])
    print(f"  {name:9s}: wall {statistics.median(walls):.1f} s (median of {len(walls)}), {statistics.median(walls) / frames:.2f} s a "
          f"frame; solver {t['solver_seconds']:.1f} s (median {statistics.median(t['solver_all']):.1f}); every frame to -rtol: "
          f"{'yes' if t['all_converged'] else 'no'}; detection and "
          f"recoloring {t['detection_share_percent']:.1f} % of the frames; contacts at the end {r[-1]['contacts']}; largest binding "
          f"gap {max(x['binding_gap_per_radius'] for x in r):.2e} of the belly radius; largest stretch "
          f"{max(x['largest_stretch'] for x in r):.3f}; inverted tetrahedra at the end {r[-1]['inverted']}; deepest penetration "
          f"{max(x['max_penetration'] for x in r):.2e} m; last frame's relative residual {r[-1]['relative_residual']:.2e}")


def main():
    args = parse()
    out = args.out or results_path(HERE, "muscles")
    names = args.configs.split(",")
    rows, walls, solver, last = [], {n: [] for n in names}, {n: [] for n in names}, {}
    with tempfile.TemporaryDirectory() as tmp:
        if args.frame and not args.base:
            args.base = make_base(args, tmp)
        for repeat in range(args.repeats):  # the configurations alternate: A B A B
            for name in names:
                r, t = run(args, tmp, name, repeat)
                if t["failed"] or not r:
                    continue
                walls[name].append(t["wall"])
                solver[name].append(t["solver_seconds"])
                rows += r
                last[name] = (t, r)
    for name in names:
        if name in last:
            t, r = last[name]
            t["solver_all"] = solver[name]
            report(args, name, walls[name], t, r)
    if "default" in last:
        for name in last:
            if name != "default":
                print(f"  {name} / default: wall {statistics.median(walls[name]) / statistics.median(walls['default']):.2f}x, solver "
                      f"{statistics.median(solver[name]) / statistics.median(solver['default']):.2f}x (medians, same run)")
    if rows:
        write_rows(out, rows)


if __name__ == "__main__":
    main()
