"""Helpers shared by the seed benchmarks (bench/seed_high_order/*.py, issue 16): running pbng, reading
its HDF5 result (docs/output.md), the seed's time stepping constants, thresholds, and writing the
CSV / PNG / table of a benchmark. Not a benchmark itself."""
import argparse, datetime, hashlib, os, platform, shutil, socket, statistics, subprocess, sys, tempfile
import numpy as np
import h5py

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
RESULTS = os.path.join(REPO, "bench", "results")

# The seed's XPBD loop (Table 3): 60 frames/s, n_it = 1, n_substeps per frame (50 in most experiments).
FRAME_DT = 1.0 / 60.0
SEED_SUBSTEPS = 50
# Far above any relative residual a run from an equilibrium can show (r0 ~ 0 there): no false "diverged".
NO_DIVERGENCE = ["-divergence_limit", "1e300"]


def parser(doc):
    """The options every seed benchmark takes."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pbng", default=os.path.join(REPO, "build", "bin", "pbng"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=3, help="timed runs per case (median reported)")
    ap.add_argument("--quick", action="store_true", help="small meshes and short runs, to check the script")
    ap.add_argument("--cache", default="", help="directory keeping reference results between invocations (reused when the command matches)")
    return ap


class Bench:
    """One benchmark invocation: its scratch directory, result file names and header lines."""

    def __init__(self, name, args):
        self.name, self.a = name, args
        self.stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M")
        self.host = socket.gethostname()
        self.tmp = tempfile.mkdtemp(prefix="seed-%s-" % name)
        os.makedirs(RESULTS, exist_ok=True)
        self.base = os.path.join(RESULTS, "seed-%s-%s-%s" % (name, self.host, self.stamp))
        folder = os.path.basename(os.path.dirname(os.path.abspath(sys.argv[0])))  # seed_high_order or seed_continuum
        self.head = ["# seed %s benchmark (bench/%s/%s.py), %s, %s, %s, threads %d, repeats %d%s"
                     % (name, folder, name, self.stamp, self.host, platform.processor() or platform.machine(), args.threads,
                        args.repeats, ", --quick" if args.quick else ""),
                     "# %s; load average at the start %s (a shared machine: other jobs ran beside these runs)"
                     % (git_describe(), load_average())]

    def path(self, label):
        return os.path.join(self.tmp, "".join(c if c.isalnum() or c in "-_." else "_" for c in label) + ".h5")

    def run(self, args, label):
        """Runs pbng with args (threads and output added); returns (output path, command line)."""
        out = self.path(label)
        return out, run(self.a.pbng, args, out, self.a.threads)

    def cached(self, args, label):
        """As run, but with --cache the result of an identical command is reused (references)."""
        if not self.a.cache:
            return self.run(args, label)
        os.makedirs(self.a.cache, exist_ok=True)
        key = hashlib.sha1(" ".join(args + [str(self.a.threads)]).encode()).hexdigest()[:16]
        keep = os.path.join(self.a.cache, "%s-%s.h5" % (self.name, key))
        out = self.path(label)
        if os.path.exists(keep):
            shutil.copy(keep, out)
            return out, [self.a.pbng] + args + ["-threads", str(self.a.threads), "-output", out]
        out, cmd = self.run(args, label)
        shutil.copy(out, keep)
        return out, cmd

    def finish(self, rows, keys=None, curves=None, curve_format=None, plot=None):
        """Writes <base>.csv (rows), <base>-curves.csv (curves: tuples, curve_format = (header, printf
        line)) and <base>.png (plot(base)), removes the scratch directory, prints the file names."""
        self.head.append("# load average at the end %s" % load_average())
        names = [self.base + ".csv"]
        write_csv(names[0], self.head, rows, keys)
        if curves is not None:
            names.append(self.base + "-curves.csv")
            with open(names[-1], "w") as f:
                f.write("\n".join(self.head) + "\n" + curve_format[0] + "\n")
                f.writelines(curve_format[1] % c + "\n" for c in curves)
        if plot is not None:
            plot(self.base)
            names.append(self.base + ".png")
        shutil.rmtree(self.tmp, ignore_errors=True)
        print("results: " + ", ".join(names))


def load_average():
    return " ".join("%.2f" % v for v in os.getloadavg())


def git_describe():
    rev = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", REPO, "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True).stdout.strip()
    return "commit %s%s" % (rev or "?", " (uncommitted changes)" if dirty else "")


def run(pbng, args, out, threads):
    cmd = [pbng] + args + ["-threads", str(threads), "-output", out]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError("failed: %s\n%s" % (" ".join(cmd), p.stdout[-2000:] + p.stderr[-2000:]))
    return cmd


def read(path, nodes=None):
    """A result: dict with X (rest positions), elements (count), frames: per frame (frame 0 included)
    time, seconds, relative_residual, residual, and x (positions of `nodes`, all if None)."""
    with h5py.File(path, "r") as f:
        X = f["mesh/rest_positions"][...]
        elems = f["mesh/elements" if "mesh/elements" in f else "mesh/tetrahedra"].shape[0]
        sel = None if nodes is None else np.asarray(nodes)
        frames = []
        for name in sorted(f["frames"]):
            g = f["frames"][name]
            x = g["positions"][...] if sel is None else g["positions"][...][sel]
            frames.append(dict(time=float(g.attrs["time"]), seconds=float(g.attrs["seconds"]), x=x,
                               relative_residual=float(g.attrs["relative_residual"]), residual=float(g.attrs["residual"])))
        return dict(X=X, elements=elems, frames=frames)


def node_at(X, point, tol=1e-9):
    """The node at `point` (an error if none)."""
    i = int(np.argmin(np.linalg.norm(X - point, axis=1)))
    if np.linalg.norm(X[i] - point) > tol:
        raise RuntimeError("no node at %s" % (point,))
    return i


def run_relative(frames):
    """Residual of every frame after frame 0 over the run's initial residual r0 (that of frame 1's start:
    each frame's own relative_residual is over its own start)."""
    r0 = frames[1]["residual"] / max(frames[1]["relative_residual"], 1e-300)
    return [fr["residual"] / r0 for fr in frames[1:]]


