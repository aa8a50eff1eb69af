#!/usr/bin/python3
"""PBNG throughput benchmark (not a test: it prints figures and writes a CSV).

Runs `pbng -scene box_stretch_twist -res R -frames 1 -iters N -rtol 0 -material M -threads T`
for every (resolution, material, threads) configuration, several times, with the
configurations interleaved (repeat loop outermost) so that slow drifts in machine
load hit all of them alike.  Each run's JSON summary gives the solver time per
iteration (setup, residual evaluation and output excluded), element visits per
second and peak memory.  For each configuration we report the median, min and max
over the repeats, the peak bytes per tetrahedron (max over repeats) and the
T-thread / 1-thread speed-up from the medians of the same sweep.

Results: bench/results/throughput-<hostname>-<YYYYMMDD-HHMM>.csv and
bench/results/throughput-latest.csv (overwritten), each headed by a comment block
describing the machine, the build and the command line.

Standard library only; run with /usr/bin/python3.  See bench/README.md.
"""

import argparse
import datetime
import hashlib
import json
import os
import platform
import shlex
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

BENCH_DIR = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(BENCH_DIR)
RESULTS_DIR = os.path.join(BENCH_DIR, "results")
SCENE = "box_stretch_twist"
ALL_MATERIALS = ("neohookean", "corotated", "stable_neohookean")
BUILD_HINT = "cmake -S . -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build -j2"

# Targets (judged at Res-64 or finer, and for throughput with 2 threads).
TARGET_RES = 64
TARGET_THREADS = 2
TARGET_MVISITS = {"neohookean": 50.0, "corotated": 20.0}
# The paper's material against the cheapest one: corotated visits/s >= this x neo-Hookean's, same Res and threads
# (the ratio of each repeat's two runs, which run one after the other, then the median over repeats).
TARGET_COROTATED_RATIO = 0.6
TARGET_BYTES_PER_TET = 150.0
# Paper (Table 1, PBNG runtime per iteration, box stretching; AMD Ryzen Threadripper
# PRO 3995WX, 64 cores / 128 threads).
PAPER_MS_PER_ITER = {32: 28.0, 64: 65.0, 128: 1520.0}
PAPER_MACHINE = "AMD Ryzen Threadripper PRO 3995WX, 64 cores / 128 threads"


class BenchError(Exception):
    pass


# ----------------------------------------------------------------------------- helpers

def int_list(text):
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError("expected comma-separated integers, got %r" % text)
    if not values or any(v <= 0 for v in values):
        raise argparse.ArgumentTypeError("expected positive integers, got %r" % text)
    return values


def material_list(text):
    values = [v.strip() for v in text.split(",") if v.strip()]
    bad = [v for v in values if v not in ALL_MATERIALS]
    if not values or bad:
        raise argparse.ArgumentTypeError(
            "unknown material(s) %s; choose from %s" % (", ".join(bad) or "(none)", ", ".join(ALL_MATERIALS)))
    return values


def default_repeats(res):
    return 5 if res <= 32 else 3


def command_output(cmd):
    """First non-empty stdout of a command, or '' if it cannot be run."""
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return ""
    return p.stdout if p.returncode == 0 else ""


def load_average():
    out = command_output(["uptime"]).strip()
    if "load average:" in out:
        return out.split("load average:", 1)[1].strip()
    try:
        return " ".join(open("/proc/loadavg").read().split()[:3])
    except OSError:
        return "unknown"


def load1():
    try:
        return float(open("/proc/loadavg").read().split()[0])
    except (OSError, ValueError, IndexError):
        return float("nan")


