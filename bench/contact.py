#!/usr/bin/python3
"""Contacts at scale (issue 17's benchmark; docs/contact.md, "Measured"): the objects dropping into the glass
box (-scene objects_dropping, Sec. 10.2.3) on --ranks ranks, with its contacts and without detection.

1. The scene with contacts (its defaults: dt 0.002, up to 100 sweeps per frame to -rtol 1e-6, k_n = 1e8):

       mpiexec -n R --bind-to none build/bin/pbng -scene objects_dropping -scale S -frames F -threads T \\
           -output X.h5 -summary X.json

   Per frame, from the frame line (`iters N ... T s ... contacts C (detection D s, recoloring E s)`) and the
   wall clock between frame lines: sweeps, the sweeps' seconds, contacts in force, detection and recoloring
   seconds, the frame's wall time (sweeps, residual evaluations, detection, recoloring, output) and the share
   of detection + recoloring in it; every --penetration-every frames the deepest surface vertex inside
   another object or beyond the glass (tests/check_output.py's frame_penetrations: winding numbers, from the
   positions alone), against the contact distance.
2. The same scene without detection (`-contact 0 -dynamic_guess inertial -rtol 0 -iters N -frames K`: the
   objects' first free-fall frames, a fixed number of sweeps): the PBNG sweep's ms per iteration without any
   contact work (the median over the K frames), against which the contact frames' ms per iteration are set.

Prints the summary, writes bench/results/contact-<host>-<stamp>.csv (one row per frame; a comment block
heads it with the machine, the commands and the summary), a timing plot beside it (.png: sweeps' time and
detection + recoloring per frame, contacts, penetration; needs python3-matplotlib) and, with --render, the
scene at --render-frames rendered by ParaView (-render.png; needs paraview and xvfb: pbng-render, docs/render.md).

    /usr/bin/python3 bench/contact.py [--scale 1] [--frames 500] [--ranks 2] [--threads 1]
                                      [--penetration-every 10] [--render] [--pbng-options "..."] [--keep DIR]

The paper's size is --scale 5.22 (255 640 nodes, 1.27M tetrahedra): hours per run on a small machine.
"""

import argparse
import datetime
import os
import platform
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time

import h5py

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "tests"))
import check_output  # noqa: E402  (the independent penetration check)

REFERENCE_LINE = re.compile(r"^frame +\d+/\d+ +iters +(\d+).*? ([0-9.]+) s +ETA")
FRAME_LINE = re.compile(r"^frame +(\d+)/\d+ +iters +(\d+).*? ([0-9.]+) s +ETA .* contacts (\d+) "
                        r"\(detection ([0-9.eE+-]+) s, recoloring ([0-9.eE+-]+) s\)")


def parse():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pbng", default=os.path.join(REPO, "build", "bin", "pbng"))
    ap.add_argument("--mpiexec", default="mpiexec")
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--scale", type=float, default=1.0, help="-scale of objects_dropping (5.22: the paper's 256K nodes)")
    ap.add_argument("--frames", type=int, default=500, help="frames of the contact run (the scene's 500: t = 1)")
    ap.add_argument("--reference-iters", type=int, default=20, help="sweeps per frame of the run without detection")
    ap.add_argument("--reference-frames", type=int, default=7, help="frames of the run without detection (median)")
    ap.add_argument("--penetration-every", type=int, default=10, help="check every K-th frame's penetration (1: all)")
    ap.add_argument("--render", action="store_true", help="also render the scene (pbng-render: ParaView)")
    ap.add_argument("--render-frames", default="", help="frames to render (default: six spread over the run)")
    ap.add_argument("--pbng-options", default="", help="more pbng options for the contact run (e.g. \"-contact_every 5\")")
    ap.add_argument("--keep", default=None, help="directory for the runs' files (default: a temporary one, removed)")
    ap.add_argument("--out", default=None, help="CSV path (default bench/results/contact-<host>-<stamp>.csv)")
    a = ap.parse_args()
    if a.ranks < 1 or a.threads < 1 or a.frames < 1 or a.reference_iters < 1 or a.penetration_every < 1 or a.reference_frames < 1:
        ap.error("--ranks, --threads, --frames, --reference-iters, --reference-frames and --penetration-every must be >= 1")
    return a


def command(args, scratch, tag, extra):
    h5, js = os.path.join(scratch, tag + ".h5"), os.path.join(scratch, tag + ".json")
    return [args.mpiexec, "-n", str(args.ranks), "--bind-to", "none", args.pbng, "-scene", "objects_dropping",
            "-scale", f"{args.scale:g}", "-threads", str(args.threads), "-output", h5, "-summary", js] + extra, h5, js


def shown(cmd):
    """The command as it would be typed in the repository (the scratch paths shortened)."""
    return " ".join("build/bin/pbng" if c.endswith("/pbng") else os.path.basename(c) if os.sep in c else c for c in cmd)


def run_streaming(cmd):
    """Runs cmd, returning its stdout lines each with the wall time (s since the start) it arrived at."""
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMP_WAIT_POLICY="passive")
    t0 = time.monotonic()
    lines = []
    with subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1) as p:
        for line in p.stdout:
            lines.append((time.monotonic() - t0, line.rstrip("\n")))
            if line.startswith("frame "):
                print("  " + line.rstrip("\n"), flush=True)
        err = p.stderr.read()
    if p.returncode != 0:
        sys.exit(f"{shown(cmd)} failed ({p.returncode}):\n" + "\n".join(l for _, l in lines[-20:]) + "\n" + err)
    return lines


