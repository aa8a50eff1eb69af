#!/usr/bin/python3
"""The projective-peridynamics seed's scenes (issue 20, "Benchmark and reproduction"): time per step of
cylinder_twist, cloth_on_table and projectile_sheet at their default sizes and at the seed's sizes (Table 1, by
-scale), on --ranks ranks (default 2) x 1 thread, and a ParaView rendering of each default run.

Default size: --frames frames of each scene's defaults (its iterations per frame, tolerance and contact step),
seconds per frame and per iteration from the run's -summary JSON. Seed size (-scale 20 / 10 / 6.5: 320 000,
40 401 and 27 403 vertices): --seed-frames frames of the scene as a user types it (its own iterations a frame,
tolerance and contact step: runs that stop by themselves), and a PBNG reference on the same sheet and ranks
(-solver pbng -sheet_model fem, one frame of --pbng-iters sweeps, default 100: with 20, ~0.6 s a run at the projectile's
size, its figure moved between 26 and 45 ms a sweep across quiet runs), alternating, --repeats times each; the medians
of seconds per iteration, and SISSM's over PBNG's (issue 43's target: at most 5). --no-seed skips them, --no-default
the default-size runs; --scenes A,B runs those scenes only. --contact-from K: the SISSM runs measure the frames after
frame K instead of the first ones (projectile_sheet at -scale 6.5 has pairs within the barrier's reach from frame 3 on):
the scene is run once to frame K (not timed) and each SISSM run continues it with -initial for --seed-frames frames;
its first iteration then makes the contact step's candidate list afresh, as a run's first iteration does (an
uninterrupted run has it from before: slightly pessimistic).
Renders: pbng-render (six frames, coloured by displacement; docs/render.md) into
bench/results/seed-pd-<scene>-<host>-<stamp>.png; --no-render skips them.

    /usr/bin/python3 bench/seed_peridynamics/scenes.py [--ranks 2] [--frames 40] [--seed-frames 2] [--repeats 3]
                                                       [--pbng-iters 100] [--pbng PATH] [--scenes A,B] [--no-default]
                                                       [--contact-from K]

CSV: bench/results/seed-pd-scenes-<host>-<stamp>.csv (scene, size, scale, solver, nodes, frames, iterations,
seconds, s/frame, s/iteration, repeats, s/iteration of each repeat, SISSM's s/iteration over PBNG's, load average,
command, user CPU seconds per iteration of each repeat: the whole run's, set-up included, every rank's). Seed-size rows
hold medians.
"""
import argparse, csv, datetime, json, os, resource, shutil, socket, statistics, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SCENES = [("cylinder_twist", 20), ("cloth_on_table", 10), ("projectile_sheet", 6.5)]


def run(cmd):
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMP_WAIT_POLICY="passive")
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    return p.returncode, p.stdout + p.stderr


def run_summary(cmd, js, what):
    """Runs cmd (which writes the summary js); its summary dict, or None after printing why it failed."""
    rc, text = run(cmd)
    if rc:
        print(f"{what}: failed (exit {rc})\n{text[-1500:]}")
        return None
    return json.load(open(js))


