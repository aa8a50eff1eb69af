"""Shared helpers of the bench/paper/ scripts (the paper's comparisons, issue 5).

Each script runs the pbng binary, parses its -monitor lines or reads its HDF5 output, prints a table and
writes bench/results/paper-<name>-<host>-<stamp>.csv and .png.  Standard library + numpy, h5py and
matplotlib (Debian's python3-numpy, python3-h5py, python3-matplotlib); run with /usr/bin/python3.
"""

import argparse
import datetime
import os
import re
import shlex
import socket
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.dont_write_bytecode = True
import throughput as tp  # noqa: E402  (machine info, git commit, binary lookup, CSV quoting)

RESULTS = os.path.join(os.path.dirname(HERE), "results")

# "    frame F iter L  residual R  relative Q  energy E[  S s][  linear N][  primary P  secondary S2]"
ITER_LINE = re.compile(r"^\s+frame (\d+) iter\s+(\d+)\s+residual (\S+)\s+relative (\S+)\s+energy \S+(?:\s+(\S+) s)?"
                       r"(?:\s+linear \d+)?(?:\s+primary (\S+)\s+secondary (\S+))?")


class BenchError(Exception):
    pass


def arguments(description, **defaults):
    """Common options: --pbng, --threads, --ranks, --mpiexec, --out (scratch), plus the script's own."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--pbng", default=os.path.join(tp.REPO, "build", "bin", "pbng"), help="pbng binary (default <repo>/build/bin/pbng)")
    ap.add_argument("--threads", type=int, default=defaults.get("threads", 2), help="OpenMP threads per rank")
    ap.add_argument("--ranks", type=int, default=1, help="MPI ranks (mpiexec -n)")
    ap.add_argument("--mpiexec", default="mpiexec")
    ap.add_argument("--out", default=None, help="scratch directory for outputs and logs (default: a temporary one)")
    return ap


class Runner:
    """Runs pbng commands (logged) in a scratch directory."""

    def __init__(self, args):
        self.args = args
        self.pbng = tp.find_pbng(args.pbng)
        if not self.pbng:
            raise SystemExit(2)
        self._tmp = None if args.out else tempfile.TemporaryDirectory(prefix="pbng-paper-")
        self.scratch = args.out or self._tmp.name
        os.makedirs(self.scratch, exist_ok=True)
        self.commands = []

    def command(self, options):
        launch = []
        if self.args.ranks > 1:
            launch = [self.args.mpiexec, "-n", str(self.args.ranks), "--bind-to", "none", "--oversubscribe"]
        return launch + [self.pbng, "-threads", str(self.args.threads)] + [str(o) for o in options]

    def run(self, stem, options):
        """Runs pbng with the options (plus -output SCRATCH/stem.h5); returns (log text, output path)."""
        out = os.path.join(self.scratch, stem + ".h5")
        options = [str(o) for o in options]
        if "-rtol" not in options:  # the paper's fixed iterations, not pbng's default tolerance (docs/options.md)
            options += ["-rtol", "0"]
        cmd = self.command(options + ["-output", out])
        self.commands.append(" ".join(shlex.quote(c) for c in cmd))
        log = os.path.join(self.scratch, stem + ".log")
        env = dict(os.environ, OMP_WAIT_POLICY="passive", OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        with open(log, "w") as f:
            p = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, env=env)
        text = open(log).read()
        if p.returncode != 0:
            raise BenchError("command failed (exit %d): %s\n%s" % (p.returncode, self.commands[-1], text[-3000:]))
        return text, out


def monitor_curve(text, frame=None):
    """The -monitor iterates [{frame, iter, residual, relative, seconds, primary, secondary}] (of one frame)."""
    rows = []
    for line in text.splitlines():
        m = ITER_LINE.match(line)
        if not m or (frame is not None and int(m.group(1)) != frame):
            continue
        rows.append({"frame": int(m.group(1)), "iter": int(m.group(2)), "residual": float(m.group(3)), "relative": float(m.group(4)),
                     "seconds": float(m.group(5)) if m.group(5) else 0.0,
                     "primary": float(m.group(6)) if m.group(6) else float("nan"),
                     "secondary": float(m.group(7)) if m.group(7) else float("nan")})
    if not rows:
        raise BenchError("no -monitor lines found")
    return rows


def positions(path, frame=1):
    import h5py
    with h5py.File(path, "r") as f:
        return f["mesh/rest_positions"][:], f["frames/%06d/positions" % frame][:], dict(f["frames/%06d" % frame].attrs)


def stamp():
    return "%s-%s" % (socket.gethostname().split(".")[0], datetime.datetime.now().strftime("%Y%m%d-%H%M"))


def header(runner, title, extra=()):
    """CSV header lines: what, machine, build, commands."""
    m = tp.machine_info()
    commit, _ = tp.git_commit(tp.REPO)
    lines = [title, "date %s" % datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
             "machine: %s, %s cores, %s, %s, %s" % (m["cpu_model"], m["nproc"], m["memory"], m["os"], m["compiler"]),
             "pbng %s (%s build), %d rank(s) x %d thread(s)" % (commit, tp.build_type(runner.pbng), runner.args.ranks, runner.args.threads)]
    lines += list(extra)
    lines += ["command: " + c.replace(runner.scratch + "/", "") for c in runner.commands]
    return lines


def write_csv(path, header_lines, columns, rows):
    """rows: list of dicts; columns: their keys in order."""
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        for line in header_lines:
            f.write("# " + line + "\n")
        f.write(",".join(columns) + "\n")
        for r in rows:
            f.write(",".join(tp.csv_field(r.get(c, "")) for c in columns) + "\n")
    os.replace(tmp, path)


def outputs(name):
    """(csv path, png path) in bench/results/."""
    os.makedirs(RESULTS, exist_ok=True)
    base = os.path.join(RESULTS, "paper-%s-%s" % (name, stamp()))
    return base + ".csv", base + ".png"


def pyplot():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def save_figure(fig, title, csv, png):
    """Titles, lays out and writes the figure; says where the results are."""
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    print("wrote %s\n      %s" % (csv, png))


def script(main):
    """Runs a script's main, turning a BenchError into a one-line error and exit status 1."""
    try:
        main()
    except BenchError as e:
        sys.exit("error: %s" % e)