def cumulative_seconds(frames):
    """Summed solver time at the end of every frame after frame 0."""
    return list(np.cumsum([fr["seconds"] for fr in frames[1:]]))


def time_to(times, err, threshold):
    """Time at the first entry from which err stays <= threshold (None: never)."""
    for k in range(len(times)):
        if all(e <= threshold for e in err[k:]):
            return times[k]
    return None


def settled_at(disp, tol, window):
    """First frame index k such that the point moved less than tol over each of the `window` frames
    after k (disp: displacement per frame); None if it never settles."""
    step = [float(np.linalg.norm(disp[k + 1] - disp[k])) for k in range(len(disp) - 1)]
    for k in range(len(step) - window + 1):
        if max(step[k:k + window]) < tol:
            return k
    return None


def median(values):
    """Median, None when any value is None."""
    return None if any(v is None for v in values) else statistics.median(values)


def fmt(v, spec="%.3g"):
    return "-" if v is None else (spec % v if isinstance(v, float) else str(v))


def print_table(rows, columns):
    """columns: list of (key, header, printf spec)."""
    cells = [[h for _, h, _ in columns]] + [[fmt(r.get(k), s) for k, _, s in columns] for r in rows]
    width = [max(len(c[i]) for c in cells) for i in range(len(columns))]
    for c in cells:
        print("  ".join(v.rjust(w) for v, w in zip(c, width)))


def write_csv(path, head, rows, keys=None):
    keys = keys or list(rows[0].keys())
    with open(path, "w") as f:
        f.write("\n".join(head) + "\n" + ",".join(keys) + "\n")
        for r in rows:
            f.write(",".join('"%s"' % r[k] if k == "command" else fmt(r.get(k), "%.6g") for k in keys) + "\n")


def pyplot():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def xpbd_at_rest_args(initial, substeps, split="stable", frames=20, initial_frame=-1):
    """The seed's XPBD brought to its rest state from the FEM equilibrium in `initial` (a result of the
    same mesh and boundary conditions): quasistatic pseudo steps of the seed's substep length
    h = (1/60)/substeps, one sweep each, `frames` frames of `substeps` * 60 pseudo steps (one simulated
    second each). A rest state of the dynamic loop (v = 0, x unchanged by a substep) is exactly a fixed
    point of these pseudo steps (both start from x at zero velocity, target x + h^2 g, multipliers 0),
    so this finds where the seed's loop would come to rest without its oscillation (pbng's xpbd_ho has
    no damping). -dt 1e-9: the prescribed nodes stay where the initial frame has them."""
    return ["-solver", "xpbd_ho", "-mode", "quasistatic", "-xpbd_ho_split", split, "-xpbd_ho_dt", repr(FRAME_DT / substeps),
            "-initial", initial, "-initial_frame", str(initial_frame), "-dt", "1e-9", "-frames", str(frames),
            "-iters", str(60 * substeps)] + NO_DIVERGENCE


NEWTON = ["-solver", "newton", "-iters", "100", "-rtol", "1e-10", "-residual_every", "1"]


def three_solvers(b, args, loading, pbng_args, label, rest_seconds, rest_from=(-1,), seed_args=()):
    """One mesh of a loaded quasistatic test solved three ways: Newton (the mesh's own FEM solution),
    PBNG (pbng_args; time = median over --repeats of the summed frame seconds) and the seed's XPBD at
    rest (xpbd_at_rest_args from each of Newton's frames in rest_from, rest_seconds simulated seconds). args: mesh,
    material and boundary conditions; loading: -dt and -frames; seed_args: options of the seed's XPBD alone (e.g.
    -density without gravity: its pseudo steps weigh the masses, the quasistatic FEM has none). Returns per solver a dict: method,
    path, command, seconds, relative_residual (each: its last frame's residual over r0, the residual of
    the undeformed state at the start of Newton's first frame)."""
    newton, cmd = b.run(args + loading + NEWTON, "%s-newton" % label)
    first = read(newton)["frames"]
    r0 = first[1]["residual"] / max(first[1]["relative_residual"], 1e-300)
    out = [dict(method="newton", path=newton, command=cmd, seconds=sum(fr["seconds"] for fr in first),
                relative_residual=first[-1]["residual"] / r0)]
    times = []
    for rep in range(b.a.repeats):
        path, pcmd = b.run(args + loading + pbng_args, "%s-pbng-%d" % (label, rep))
        frames = read(path)["frames"]
        times.append(sum(fr["seconds"] for fr in frames))
    out.append(dict(method="pbng", path=path, command=pcmd, seconds=median(times), relative_residual=frames[-1]["residual"] / r0))
    for k in rest_from:
        xpath, xcmd = b.run(args + list(seed_args) + xpbd_at_rest_args(newton, SEED_SUBSTEPS, frames=rest_seconds, initial_frame=k),
                            "%s-xpbd%d" % (label, k))
        frames = read(xpath)["frames"]
        out.append(dict(method="xpbd_ho_at_rest", path=xpath, command=xcmd, seconds=sum(fr["seconds"] for fr in frames),
                        relative_residual=frames[-1]["residual"] / r0, from_frame=k))
    return out