def frame_rows(lines):
    """One row per frame line: sweeps, their seconds, contacts, detection and recoloring seconds, wall seconds
    since the previous frame line (the first frame's: since frame 0 was written)."""
    rows, last = [], None
    for t, line in lines:
        m = FRAME_LINE.match(line)
        if m:
            f, it, sec, c, det, rec = m.groups()
            rows.append({"frame": int(f), "iterations": int(it), "sweep_seconds": float(sec), "contacts": int(c),
                         "detection_seconds": float(det), "recoloring_seconds": float(rec),
                         "wall_seconds": t - last if last is not None else float("nan")})
            last = t
        elif last is None and line.startswith("contacts: distance"):
            last = t
    return rows


def contact_distance(lines):
    for _, line in lines:
        m = re.match(r"contacts: distance ([0-9.eE+-]+)", line)
        if m:
            return float(m.group(1))
    sys.exit("no 'contacts: distance' line in the run's output")


def penetrations(h5path, every):
    """The deepest penetration (check_output.frame_penetrations) of every `every`-th frame (and the last)."""
    rep = check_output.Report()
    with h5py.File(h5path, "r") as f:
        mesh = check_output.check_mesh(rep, f)
        frames = check_output.check_frames(rep, f, len(mesh["X"]))
        picked = sorted(set(range(0, len(frames), every)) | {len(frames) - 1})
        depth = check_output.frame_penetrations(f, mesh, [frames[k] for k in picked])
    return {k: d[0] for k, d in zip(picked, depth)}, {"nodes": len(mesh["X"]), "tets": len(mesh["tets"])}


def median(values):
    return statistics.median(values) if values else float("nan")


def summarise(rows, reference_ms, distance):
    touching = [r for r in rows if r["contacts"] > 0]
    swept = [r for r in touching if r["iterations"] > 0]
    wall = sum(r["wall_seconds"] for r in rows[1:])
    work = sum(r["detection_seconds"] + r["recoloring_seconds"] for r in rows[1:])
    wall_t = sum(r["wall_seconds"] for r in touching if r["frame"] > 1)
    work_t = sum(r["detection_seconds"] + r["recoloring_seconds"] for r in touching if r["frame"] > 1)
    depth = [r["max_penetration"] for r in rows if r["max_penetration"] != ""]
    return {
        "first_contact_frame": touching[0]["frame"] if touching else None,
        "contacts_max": max((r["contacts"] for r in rows), default=0),
        "contacts_median_in_contact": median([r["contacts"] for r in touching]),
        "sweeps_median_in_contact": median([r["iterations"] for r in touching]),
        "ms_per_iteration_without_detection": reference_ms,
        "ms_per_iteration_in_contact_median": median([1e3 * r["sweep_seconds"] / r["iterations"] for r in swept]),
        "ms_per_iteration_in_contact_with_detection_median":
            median([1e3 * (r["sweep_seconds"] + r["detection_seconds"] + r["recoloring_seconds"]) / r["iterations"] for r in swept]),
        "detection_recoloring_share_all_frames": work / wall if wall > 0 else float("nan"),
        "detection_recoloring_share_contact_frames": work_t / wall_t if wall_t > 0 else float("nan"),
        "detection_seconds_median_per_frame": median([r["detection_seconds"] for r in rows]),
        "recoloring_seconds_max_per_frame": max((r["recoloring_seconds"] for r in rows), default=0.0),
        "max_penetration": max(depth) if depth else float("nan"),
        "contact_distance": distance,
    }


