#!/usr/bin/python3
"""The projective-peridynamics seed's scenes (issue 20, "Benchmark and reproduction"): time per step of
cylinder_twist, cloth_on_table and projectile_sheet at their default sizes and at the seed's sizes (Table 1, by
-scale), on --ranks ranks (default 2) x 1 thread, and a ParaView rendering of each default run.

Default size: --frames frames of each scene's defaults (its iterations per frame, tolerance and contact step),
seconds per frame and per iteration from the run's -summary JSON. Seed size (-scale 20 / 10 / 6.5: 320 000,
40 401 and ~27 800 vertices): one frame capped at --seed-iters iterations (default 5: a seed-size frame takes
minutes here), seconds per iteration, and the step's time estimated as that times the scene's iterations per
frame at the default size (an estimate: stated as such in the CSV). --no-seed skips them.
Renders: pbng-render (six frames, coloured by displacement; docs/render.md) into
bench/results/seed-pd-<scene>-<host>-<stamp>.png; --no-render skips them.

    /usr/bin/python3 bench/seed_peridynamics/scenes.py [--ranks 2] [--frames 40] [--seed-iters 5] [--pbng PATH]

CSV: bench/results/seed-pd-scenes-<host>-<stamp>.csv (scene, size, scale, nodes, frames, iterations, seconds,
s/frame, s/iteration, estimated s/step at the seed's size, load average, command).
"""
import argparse, csv, datetime, json, os, shutil, socket, subprocess, sys, tempfile

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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--frames", type=int, default=40)
    ap.add_argument("--seed-iters", type=int, default=5)
    ap.add_argument("--no-seed", action="store_true")
    ap.add_argument("--no-render", action="store_true")
    ap.add_argument("--pbng", default=os.path.join(ROOT, "build", "bin", "pbng"))
    a = ap.parse_args()
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M")
    host = socket.gethostname().split(".")[0]
    mpi = ["mpiexec", "-n", str(a.ranks), "--oversubscribe", "--bind-to", "none"] if a.ranks > 1 else []
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for scene, scale in SCENES:
            out, js = os.path.join(tmp, f"{scene}.h5"), os.path.join(tmp, f"{scene}.json")
            cmd = mpi + [a.pbng, "-scene", scene, "-frames", str(a.frames), "-threads", "1", "-output", out, "-summary", js]
            d = run_summary(cmd, js, scene)
            if d is None:
                continue
            per_it = d["solver_seconds"] / max(d["iterations"], 1)
            its_per_frame = d["iterations"] / max(d["frames"], 1)
            rows.append([scene, "default", 1, d["nodes"], d["frames"], d["iterations"], d["solver_seconds"], d["solver_seconds"] / d["frames"], per_it,
                         "", os.getloadavg()[0], " ".join(cmd[len(mpi):])])
            print(f"{scene:17s} default  {d['nodes']:7d} nodes  {d['solver_seconds'] / d['frames']:8.3f} s/frame  {per_it * 1e3:8.2f} ms/iteration"
                  f"  ({its_per_frame:.0f} iterations a frame)")
            if not a.no_render and not (shutil.which("xvfb-run") and shutil.which("pvbatch")):
                print("  render: skipped (needs xvfb-run and pvbatch: apt-get install xvfb paraview)")
            elif not a.no_render:
                png = os.path.join(ROOT, "bench", "results", f"seed-pd-{scene}-{host}-{stamp}.png")
                rc, text = run([os.path.join(os.path.dirname(a.pbng), "pbng-render"), out, "--png", png, "--color", "displacement"])
                print(f"  render: {os.path.relpath(png, ROOT) if rc == 0 else 'failed: ' + text[-300:]}")
            if a.no_seed:
                continue
            cmd = mpi + [a.pbng, "-scene", scene, "-scale", str(scale), "-frames", "1", "-iters", str(a.seed_iters), "-rtol", "0", "-threads", "1",
                         "-output", os.path.join(tmp, f"{scene}-seed.h5"), "-summary", js]
            d = run_summary(cmd, js, f"{scene} at the seed's size")
            if d is None:
                continue
            per = d["solver_seconds"] / max(d["iterations"], 1)
            rows.append([scene, "seed", scale, d["nodes"], d["frames"], d["iterations"], d["solver_seconds"], "", per, per * its_per_frame,
                         os.getloadavg()[0], " ".join(cmd[len(mpi):])])
            print(f"{scene:17s} seed x{scale:<4} {d['nodes']:7d} nodes  {per:8.3f} s/iteration, ~{per * its_per_frame:8.1f} s a step (estimated)")
    path = os.path.join(ROOT, "bench", "results", f"seed-pd-scenes-{host}-{stamp}.csv")
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["scene", "size", "scale", "nodes", "frames", "iterations", "solver_seconds", "s_per_frame", "s_per_iteration", "est_s_per_step_seed",
                    "load_avg", "command"])
        w.writerows(rows)
    print(f"results: {os.path.relpath(path, ROOT)} ({a.ranks} rank(s) x 1 thread, {host})")


if __name__ == "__main__":
    sys.exit(main())
