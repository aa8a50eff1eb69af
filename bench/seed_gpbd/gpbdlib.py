"""Helpers of the GPBD seed's benchmarks (bench/seed_gpbd/*.py, issue 19) on top of
bench/seed_high_order/seedlib.py: running pbng on 1 rank x T threads or under mpiexec on R ranks x 1
thread without stopping at a failed run, per-frame data and the stability checks. Not a benchmark itself.

PBNG_BENCH_NO_GIT=1 in the environment: the CSV header does not query git for the commit (seedlib does)."""
import os, subprocess, sys, time
import numpy as np
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "seed_high_order"))
import seedlib as sl  # noqa: E402,F401
import h5py  # noqa: E402

if os.environ.get("PBNG_BENCH_NO_GIT"):
    sl.git_describe = lambda: "commit not queried (PBNG_BENCH_NO_GIT)"

os.environ.setdefault("OMP_WAIT_POLICY", "passive")
os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
os.environ.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")


def run(b, args, label, ranks=1, threads=None, extra_env=None):
    """Runs pbng (1 rank x `threads` threads, default --threads; or `ranks` ranks x 1 thread under mpiexec).
    Returns dict(path, command, ok, wall, log): a failed run (non-zero exit, e.g. the divergence check)
    is reported, not raised."""
    out = b.path(label)
    threads = b.a.threads if threads is None else threads
    cmd = [b.a.pbng] + args + ["-threads", str(threads if ranks == 1 else 1), "-output", out]
    if ranks > 1:
        cmd = ["mpiexec", "-n", str(ranks), "--oversubscribe", "--bind-to", "none"] + cmd
    env = dict(os.environ, **(extra_env or {}))
    t0 = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    return dict(path=out, command=" ".join(cmd), ok=p.returncode == 0, wall=time.time() - t0, log=p.stdout + p.stderr)


def frames(path):
    """Per frame after frame 0: time, seconds, iterations, relative_residual, residual (attributes)."""
    with h5py.File(path, "r") as f:
        names = sorted(f["frames"])[1:]
        return [dict((k, float(v)) for k, v in f["frames"][n].attrs.items() if np.ndim(v) == 0) for n in names]


def final_state(path):
    """(rest positions, tetrahedra, last frame's positions, last frame's name, status attribute)."""
    with h5py.File(path, "r") as f:
        X = f["mesh/rest_positions"][...]
        T = f["mesh/tetrahedra"][...]
        last = sorted(f["frames"])[-1]
        x = f["frames"][last]["positions"][...]
        status = f.attrs.get("status", b"?")
        return X, T, x, last, status.decode() if isinstance(status, bytes) else str(status)


def signed_volumes(x, T):
    a, b_, c, d = (x[T[:, k]] for k in range(4))
    return np.einsum("ij,ij->i", np.cross(b_ - a, c - a), d - a) / 6.0


def stability(path, max_disp_limit):
    """The stability criterion: every position finite, no element inverted or flat (signed volume <= 0
    where the rest volume is > 0), max |x - X| <= max_disp_limit. Returns dict."""
    X, T, x, last, status = final_state(path)
    finite = bool(np.isfinite(x).all())
    v0 = signed_volumes(X, T)
    v = signed_volumes(x, T) if finite else np.full(len(T), np.nan)
    inverted = int(np.sum(~(v * np.sign(v0) > 0)))
    disp = float(np.max(np.linalg.norm(x - X, axis=1))) if finite else float("inf")
    jmin = float(np.min(v / v0)) if finite else float("nan")
    return dict(finite=int(finite), inverted=inverted, max_disp=disp, min_J=jmin, last_frame=int(last),
                stable=int(finite and inverted == 0 and disp <= max_disp_limit))