def machine_info():
    info = {}
    cpu = ""
    for line in command_output(["lscpu"]).splitlines():
        if line.startswith("Model name:"):
            cpu = line.split(":", 1)[1].strip()
            break
    info["cpu_model"] = cpu or platform.processor() or "unknown"
    info["nproc"] = command_output(["nproc"]).strip() or str(os.cpu_count())
    mem = "unknown"
    for line in command_output(["free", "-g"]).splitlines():
        if line.startswith("Mem:"):
            f = line.split()
            mem = "%s GiB total, %s GiB available (free -g)" % (f[1], f[6] if len(f) > 6 else "?")
            break
    info["memory"] = mem
    os_name = "unknown"
    try:
        for line in open("/etc/os-release"):
            if line.startswith("PRETTY_NAME="):
                os_name = line.split("=", 1)[1].strip().strip('"')
                break
    except OSError:
        pass
    info["os"] = "%s (kernel %s)" % (os_name, platform.release())
    cc = command_output(["cc", "--version"]).splitlines()
    info["compiler"] = cc[0].strip() if cc else "unknown (cc --version failed)"
    return info


def git_commit(repo):
    commit = command_output(["git", "-C", repo, "rev-parse", "--short", "HEAD"]).strip()
    if not commit:
        return "unknown (not a git checkout?)", []
    # --no-optional-locks: read-only, never refreshes the index.
    status = command_output(["git", "--no-optional-locks", "-C", repo, "status", "--porcelain"])
    dirty = [line[3:] for line in status.splitlines() if line.strip()]
    return commit + ("-dirty" if dirty else ""), dirty


def build_type(pbng):
    """CMAKE_BUILD_TYPE from the CMakeCache.txt of the build tree holding pbng, if any."""
    d = os.path.dirname(os.path.dirname(os.path.abspath(pbng)))  # build/bin/pbng -> build
    try:
        for line in open(os.path.join(d, "CMakeCache.txt")):
            if line.startswith("CMAKE_BUILD_TYPE:"):
                return line.split("=", 1)[1].strip() or "(empty)"
    except OSError:
        pass
    return "unknown"


def binary_id(path):
    """sha256 prefix and mtime of the binary, to notice a rebuild during the sweep."""
    try:
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        mtime = datetime.datetime.fromtimestamp(os.path.getmtime(path)).astimezone()
        return "sha256 %s, built %s" % (h.hexdigest()[:12], mtime.isoformat(timespec="seconds"))
    except OSError as e:
        return "unreadable (%s)" % e


