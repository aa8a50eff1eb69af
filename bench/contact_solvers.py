#!/usr/bin/python3
"""Contacts in PBNG against Newton and the constraint solvers (issue 17; docs/contact.md, "Measured"): a contact
scene run for --frames frames by each solver of --solvers, on --ranks ranks x --threads threads:

    mpiexec -n R --bind-to none build/bin/pbng -scene SCENE -solver S -contact_model M \\
        -frames F -threads T -output X.h5 -summary X.json -log_view :X.log

--scene two_blocks_colliding (default; its defaults: Res-8, dynamic, dt 0.002, 40 iterations per frame,
k_n = 1e8; the blocks touch at frame 50) or bar_fold (self-contact: dynamic, dt 0.01, up to 100 iterations
per frame to -rtol 1e-6; the fold closes at frame ~195). Both scenes are dynamic (the paper's backward Euler),
so the constraint baseline is XPBD (`xpbd`); XPBD-QS is its quasistatic form and takes quasistatic frames only.

Per frame: the residual (the problem's: elastic, inertia and contact forces) and its value relative to the
frame's first, the deepest penetration (tests/check_output.py: for two_blocks_colliding frame_penetrations,
winding numbers of the other block's surface; for bar_fold check_self_penetration, vertices inside another
part of their own body; from the positions alone), the contacts in force, and the time per iteration (the
frame's iteration seconds / iterations). Per run: the time per iteration over the contact frames and over
the frames before, and from -log_view the seconds of the contact work (PBDContacts: the constraint
solvers' gather and projection of the contacts; PBNGContactPatch: PBNG's joint step; SNESSolve for Newton).
A run that fails (Newton diverging, say) is reported and the others go on.

    /usr/bin/python3 bench/contact_solvers.py [--scene two_blocks_colliding|bar_fold] [--ranks 2] [--threads 1]
                                              [--frames 80] [--solvers pbng,newton,xpbd] [--models spring,unilateral]

Results: bench/results/contact-solvers-<host>-<stamp>.csv (one row per run and frame). Standard library +
numpy + h5py; run with /usr/bin/python3.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

import h5py

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
import check_output  # noqa: E402  (the independent penetration check)
from rows_csv import add_run_arguments, results_path, write_rows  # noqa: E402


def parse():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_run_arguments(ap, HERE)
    ap.add_argument("--scene", default="two_blocks_colliding", choices=("two_blocks_colliding", "bar_fold"))
    ap.add_argument("--frames", type=int, default=None, help="frames (default 80 for the blocks, 260 for the bar)")
    ap.add_argument("--solvers", default="pbng,newton,xpbd")
    ap.add_argument("--models", default="spring,unilateral")
    ap.add_argument("--out", default=None, help="CSV path (default bench/results/contact-solvers-<host>-<stamp>.csv)")
    a = ap.parse_args()
    if a.frames is None:
        a.frames = 80 if a.scene == "two_blocks_colliding" else 260
    return a


def log_seconds(path, event):
    """The max-over-ranks seconds of a -log_view event (0 when absent)."""
    with open(path) as f:
        for line in f:
            if line.startswith(event + " "):
                return float(line.split()[3])
    return 0.0


def run(args, tmp, solver, model):
    tag = f"{solver}-{model}"
    h5, js, log = (os.path.join(tmp, tag + ext) for ext in (".h5", ".json", ".log"))
    cmd = [args.mpiexec, "-n", str(args.ranks), "--bind-to", "none", args.pbng, "-scene", args.scene, "-solver", solver,
           "-contact_model", model, "-frames", str(args.frames), "-threads", str(args.threads), "-output", h5, "-summary", js,
           "-log_view", ":" + log]
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMP_WAIT_POLICY="passive")
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        tail = "\n".join((out.stdout + out.stderr).strip().splitlines()[-4:])
        print(f"{' '.join(cmd)} failed ({out.returncode}):\n{tail}")
        return [], None
    contacts = [int(m.group(1)) for m in re.finditer(r"^frame +\d+/\d+ .* contacts (\d+)\b", out.stdout, re.M)]
    rep = check_output.Report()
    with h5py.File(h5, "r") as f:
        mesh = check_output.check_mesh(rep, f)
        frames = check_output.check_frames(rep, f, len(mesh["X"]))
        if args.scene == "bar_fold":
            depth = [(check_output.check_self_penetration(rep, mesh, [fr], float("inf"))[0],) for fr in frames]
        else:
            depth = check_output.frame_penetrations(f, mesh, frames)
    with open(js) as f:
        summary = json.load(f)
    rows = []
    for k in range(1, len(frames)):
        a = frames[k][1]
        rows.append({"scene": args.scene, "solver": solver, "model": model, "frame": k, "contacts": contacts[k - 1], "residual": a["residual"],
                     "relative_residual": a["relative_residual"], "max_penetration": depth[k][0], "iterations": int(a["iterations"]),
                     "ms_per_iteration": 1e3 * a["seconds"] / max(1, a["iterations"])})
    events = {"pbng": ("PBNGContactPatch", "PBNGNodeUpdate", "PBNGHaloExchange"), "newton": ("SNESSolve", "KSPSolve")}.get(
        solver, ("PBDContactGather", "PBDContactProject", "PBDProject", "PBDHaloExchange"))
    totals = {"solver_seconds": summary.get("solver_seconds"), "events": {e: log_seconds(log, e) for e in events},
              "command": " ".join(cmd[:5] + ["build/bin/pbng"] + cmd[6:])}
    return rows, totals


def mean(values):
    return sum(values) / len(values) if values else float("nan")


def main():
    args = parse()
    out = args.out or results_path(HERE, "contact-solvers" + ("" if args.scene == "two_blocks_colliding" else "-bar-fold"))
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for model in args.models.split(","):
            for solver in args.solvers.split(","):
                r, t = run(args, tmp, solver, model)
                if t is None:
                    continue
                rows += r
                touching = [x for x in r if x["contacts"] > 0]
                before = [x for x in r if x["contacts"] == 0]
                print(f"{t['command']}")
                print(f"  {solver:5s} {model:10s}: first contact frame {touching[0]['frame'] if touching else '-'}, "
                      f"ms/iteration {mean([x['ms_per_iteration'] for x in before]):.3f} before contact, "
                      f"{mean([x['ms_per_iteration'] for x in touching]):.3f} in contact; solver {t['solver_seconds']:.3f} s, "
                      f"{', '.join(f'{e} {v:.3f} s' for e, v in t['events'].items())}; deepest penetration {max(x['max_penetration'] for x in r):.3e}")
                for x in touching:
                    print(f"    frame {x['frame']:3d}  contacts {x['contacts']:4d}  residual {x['residual']:.3e}  relative "
                          f"{x['relative_residual']:.3e}  penetration {x['max_penetration']:.3e}  {x['ms_per_iteration']:.3f} ms/iteration")
    write_rows(out, rows)


if __name__ == "__main__":
    main()