def default_size(a, mpi, scene, out, js, rows, host, stamp):
    """The scene's defaults for --frames frames (a row, and the render unless --no-render); False when the run failed."""
    cmd = mpi + [a.pbng, "-scene", scene, "-frames", str(a.frames), "-threads", "1", "-output", out, "-summary", js]
    d = run_summary(cmd, js, scene)
    if d is None:
        return False
    per_it = d["solver_seconds"] / max(d["iterations"], 1)
    its_per_frame = d["iterations"] / max(d["frames"], 1)
    rows.append([scene, "default", 1, "sissm", d["nodes"], d["frames"], d["iterations"], d["solver_seconds"], d["solver_seconds"] / d["frames"], per_it,
                 1, f"{per_it:.6g}", "", os.getloadavg()[0], " ".join(cmd[len(mpi):]), ""])
    print(f"{scene:17s} default  {d['nodes']:7d} nodes  {d['solver_seconds'] / d['frames']:8.3f} s/frame  {per_it * 1e3:8.2f} ms/iteration"
          f"  ({its_per_frame:.0f} iterations a frame)", flush=True)
    if not a.no_render and not (shutil.which("xvfb-run") and shutil.which("pvbatch")):
        print("  render: skipped (needs xvfb-run and pvbatch: apt-get install xvfb paraview)")
    elif not a.no_render:
        png = os.path.join(ROOT, "bench", "results", f"seed-pd-{scene}-{host}-{stamp}.png")
        rc, text = run([os.path.join(os.path.dirname(a.pbng), "pbng-render"), out, "--png", png, "--color", "displacement"])
        print(f"  render: {os.path.relpath(png, ROOT) if rc == 0 else 'failed: ' + text[-300:]}")
    return True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--frames", type=int, default=40)
    ap.add_argument("--seed-frames", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--pbng-iters", type=int, default=100)
    ap.add_argument("--contact-from", type=int, default=0, help="SISSM runs continue the scene from frame K (-initial)")
    ap.add_argument("--no-seed", action="store_true")
    ap.add_argument("--no-render", action="store_true")
    ap.add_argument("--no-default", action="store_true")
    ap.add_argument("--scenes", default=",".join(name for name, _ in SCENES))
    ap.add_argument("--pbng", default=os.path.join(ROOT, "build", "bin", "pbng"))
    a = ap.parse_args()
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M")
    host = socket.gethostname().split(".")[0]
    mpi = ["mpiexec", "-n", str(a.ranks), "--oversubscribe", "--bind-to", "none"] if a.ranks > 1 else []
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for scene, scale in SCENES:
            if scene not in a.scenes.split(","):
                continue
            out, js = os.path.join(tmp, f"{scene}.h5"), os.path.join(tmp, f"{scene}.json")
            if not a.no_default and not default_size(a, mpi, scene, out, js, rows, host, stamp):
                continue
            if a.no_seed:
                continue
            seed = {"sissm": ["-frames", str(a.seed_frames)], "pbng": ["-solver", "pbng", "-sheet_model", "fem", "-frames", "1", "-iters", str(a.pbng_iters)]}
            if a.contact_from > 0:  # the frames after K: the scene run to K once, untimed, and continued
                start = os.path.join(tmp, f"{scene}-start.h5")
                rc, text = run(mpi + [a.pbng, "-scene", scene, "-scale", str(scale), "-frames", str(a.contact_from), "-threads", "1", "-output", start])
                if rc:
                    print(f"{scene}: the run to frame {a.contact_from} failed (exit {rc})\n{text[-1500:]}")
                    continue
                seed["sissm"] = ["-initial", start] + seed["sissm"]
            per, last, cmds, cpu = {"sissm": [], "pbng": []}, {}, {}, {"sissm": [], "pbng": []}
            for rep in range(a.repeats):  # alternating: the machine's load falls on both alike
                for solver, extra in seed.items():
                    cmd = mpi + [a.pbng, "-scene", scene, "-scale", str(scale)] + extra + ["-threads", "1", "-output", os.path.join(tmp, f"{scene}-seed.h5"), "-summary", js]
                    user0 = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
                    d = run_summary(cmd, js, f"{scene} at the seed's size, {solver}")
                    if d is None:
                        continue
                    per[solver].append(d["solver_seconds"] / max(d["iterations"], 1))
                    cpu[solver].append((resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime - user0) / max(d["iterations"], 1))  # whole run, set-up included
                    last[solver], cmds[solver] = d, " ".join(cmd[len(mpi):])
            if not per["sissm"] or not per["pbng"]:
                continue
            med = {k: statistics.median(v) for k, v in per.items()}
            size = "seed" if a.contact_from <= 0 else f"seed, frames {a.contact_from + 1}-{a.contact_from + a.seed_frames}"
            for solver in ("sissm", "pbng"):
                d = last[solver]
                rows.append([scene, size, scale, solver, d["nodes"], d["frames"], d["iterations"], d["solver_seconds"], d["solver_seconds"] / d["frames"], med[solver],
                             len(per[solver]), " ".join(f"{x:.6g}" for x in per[solver]), med["sissm"] / med["pbng"] if solver == "sissm" else "", os.getloadavg()[0],
                             cmds[solver], " ".join(f"{x:.6g}" for x in cpu[solver])])
            print(f"{scene:17s} {size} x{scale:<4} {last['sissm']['nodes']:7d} nodes  SISSM {med['sissm'] * 1e3:8.1f} ms/iteration, PBNG {med['pbng'] * 1e3:7.1f} ms/sweep:"
                  f" {med['sissm'] / med['pbng']:.1f}x (medians of {len(per['sissm'])}, {len(per['pbng'])})", flush=True)
    path = os.path.join(ROOT, "bench", "results", f"seed-pd-scenes-{host}-{stamp}.csv")
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["scene", "size", "scale", "solver", "nodes", "frames", "iterations", "solver_seconds", "s_per_frame", "s_per_iteration", "repeats",
                    "s_per_iteration_each", "sissm_over_pbng", "load_avg", "command", "user_cpu_s_per_iteration_each"])
        w.writerows(rows)
    print(f"results: {os.path.relpath(path, ROOT)} ({a.ranks} rank(s) x 1 thread, {host})")


if __name__ == "__main__":
    sys.exit(main())