def fmt_duration(seconds):
    seconds = int(round(seconds))
    if seconds < 60:
        return "%ds" % seconds
    if seconds < 3600:
        return "%dm%02ds" % divmod(seconds, 60)
    h, rest = divmod(seconds, 3600)
    return "%dh%02dm" % (h, rest // 60)


def add_run_options(ap):
    """--iters and --pbng, as both benchmarks take them."""
    ap.add_argument("--iters", type=int, default=40, help="PBNG iterations per run (default 40)")
    ap.add_argument("--pbng", default=os.path.join(REPO, "build", "bin", "pbng"),
                    help="pbng binary (default <repo>/build/bin/pbng)")


def add_out_option(ap):
    ap.add_argument("--out", default=None,
                    help="scratch directory for the .h5 outputs (default: a temporary directory removed at the end)")


# ----------------------------------------------------------------------------- running

# JSON summary keys throughput.py reads (scaling.py asks for more).
NEED = ("seconds_per_iteration", "element_visits_per_second", "iterations", "elements",
        "nodes", "colors", "peak_rss_bytes_total", "bytes_per_element", "threads", "ranks")


def find_pbng(path):
    """Absolute path of the pbng binary, or None after saying on stderr how to build it."""
    pbng = os.path.abspath(path)
    if not (os.path.isfile(pbng) and os.access(pbng, os.X_OK)):
        print("error: pbng binary not found (or not executable): %s\n"
              "Build it first, in Release, from %s:\n    %s\n"
              "or point --pbng at an existing binary." % (pbng, REPO, BUILD_HINT), file=sys.stderr)
        return None
    return pbng


def run_pbng(pbng, scratch, stem, res, material, threads, iters, need, prefix=(), env=None, ranks=None,
             missing_hint=""):
    """Run `PREFIX pbng -scene SCENE -res RES -frames 1 -iters ITERS -material M -threads T` once, with its
    outputs in scratch/<stem>.*, and return its JSON summary plus "wall_seconds".

    prefix: launcher words before pbng (an mpiexec command line; none for a plain run); env: its environment
    (default inherited).  The summary must hold every key in need (else BenchError, with missing_hint appended),
    report `threads` threads and, if ranks is given, `ranks` ranks.  Everything the run wrote is deleted."""
    h5 = os.path.join(scratch, stem + ".h5")
    js = os.path.join(scratch, stem + ".json")
    cmd = list(prefix) + [pbng, "-scene", SCENE, "-res", str(res), "-frames", "1", "-iters", str(iters), "-rtol", "0",
                          "-material", material, "-threads", str(threads), "-output", h5, "-summary", js]
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    except OSError as e:
        raise BenchError("could not start %s: %s" % (cmd[0], e))
    wall = time.monotonic() - t0
    try:
        if p.returncode != 0:
            raise BenchError("run failed (exit status %d): %s\n--- stderr ---\n%s--- stdout (last 20 lines) ---\n%s"
                             % (p.returncode, shlex.join(cmd), p.stderr,
                                "\n".join(p.stdout.splitlines()[-20:]) + "\n"))
        try:
            with open(js) as f:
                summary = json.load(f)
        except (OSError, ValueError) as e:
            raise BenchError("run succeeded but its JSON summary %s is unreadable (%s): %s\n--- stderr ---\n%s"
                             % (js, e, shlex.join(cmd), p.stderr))
        missing = [k for k in need if k not in summary]
        if missing:
            raise BenchError("JSON summary %s lacks %s%s: %s" % (js, ", ".join(missing), missing_hint, shlex.join(cmd)))
        if ranks is not None and int(summary["ranks"]) != ranks:
            raise BenchError("asked for %d ranks but pbng reports %s (is %s the MPI that pbng was built with?): %s"
                             % (ranks, summary["ranks"], cmd[0], shlex.join(cmd)))
        if int(summary["threads"]) != threads:
            raise BenchError("asked for %d threads but pbng reports %s: %s" % (threads, summary["threads"], shlex.join(cmd)))
        if int(summary["iterations"]) != iters:
            print("  warning: asked for %d iterations, pbng ran %s" % (iters, summary["iterations"]), flush=True)
        summary["wall_seconds"] = wall
        return summary
    finally:
        # The .h5 outputs are large: delete everything this run wrote as soon as it is read.
        for name in os.listdir(scratch):
            if name.startswith(stem + "."):  # .h5 .xdmf .json and their .partial
                try:
                    os.remove(os.path.join(scratch, name))
                except OSError:
                    pass


def run_once(pbng, scratch, res, material, threads, iters, rep):
    return run_pbng(pbng, scratch, "r%d-%s-t%d-rep%d" % (res, material, threads, rep), res, material, threads,
                    iters, NEED)


class Sweep:
    """One benchmark sweep: the build, the machine and the timing it records, and the steps both benchmarks
    share (set-up report, interleaved runs with progress and ETA, closing lines, CSV header and files).

    Created after the pbng binary is found; warns on stderr when pbng is not a Release build."""

    def __init__(self, pbng):
        self.pbng = pbng
        self.btype = build_type(pbng)
        self.pbng_id = binary_id(pbng)
        if self.btype not in ("Release", "unknown"):
            print("warning: %s was built with CMAKE_BUILD_TYPE=%s, not Release; figures will not be representative.\n"
                  "         rebuild: %s" % (pbng, self.btype, BUILD_HINT), file=sys.stderr)
        self.start = datetime.datetime.now().astimezone()
        self.load_start = load_average()
        self.cmdline = shlex.join([sys.executable] + sys.argv)
        self.info = machine_info()
        self.nproc = int(self.info["nproc"]) if self.info["nproc"].isdigit() else 0
        self.commit, self.dirty = git_commit(REPO)
        self.host = socket.gethostname().split(".")[0] or "unknown"
        self.runs = {}

    def print_setup(self, *extra):
        """The build, the machine and its load (extra lines go after the pbng line)."""
        print("  pbng %s (%s; %s), commit %s" % (self.pbng, self.btype, self.pbng_id, self.commit))
        for line in extra:
            print(line)
        print("  %s, nproc %s, %s" % (self.info["cpu_model"], self.info["nproc"], self.info["memory"]))
        print("  load average at start: %s" % self.load_start)
        if load1() > 0.5:
            print("  warning: the machine is not idle (1-minute load %.2f > 0.5); timings will be noisy. "
                  "For figures worth quoting run on an idle machine." % load1())

    def run(self, schedule, run_one, describe, out, scratch_prefix, failed_note=None):
        """Call run_one(scratch, rep, key) -> JSON summary for each (rep, key) of schedule (rep from 0), printing
        `[i/n] describe(rep, key, summary)  (wall, ETA)` after each, and collect self.runs {key: [summary, ...]}.

        out: scratch directory for the outputs (None: a temporary one, removed at the end).  Returns 0, or the
        exit status after an error (1, with failed_note on stderr if given) or Ctrl-C (130)."""
        own_scratch = out is None
        scratch = tempfile.mkdtemp(prefix=scratch_prefix) if own_scratch else os.path.abspath(out)
        os.makedirs(scratch, exist_ok=True)
        first_wall = {}
        t_sweep = time.monotonic()
        try:
            for i, (rep, key) in enumerate(schedule, 1):
                s = run_one(scratch, rep, key)
                self.runs.setdefault(key, []).append(s)
                first_wall.setdefault(key, s["wall_seconds"])
                remaining = schedule[i:]
                eta = ""
                if all(k in first_wall for _, k in remaining):
                    eta = ", ETA %s" % fmt_duration(sum(first_wall[k] for _, k in remaining))
                print("[%*d/%d] %s  (%.1f s wall%s)" % (len(str(len(schedule))), i, len(schedule),
                                                        describe(rep, key, s), s["wall_seconds"], eta), flush=True)
        except BenchError as e:
            print("\nerror: %s" % e, file=sys.stderr)
            if failed_note:
                print(failed_note, file=sys.stderr)
            return 1
        except KeyboardInterrupt:
            print("\ninterrupted; no results written", file=sys.stderr)
            return 130
        finally:
            if own_scratch:
                shutil.rmtree(scratch, ignore_errors=True)
        self.seconds = time.monotonic() - t_sweep
        self.end = datetime.datetime.now().astimezone()
        self.load_end = load_average()
        self.pbng_id_end = binary_id(self.pbng)
        self.rebuilt = self.pbng_id_end != self.pbng_id
        return 0

    def print_end(self):
        print()
        if self.rebuilt:
            print("WARNING: %s changed during the sweep (%s -> %s); the runs mix two builds, rerun the sweep."
                  % (self.pbng, self.pbng_id, self.pbng_id_end))
        print("sweep took %s; load average at start: %s; at end: %s"
              % (fmt_duration(self.seconds), self.load_start, self.load_end))

    def csv_header(self, title, extra, launcher, res_name, iters, order, tail):
        """The CSV's comment lines: title, machine (then the extra lines), build, dates, load, command, the run
        (`launcher` words before pbng; Res-`res_name`), `order`, OMP environment, then the tail lines."""
        info = self.info
        header = [title, "host: %s" % self.host, "cpu_model: %s" % info["cpu_model"], "nproc: %s" % info["nproc"],
                  "memory: %s" % info["memory"], "os: %s" % info["os"], "compiler: %s" % info["compiler"]]
        header += list(extra)
        header += ["pbng: %s (CMAKE_BUILD_TYPE %s; %s)" % (self.pbng, self.btype, self.pbng_id),
                   "git_commit: %s" % self.commit]
        if self.dirty:
            header.append("git_dirty_paths: %s%s" % (" ".join(self.dirty[:10]), " ..." if len(self.dirty) > 10 else ""))
        if self.rebuilt:
            header.append("WARNING: pbng changed during the sweep (now %s); the runs mix two builds" % self.pbng_id_end)
        omp_env = " ".join("%s=%s" % (k, v) for k, v in sorted(os.environ.items()) if k.startswith(("OMP_", "GOMP_")))
        header += [
            "date_start: %s" % self.start.isoformat(timespec="seconds"),
            "date_end: %s" % self.end.isoformat(timespec="seconds"),
            "sweep_seconds: %.1f" % self.seconds,
            "load_average_start: %s" % self.load_start,
            "load_average_end: %s" % self.load_end,
            "command: %s" % self.cmdline,
            "cwd: %s" % os.getcwd(),
            "run: %s%s -scene %s -res %s -frames 1 -iters %d -rtol 0 -material M -threads T -output DIR/x.h5 -summary DIR/s.json"
            % (launcher, self.pbng, SCENE, res_name, iters),
            "order: %s" % order,
            "environment: %s" % (omp_env or "(no OMP_* variables set)"),
        ]
        return header + list(tail)

    def write_results(self, results_dir, name, header, rows, columns, relto):
        """<name>-<host>-<YYYYMMDD-HHMM>.csv and <name>-latest.csv in results_dir; says so, paths relative to relto."""
        os.makedirs(results_dir, exist_ok=True)
        stamped = os.path.join(results_dir, "%s-%s-%s.csv" % (name, self.host, self.start.strftime("%Y%m%d-%H%M")))
        latest = os.path.join(results_dir, "%s-latest.csv" % name)
        write_csv(stamped, header, rows, columns)
        write_csv(latest, header, rows, columns)
        print("wrote %s\n      %s" % (os.path.relpath(stamped, relto), os.path.relpath(latest, relto)))


# ----------------------------------------------------------------------------- report

def run_stats(rs):
    """Figures both benchmarks report for one configuration, from its runs' JSON summaries."""
    ms = [1e3 * r["seconds_per_iteration"] for r in rs]
    mv = [r["element_visits_per_second"] / 1e6 for r in rs]
    first = rs[0]
    return {
        "nodes": first["nodes"], "elements": first["elements"], "colors": first["colors"],
        "iterations": first["iterations"], "repeats": len(rs),
        "ms_med": statistics.median(ms), "ms_min": min(ms), "ms_max": max(ms),
        "mv_med": statistics.median(mv), "mv_min": min(mv), "mv_max": max(mv),
        "bpt_max": max(r["bytes_per_element"] for r in rs),
        "wall_med": statistics.median(r["wall_seconds"] for r in rs),
        "ms_runs": ms,
    }


def aggregate(runs, configs, threads_list):
    rows = []
    by_cfg = {c: runs.get(c, []) for c in configs}
    for (res, material, threads) in configs:
        rs = by_cfg[(res, material, threads)]
        row = run_stats(rs)
        row.update({
            "res": res, "material": material, "threads": threads, "ranks": rs[0]["ranks"],
            "rss_mib_max": max(r["peak_rss_bytes_total"] for r in rs) / 1048576.0,
        })
        row["speedup"] = None
        if threads != 1 and (res, material, 1) in by_cfg:
            row["speedup"] = statistics.median(1e3 * r["seconds_per_iteration"] for r in by_cfg[(res, material, 1)]) / row["ms_med"]
        # targets
        notes = []
        met = []
        if res >= TARGET_RES and threads == TARGET_THREADS and material in TARGET_MVISITS:
            t = TARGET_MVISITS[material]
            ok = row["mv_med"] >= t
            notes.append(">=%gM visits/s %s" % (t, "MET" if ok else "NOT MET"))
            met.append(ok)
        if res >= TARGET_RES:
            ok = row["bpt_max"] <= TARGET_BYTES_PER_TET
            notes.append("<=%g B/tet %s" % (TARGET_BYTES_PER_TET, "MET" if ok else "NOT MET"))
            met.append(ok)
        if res in PAPER_MS_PER_ITER:
            notes.append("paper %g ms/it @64 cores" % PAPER_MS_PER_ITER[res])
        row["targets"] = "; ".join(notes)
        row["targets_met"] = "" if not met else ("yes" if all(met) else "no")
        rows.append(row)
    return rows


def print_table(rows, threads_list):
    other = [t for t in threads_list if t != 1]
    sp_head = "%s/1t" % ("/".join("%dt" % t for t in other) if other else "T")
    head = ("%-4s %-17s %3s %9s %3s  %-27s %-25s %7s %7s  %s"
            % ("Res", "material", "thr", "tets", "col", "ms/iteration med [min-max]",
               "M visits/s med [min-max]", "B/tet", sp_head, "targets / reference"))
    print(head)
    print("-" * len(head))
    for r in rows:
        ms = "%9s [%s-%s]" % (g4(r["ms_med"]), g4(r["ms_min"]), g4(r["ms_max"]))
        mv = "%7.2f [%.2f-%.2f]" % (r["mv_med"], r["mv_min"], r["mv_max"])
        sp = "%.2fx" % r["speedup"] if r["speedup"] is not None else "-"
        print("%-4d %-17s %3d %9d %3d  %-27s %-25s %7.0f %7s  %s"
              % (r["res"], r["material"], r["threads"], r["elements"], r["colors"], ms, mv,
                 r["bpt_max"], sp, r["targets"]))


def g4(x):
    """ms with about four significant digits."""
    if x >= 1000:
        return "%.0f" % x
    if x >= 100:
        return "%.1f" % x
    if x >= 10:
        return "%.2f" % x
    return "%.3f" % x


def print_targets(rows):
    print()
    print("Targets (median, Res-%d, %d threads):" % (TARGET_RES, TARGET_THREADS))
    for material, t in TARGET_MVISITS.items():
        hits = [r for r in rows if r["material"] == material and r["res"] == TARGET_RES and r["threads"] == TARGET_THREADS]
        if hits:
            r = hits[0]
            print("  %-11s >= %2g M visits/s : %.2f M visits/s  %s" % (material, t, r["mv_med"], "MET" if r["mv_med"] >= t else "NOT MET"))
        else:
            print("  %-11s >= %2g M visits/s : not measured (needs --res %d --threads %d --materials %s)"
                  % (material, t, TARGET_RES, TARGET_THREADS, material))
    big = [r for r in rows if r["res"] >= TARGET_RES]
    if big:
        worst = max(big, key=lambda r: r["bpt_max"])
        print("  peak memory <= %g bytes/tet (Res-%d+): worst %.0f B/tet (Res-%d %s %dt)  %s"
              % (TARGET_BYTES_PER_TET, TARGET_RES, worst["bpt_max"], worst["res"], worst["material"],
                 worst["threads"], "MET" if worst["bpt_max"] <= TARGET_BYTES_PER_TET else "NOT MET"))
    else:
        print("  peak memory <= %g bytes/tet: judged at Res-%d+ only (below that the fixed ~40 MiB of the"
              " MPI/PETSc runtime dominates); not measured" % (TARGET_BYTES_PER_TET, TARGET_RES))
    print("Paper reference (Table 1, %s): 28 ms/iteration at Res-32, 65 ms at Res-64, 1.52 s at Res-128."
          % PAPER_MACHINE)
    for res in sorted({r["res"] for r in rows}):
        if res in PAPER_MS_PER_ITER:
            best = min((r for r in rows if r["res"] == res), key=lambda r: r["ms_med"])
            print("  Res-%d here: best median %s ms/iteration (%s, %d thread(s)) vs paper %g ms"
                  % (res, g4(best["ms_med"]), best["material"], best["threads"], PAPER_MS_PER_ITER[res]))


def corotated_ratios(runs, configs):
    """{(res, threads): (median, min, max, n)} of corotated / neo-Hookean visits/s, one ratio per repeat (the two runs
    of a repeat are neighbours in the interleaved schedule, so a drift in machine load hits both alike)."""
    out = {}
    for (res, material, threads) in configs:
        if material != "corotated" or (res, "neohookean", threads) not in configs:
            continue
        cor, nh = runs.get((res, material, threads), []), runs.get((res, "neohookean", threads), [])
        ratios = [c["element_visits_per_second"] / n["element_visits_per_second"] for c, n in zip(cor, nh)]
        if ratios:
            out[(res, threads)] = (statistics.median(ratios), min(ratios), max(ratios), len(ratios))
    return out


def print_ratios(ratios):
    if not ratios:
        print("Corotated / neo-Hookean visits/s: not measured (needs --materials corotated,neohookean)")
        return
    print("Corotated / neo-Hookean visits/s (ratio of each repeat's two runs; median [min-max]; target >= %g at Res-%d+,"
          " %d threads):" % (TARGET_COROTATED_RATIO, TARGET_RES, TARGET_THREADS))
    for (res, threads), (med, lo, hi, n) in sorted(ratios.items()):
        judged = res >= TARGET_RES and threads == TARGET_THREADS
        print("  Res-%-3d %dt: %.3f [%.3f-%.3f] over %d repeats%s" % (res, threads, med, lo, hi, n,
              ("  %s" % ("MET" if med >= TARGET_COROTATED_RATIO else "NOT MET")) if judged else ""))


# CSV columns that both benchmarks write, by name; each lists its own columns in order with columns().
SHARED_COLUMNS = {
    "res": lambda r: r["res"], "material": lambda r: r["material"],
    "ranks": lambda r: r["ranks"], "threads": lambda r: r["threads"],
    "nodes": lambda r: r["nodes"], "tets": lambda r: r["elements"], "colors": lambda r: r["colors"],
    "iterations": lambda r: r["iterations"], "repeats": lambda r: r["repeats"],
    "ms_per_iter_median": lambda r: "%.4f" % r["ms_med"], "ms_per_iter_min": lambda r: "%.4f" % r["ms_min"],
    "ms_per_iter_max": lambda r: "%.4f" % r["ms_max"],
    "mvisits_per_s_median": lambda r: "%.3f" % r["mv_med"], "mvisits_per_s_min": lambda r: "%.3f" % r["mv_min"],
    "mvisits_per_s_max": lambda r: "%.3f" % r["mv_max"],
    "bytes_per_tet_max": lambda r: "%.1f" % r["bpt_max"],
    "wall_seconds_median": lambda r: "%.2f" % r["wall_med"],
    "ms_per_iter_runs": lambda r: " ".join("%.4f" % x for x in r["ms_runs"]),
}


def columns(names, **own):
    """[(name, getter)] for the whitespace-separated column names: own getters first, else SHARED_COLUMNS."""
    return [(n, own[n] if n in own else SHARED_COLUMNS[n]) for n in names.split()]


CSV_COLUMNS = columns(
    "res material threads ranks nodes tets colors iterations repeats"
    " ms_per_iter_median ms_per_iter_min ms_per_iter_max mvisits_per_s_median mvisits_per_s_min mvisits_per_s_max"
    " bytes_per_tet_max peak_rss_mib_max speedup_vs_1thread wall_seconds_median targets targets_met ms_per_iter_runs"
    " corotated_to_neohookean_median",
    corotated_to_neohookean_median=lambda r: "" if r.get("ratio") is None else "%.4f" % r["ratio"],
    peak_rss_mib_max=lambda r: "%.1f" % r["rss_mib_max"],
    speedup_vs_1thread=lambda r: "" if r["speedup"] is None else "%.3f" % r["speedup"],
    targets=lambda r: r["targets"], targets_met=lambda r: r["targets_met"])


def csv_field(v):
    s = str(v)
    if any(c in s for c in ',"\n'):
        s = '"' + s.replace('"', '""') + '"'
    return s


def write_csv(path, header_lines, rows, cols=CSV_COLUMNS):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        for line in header_lines:
            f.write("# " + line + "\n")
        f.write(",".join(name for name, _ in cols) + "\n")
        for r in rows:
            f.write(",".join(csv_field(get(r)) for _, get in cols) + "\n")
    os.replace(tmp, path)


# ----------------------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(
        description="PBNG throughput benchmark: sweep resolutions x materials x threads, interleaved repeats, "
                    "report medians; writes bench/results/throughput-<host>-<date>.csv and throughput-latest.csv.")
    ap.add_argument("--res", type=int_list, default=[32, 64], help="Res-N list (default 32,64; add 128 for the big one)")
    ap.add_argument("--materials", type=material_list, default=list(ALL_MATERIALS),
                    help="comma-separated (default %s)" % ",".join(ALL_MATERIALS))
    ap.add_argument("--threads", type=int_list, default=[1, 2], help="OpenMP thread counts (default 1,2)")
    ap.add_argument("--repeats", type=int, default=None,
                    help="repeats per configuration (default 5 at Res-32 and below, 3 above)")
    add_run_options(ap)
    add_out_option(ap)
    args = ap.parse_args()
    if args.repeats is not None and args.repeats <= 0:
        ap.error("--repeats must be positive")
    if args.iters <= 0:
        ap.error("--iters must be positive")

    pbng = find_pbng(args.pbng)
    if pbng is None:
        return 2
    sweep = Sweep(pbng)

    resolutions = args.res
    repeats = {r: (args.repeats if args.repeats is not None else default_repeats(r)) for r in resolutions}
    configs = [(r, m, t) for r in resolutions for m in args.materials for t in args.threads]
    schedule = [(rep, c) for rep in range(max(repeats.values())) for c in configs if rep < repeats[c[0]]]

    print("PBNG throughput: scene %s, %d iterations/run, %d configurations, %d runs (interleaved, repeat loop outermost)"
          % (SCENE, args.iters, len(configs), len(schedule)))
    print("  res %s | materials %s | threads %s | repeats %s"
          % (",".join(map(str, resolutions)), ",".join(args.materials), ",".join(map(str, args.threads)),
             ", ".join("Res-%d: %d" % (r, repeats[r]) for r in resolutions)))
    sweep.print_setup()
    if sweep.nproc and max(args.threads) > sweep.nproc:
        print("  warning: more threads (%d) than cores (%s)" % (max(args.threads), sweep.info["nproc"]))
    sys.stdout.flush()

    def run_one(scratch, rep, cfg):
        res, material, threads = cfg
        return run_once(pbng, scratch, res, material, threads, args.iters, rep + 1)

    def describe(rep, cfg, s):
        res, material, threads = cfg
        return ("Res-%-3d %-17s %dt rep %d/%d: %9s ms/iteration %8.2f M visits/s"
                % (res, material, threads, rep + 1, repeats[res],
                   g4(1e3 * s["seconds_per_iteration"]), s["element_visits_per_second"] / 1e6))

    status = sweep.run(schedule, run_one, describe, args.out, "pbng-bench-")
    if status:
        return status
    rows = aggregate(sweep.runs, configs, args.threads)
    ratios = corotated_ratios(sweep.runs, configs)
    for r in rows:
        if r["material"] == "corotated" and (r["res"], r["threads"]) in ratios:
            r["ratio"] = ratios[(r["res"], r["threads"])][0]

    print()
    print("Medians over repeats; B/tet = peak RSS / tets, max over repeats; speed-up from medians.")
    print_table(rows, args.threads)
    print_targets(rows)
    print_ratios(ratios)
    sweep.print_end()

    header = sweep.csv_header(
        "PBNG throughput benchmark (bench/throughput.py); one row per configuration, statistics over repeats",
        [], "", "R", args.iters,
        "interleaved, repeat loop outermost; repeats: %s" % ", ".join("Res-%d %d" % (r, repeats[r]) for r in resolutions),
        ["units: ms_per_iter = solver seconds per PBNG iteration (setup, residual evaluation, output excluded);"
         " mvisits_per_s = element visits (4 x tets per iteration) per second / 1e6;"
         " bytes_per_tet = peak RSS summed over ranks / tets",
         "targets: neohookean >= 50 M visits/s and corotated >= 20 M visits/s at Res-64 with 2 threads;"
         " corotated >= %g x neohookean visits/s there (corotated_to_neohookean_median: the median over repeats of"
         " the ratio of each repeat's two runs); peak memory <= 150 bytes/tet (judged at Res-64+)" % TARGET_COROTATED_RATIO,
         "paper: 28 ms/iteration Res-32, 65 ms Res-64, 1520 ms Res-128 (Table 1, %s)" % PAPER_MACHINE])
    sweep.write_results(RESULTS_DIR, "throughput", header, rows, CSV_COLUMNS, REPO)
    return 0


if __name__ == "__main__":
    sys.exit(main())