def plot(rows, summary, path, title):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not available: apt-get install python3-matplotlib (no timing plot)")
        return
    f = [r["frame"] for r in rows]
    fig, ax = plt.subplots(3, 1, figsize=(8, 8), sharex=True)
    ax[0].plot(f, [r["sweep_seconds"] for r in rows], label="sweeps")
    ax[0].plot(f, [r["detection_seconds"] + r["recoloring_seconds"] for r in rows], label="detection + recoloring")
    ax[0].plot(f, [r["wall_seconds"] for r in rows], label="frame (wall)", lw=0.7)
    ax[0].set_ylabel("seconds per frame"), ax[0].legend(fontsize=8), ax[0].set_yscale("log")
    ax[1].plot(f, [r["contacts"] for r in rows], color="C3")
    ax[1].set_ylabel("contacts in force")
    ax2 = ax[1].twinx()
    ax2.plot(f, [r["iterations"] for r in rows], color="C2", lw=0.7)
    ax2.set_ylabel("sweeps", color="C2")
    pen = [(r["frame"], r["max_penetration"]) for r in rows if r["max_penetration"] != ""]
    ax[2].plot([p[0] for p in pen], [p[1] for p in pen], "o-", ms=3, label="deepest penetration")
    ax[2].axhline(summary["contact_distance"], color="k", ls="--", lw=0.8, label="contact distance")
    ax[2].set_ylabel("depth"), ax[2].set_xlabel("frame"), ax[2].legend(fontsize=8)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"plot: {path}")


def render(args, h5path, png):
    cmd = [os.path.join(os.path.dirname(args.pbng), "pbng-render"), h5path, "--png", png, "--color", "in_contact"]
    if args.render_frames:
        cmd += ["--frames", args.render_frames]
    p = subprocess.run(cmd, capture_output=True, text=True)
    print(p.stdout.strip() if p.returncode == 0 else f"rendering failed ({' '.join(cmd)}):\n{p.stdout}\n{p.stderr}")


def header(args, cmds, summary, sizes):
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
    except (OSError, StopIteration):
        pass
    commit = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    lines = [f"machine: {socket.gethostname()} {platform.machine()} {cpu}, {os.cpu_count()} cpus, load average at end {os.getloadavg()}",
             f"commit: {commit}; {sizes['nodes']} nodes, {sizes['tets']} tetrahedra"] + [f"command: {c}" for c in cmds]
    lines += [f"{k}: {v}" for k, v in summary.items()]
    return "".join(f"# {l}\n" for l in lines)


def main():
    args = parse()
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M")
    out = args.out or os.path.join(HERE, "results", f"contact-{socket.gethostname().split('.')[0][:8]}-{stamp}.csv")
    with tempfile.TemporaryDirectory() as tmp:
        scratch = args.keep or tmp
        os.makedirs(scratch, exist_ok=True)
        ref, _, _ = command(args, scratch, "reference", ["-contact", "0", "-dynamic_guess", "inertial", "-rtol", "0",
                                                              "-iters", str(args.reference_iters), "-frames", str(args.reference_frames)])
        print(shown(ref), flush=True)
        reference_ms = median([1e3 * float(m.group(2)) / int(m.group(1)) for m in (REFERENCE_LINE.match(l) for _, l in run_streaming(ref)) if m])
        cmd, h5, _ = command(args, scratch, "contact", ["-frames", str(args.frames)] + args.pbng_options.split())
        print(shown(cmd), flush=True)
        lines = run_streaming(cmd)
        rows = frame_rows(lines)
        depth, sizes = penetrations(h5, args.penetration_every)
        for r in rows:
            r["max_penetration"] = depth.get(r["frame"], "")
        summary = summarise(rows, reference_ms, contact_distance(lines))
        if args.render:
            render(args, h5, os.path.splitext(out)[0] + "-render.png")
    with open(out, "w") as f:
        f.write(header(args, [shown(ref), shown(cmd)], summary, sizes))
        f.write(",".join(rows[0].keys()) + "\n")
        for r in rows:
            f.write(",".join(str(v) for v in r.values()) + "\n")
    for k, v in summary.items():
        print(f"{k:52s} {v}")
    print(f"results: {out}")
    plot(rows, summary, os.path.splitext(out)[0] + ".png",
         f"objects_dropping -scale {args.scale:g}: {sizes['nodes']} nodes, {sizes['tets']} tets, {args.ranks} ranks x {args.threads} threads")


if __name__ == "__main__":
    main()
