#!/usr/bin/python3
"""pbng-dataset: a table of samples run as independent pbng equilibria (issue 21 item 2; docs/dataset.md).

Run through the wrapper build/bin/pbng-dataset, which names the pbng binary (PBNG_DATASET_PBNG).
  pbng-dataset check TABLE [--print] [--no-dry-run] [-- base pbng options]
  pbng-dataset run TABLE --out DIR [--ranks N] [--threads T] [--task ID --tasks N] [--no-dry-run]
                   [-- base pbng options]
  pbng-dataset merge DIR [--table TABLE]
  pbng-dataset sample --param NAME=LO:HI[:log] ... --n N --seed S [--set NAME=VALUE ...] [--out FILE]

Exit status: 0 every sample done (or capped), 1 some sample failed (or a merge found missing/duplicate
samples), 2 a refused table or bad arguments (nothing created), 85 stopped by a signal (pbng wrote a
checkpoint, or samples were left): run the same command again to continue."""
import argparse
import csv
import datetime
import difflib
import io
import json
import math
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

PBNG = os.environ.get("PBNG_DATASET_PBNG", "pbng")
EXIT_FAILED, EXIT_REFUSED, EXIT_STOPPED = 1, 2, 85

# The names docs/options.md lists for these options.
SCENES = ("box_stretch_twist", "bar_gravity", "block_drop_dynamic", "two_blocks_hanging", "two_blocks_colliding",
          "objects_dropping", "bar_fold", "cloth_stretch", "cloth_drape", "beam_pull", "plastic_twist",
          "cylinder_twist", "cloth_on_table", "projectile_sheet", "box", "none")
MATERIALS = ("corotated", "neohookean", "stable_neohookean", "stvk", "neohookean_log")
ELEMENTS = ("tet4", "tet10", "tet20", "hex8", "hex27")
SOLVERS = ("pbng", "newton", "pbd", "xpbd", "xpbd_qs", "xpbd_ho", "continuum_pbd", "gpbd", "sissm")
MODES = ("quasistatic", "dynamic")
INITIAL_STATES = ("rest", "flat", "inverted")
# Options the driver gives every run itself: a table may not set them.
DRIVER_OPTIONS = ("-output", "-summary", "-checkpoint", "-restart", "-dry_run", "-help")
ID_PATTERN = re.compile(r"[A-Za-z0-9_.-]+")


class Refusal(Exception):
    """A table cell (or argument) that cannot be run; the text says why."""


# --- values of cells ------------------------------------------------------------------------------------------

def cell_text(value):
    """A cell as the text given to pbng: YAML lists joined by commas, numbers as Python writes them."""
    if isinstance(value, (list, tuple)):
        return ",".join(cell_text(v) for v in value)
    if isinstance(value, bool):
        raise Refusal(f"{value} is not a value pbng takes")
    return str(value).strip()


def number(text, integer=False):
    try:
        value = int(text) if integer else float(text)
    except ValueError:
        raise Refusal(f"{text!r} is not {'an integer' if integer else 'a number'}") from None
    if not math.isfinite(value):
        raise Refusal(f"{text!r} is not a finite number")
    return value


def in_range(lo=None, hi=None, lo_open=False, hi_open=False, integer=False):
    """A checker of one number in [lo, hi] (a bound left out is none; open ends with lo_open / hi_open)."""
    def check(text):
        value = number(text, integer)
        low_ok = lo is None or (value > lo if lo_open else value >= lo)
        high_ok = hi is None or (value < hi if hi_open else value <= hi)
        if not (low_ok and high_ok):
            left = "-inf" if lo is None else f"{lo:g}"
            right = "inf" if hi is None else f"{hi:g}"
            raise Refusal(f"{text} is not in {'(' if lo_open or lo is None else '['}{left}, "
                          f"{right}{')' if hi_open or hi is None else ']'}")
        return text
    check.numeric, check.integer = True, integer
    return check


def vector(count, multiple=False, boxes=False):
    """A checker of comma-separated numbers: exactly `count` of them (or a multiple of it); boxes: min <= max."""
    def check(text):
        parts = [p.strip() for p in text.split(",")]
        if len(parts) != count and not (multiple and parts and len(parts) % count == 0):
            need = f"a multiple of {count}" if multiple else f"{count}"
            raise Refusal(f"{text!r} has {len(parts)} values (need {need}, comma-separated)")
        values = [number(p) for p in parts]
        if boxes:
            for b in range(0, len(values), 6):
                for axis in range(3):
                    if values[b + axis] > values[b + 3 + axis]:
                        raise Refusal(f"{text!r}: box {b // 6} has min > max along axis {axis}")
        return text
    return check


def choice(names):
    def check(text):
        if text not in names:
            raise Refusal(f"unknown name {text!r} (known: {', '.join(names)})")
        return text
    return check


def group_names(text):
    if not all(ID_PATTERN.fullmatch(n.strip()) for n in text.split(",")):
        raise Refusal(f"{text!r} is not a comma-separated list of node-set names")
    return text


def existing_path(text, base_dir):
    """A mesh or result file, relative to the table's directory: its absolute path (TetGen: a basename too)."""
    path = text if os.path.isabs(text) else os.path.normpath(os.path.join(base_dir, text))
    if not (os.path.exists(path) or os.path.exists(path + ".node") or os.path.exists(path + ".ele")):
        raise Refusal(f"{text!r}: no such file ({path})")
    return path


def extra_options(text):
    try:
        words = shlex.split(text)
    except ValueError as err:
        raise Refusal(f"{text!r}: {err}") from None
    for w in words:
        if w in DRIVER_OPTIONS:
            raise Refusal(f"{w} is set by pbng-dataset for every sample (see docs/dataset.md)")
    if words and not words[0].startswith("-"):
        raise Refusal(f"{text!r} does not start with an option")
    return words


BC_FIELDS = {"box": vector(6, boxes=True), "group": group_names, "velocity": vector(3), "rotation_rate": in_range(),
             "axis": vector(3), "center": vector(3), "scale_rate": vector(3), "until": in_range(lo=0)}
COLUMNS = {
    "scene": choice(SCENES), "res": in_range(2, 4096, integer=True), "mesh": "path", "element": choice(ELEMENTS),
    "frames": in_range(1, 999999, integer=True), "material": choice(MATERIALS),
    "youngs": in_range(lo=0, lo_open=True), "poisson": in_range(-1, 0.5, True, True),
    "density": in_range(lo=0, lo_open=True), "gravity": vector(3),
    "fix_box": vector(6, multiple=True, boxes=True), "fix_group": group_names,
    "initial": "path", "initial_frame": in_range(lo=-1, integer=True), "initial_state": choice(INITIAL_STATES),
    "rtol": in_range(0, 1, hi_open=True), "atol": in_range(lo=0), "iters": in_range(lo=1, integer=True),
    "dt": in_range(lo=0, lo_open=True), "mode": choice(MODES), "solver": choice(SOLVERS),
    "options": "options",
}
COLUMNS.update({f"bc{k}_{field}": check for k in range(8) for field, check in BC_FIELDS.items()})
NUMERIC_COLUMNS = [c for c, check in COLUMNS.items() if getattr(check, "numeric", False)]


# --- tables -----------------------------------------------------------------------------------------------------

class Sample:
    """One table row: its number (1-based, header not counted), id, cells as written, pbng options, and whether
    its cells passed the checks."""

    def __init__(self, number, sid, cells, args, valid):
        self.number, self.id, self.cells, self.args, self.valid = number, sid, cells, args, valid


class Table:
    def __init__(self, path, columns, rows):
        self.path, self.columns, self.rows = path, columns, rows  # rows: list of dicts column -> value


def read_table(path):
    """The rows of a CSV or YAML table, as written (before any check)."""
    try:
        with open(path, newline="") as f:
            text = f.read()
    except OSError as err:
        raise Refusal(f"{path}: cannot read it ({err.strerror})") from None
    if path.endswith((".yaml", ".yml")):
        return read_yaml(path, text)
    return read_csv(path, text)


def read_csv(path, text):
    reader = csv.reader(io.StringIO(text))
    lines = [row for row in reader if any(cell.strip() for cell in row) and not row[0].lstrip().startswith("#")]
    if not lines:
        raise Refusal(f"{path}: empty table (need a header row starting with id)")
    header = [h.strip() for h in lines[0]]
    if header[0] != "id":
        raise Refusal(f"{path} header: the first column is {header[0]!r}, not id")
    rows = []
    for n, line in enumerate(lines[1:], 1):
        if len(line) > len(header):
            raise Refusal(f"{path} row {n}: {len(line)} cells, the header has {len(header)} columns "
                          "(a cell holding commas must be quoted: \"0,-9.8,0\")")
        rows.append({h: c for h, c in zip(header, line) if c.strip() != ""})
    return Table(path, header, rows)


def read_yaml(path, text):
    import yaml
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise Refusal(f"{path}: not valid YAML ({err})") from None
    defaults = {}
    if isinstance(doc, dict):
        unknown = set(doc) - {"defaults", "samples"}
        if unknown or "samples" not in doc:
            raise Refusal(f"{path}: a YAML table is a list of samples, or a mapping with defaults: and samples: "
                          f"(found keys {', '.join(map(str, doc))})")
        defaults, doc = doc.get("defaults") or {}, doc["samples"]
        if not isinstance(defaults, dict):
            raise Refusal(f"{path}: defaults: must be a mapping of column: value")
    if not isinstance(doc, list) or not all(isinstance(r, dict) for r in doc):
        raise Refusal(f"{path}: samples must be a list of mappings (column: value)")
    columns = ["id"] + [str(k) for k in defaults if k != "id"]
    rows = []
    for r in doc:
        row = {str(k): v for k, v in {**defaults, **r}.items() if v is not None and v != ""}
        columns += [k for k in row if k not in columns]
        rows.append(row)
    return Table(path, columns, rows)


def where(table, number, sid, column):
    who = f" (id {sid})" if sid else ""
    return f"{table.path} row {number}{who}, column {column}"


def check_columns(table):
    """Unknown column names (with the closest known one)."""
    errors = []
    for c in table.columns:
        if c != "id" and c not in COLUMNS:
            close = difflib.get_close_matches(c, list(COLUMNS), n=1)
            hint = f"; did you mean {close[0]}?" if close else ""
            rows = [n for n, r in enumerate(table.rows, 1) if c in r]
            at = f"row {rows[0]}" if table.path.endswith((".yaml", ".yml")) and rows else "header"
            errors.append(f"{table.path} {at}, column {c}: unknown column{hint} (docs/dataset.md lists them)")
    return errors


def check_ids(table):
    """Missing, malformed and duplicate ids."""
    errors, first = [], {}
    for n, row in enumerate(table.rows, 1):
        sid = cell_text(row.get("id", ""))
        if not sid:
            errors.append(f"{where(table, n, None, 'id')}: missing id")
        elif not ID_PATTERN.fullmatch(sid):
            errors.append(f"{where(table, n, sid, 'id')}: {sid!r} is not an id (letters, digits, _ . -)")
        elif sid in first:
            errors.append(f"{where(table, n, sid, 'id')}: duplicate id (also row {first[sid]})")
        else:
            first[sid] = n
    return errors


def option_args(column, text, base_dir):
    """The pbng options of one checked cell."""
    check = COLUMNS[column]
    if check == "options":
        return extra_options(text)
    if check == "path":
        return [f"-{column}", existing_path(text, base_dir)]
    return [f"-{column}", check(text)]


def sample_of(table, number, row):
    """The checked sample of one row, or the list of its errors."""
    sid = cell_text(row.get("id", ""))
    base_dir = os.path.dirname(os.path.abspath(table.path))
    args, cells, errors = [], {}, []
    for column in table.columns:
        if column == "id" or column not in row or column not in COLUMNS:
            continue
        try:
            text = cell_text(row[column])
            cells[column] = text
            args += option_args(column, text, base_dir)
        except Refusal as err:
            errors.append(f"{where(table, number, sid, column)}: {err}")
    if "options" in cells and not errors:
        errors += [f"{where(table, number, sid, 'options')}: {word} is also given in column {word[1:]}"
                   for word in extra_options(cells["options"]) if word.startswith("-") and word[1:] in cells]
    return errors, Sample(number, sid, cells, args, not errors)


def checked_samples(table):
    """Every sample of the table and the problems found (each naming row and column)."""
    errors = check_columns(table) + check_ids(table)
    samples = []
    for n, row in enumerate(table.rows, 1):
        row_errors, sample = sample_of(table, n, row)
        errors += row_errors
        samples.append(sample)
    if not table.rows:
        errors.append(f"{table.path}: no samples")
    return samples, errors


def valid_samples(table):
    """Every sample of the table, or Refusal naming every problem."""
    samples, errors = checked_samples(table)
    if errors:
        raise Refusal("\n".join(errors))
    return samples


# --- dry runs ---------------------------------------------------------------------------------------------------

def dry_run_error(args, scratch):
    """pbng's error for these options (one rank, -dry_run), or None when they are valid."""
    cmd = [PBNG] + args + ["-output", os.path.join(scratch, "dry.h5"), "-dry_run"]
    # a session directory of its own: concurrent Open MPI singletons (with ess_singleton_isolated, all of one job
    # family) otherwise race on one and one of them can die in MPI_Init
    env = dict(os.environ, OMP_NUM_THREADS="1", OMPI_MCA_orte_tmpdir_base=tempfile.mkdtemp(prefix="mpi", dir=scratch))
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=scratch)
    if proc.returncode == 0:
        return None
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith("pbng: error:")]
    return lines[0][len("pbng: error: "):] if lines else (proc.stderr.strip().splitlines() or [f"exit {proc.returncode}"])[-1]


def columns_of(name):
    """The table columns an option or boundary-set name of a pbng message can come from."""
    if re.fullmatch(r"bc\d", name):
        return [name + "_box", name + "_group"]
    if re.fullmatch(r"fix_box\d+", name):
        return ["fix_box"]
    return [name]


def column_named_by(message, sample):
    """The sample's column that the first option (or boundary set) named in pbng's message comes from, else
    "options"."""
    names = re.findall(r"(?:^|[\s(\"'])-([a-z][a-z0-9_]*)", message) + re.findall(r"boundary condition (\w+)", message)
    for name in names:
        for column in columns_of(name):
            if column in sample.cells:
                return column
    return "options"


def dry_run_errors(table, samples, base):
    """Every row's options through pbng -dry_run, concurrently; the errors naming row and column."""
    with tempfile.TemporaryDirectory(prefix="pbng-dataset-") as scratch:
        workers = max(1, min(len(samples), os.cpu_count() or 1))
        with ThreadPoolExecutor(workers) as pool:
            messages = list(pool.map(lambda s: dry_run_error(base + s.args, scratch), samples))
    return [f"{where(table, s.number, s.id, column_named_by(msg, s))}: pbng -dry_run: {msg}"
            for s, msg in zip(samples, messages) if msg] if not any_unknown_dry_run(messages) else []


def any_unknown_dry_run(messages):
    if any("unknown option -dry_run" in (m or "") for m in messages):
        print("pbng-dataset: this pbng has no -dry_run: the rows were not dry-run", file=sys.stderr)
        return True
    return False


def load_samples(path, base, dry_run, pick=lambda samples: samples):
    """The table and its samples, all checked; pbng -dry_run of the picked ones."""
    table = read_table(path)
    samples, errors = checked_samples(table)
    if dry_run:
        errors += dry_run_errors(table, [s for s in pick(samples) if s.valid], base)
    if errors:
        raise Refusal("\n".join(errors))
    return table, samples


# --- the slice of an array task ---------------------------------------------------------------------------------

def task_slice(args):
    """(task, tasks): from --task/--tasks, else SLURM_ARRAY_TASK_ID/_COUNT (offset by _MIN), else (None, 1)."""
    if args.task is not None or args.tasks is not None:
        if args.task is None or args.tasks is None:
            raise Refusal("--task and --tasks go together")
        task, tasks = args.task, args.tasks
    elif os.environ.get("SLURM_ARRAY_TASK_ID"):
        if not os.environ.get("SLURM_ARRAY_TASK_COUNT"):
            raise Refusal("SLURM_ARRAY_TASK_ID is set without SLURM_ARRAY_TASK_COUNT")
        task = number(os.environ["SLURM_ARRAY_TASK_ID"], True) - number(os.environ.get("SLURM_ARRAY_TASK_MIN", "0"), True)
        tasks = number(os.environ["SLURM_ARRAY_TASK_COUNT"], True)
    else:
        return None, 1
    if tasks < 1 or not 0 <= task < tasks:
        raise Refusal(f"task {task} of {tasks}: need 0 <= task < tasks (a Slurm array's indices must be contiguous)")
    return task, tasks


def slice_of(samples, task, tasks):
    """Sample i (0-based, table order) belongs to task i mod tasks."""
    return samples if task is None else samples[task::tasks]


def index_name(task):
    return "index.csv" if task is None else f"index.task-{task}.csv"


# --- running one sample -----------------------------------------------------------------------------------------

RESULT_COLUMNS = ("status", "action", "solved_frames", "iterations", "relative_residual", "residual", "seconds",
                  "output", "log", "message")


class Runner:
    """Runs the samples of one slice into DIR/samples, one pbng run each."""

    def __init__(self, out_dir, ranks, threads, base):
        self.dir, self.ranks, self.threads, self.base = out_dir, ranks, threads, base
        self.samples_dir = os.path.join(out_dir, "samples")
        self.child = None
        self.stop_signal = None

    def paths(self, sample):
        stem = os.path.join(self.samples_dir, sample.id)
        return {"output": stem + ".h5", "summary": stem + ".json", "checkpoint": stem + ".checkpoint.h5",
                "log": stem + ".log", "args": stem + ".args.json"}

    def pbng_args(self, sample):
        p = self.paths(sample)
        return self.base + sample.args + ["-output", p["output"], "-summary", p["summary"],
                                          "-checkpoint", p["checkpoint"], "-restart", "auto"]

    def launcher(self):
        if os.environ.get("SLURM_JOB_ID"):
            nodes = os.environ.get("SLURM_JOB_NUM_NODES", "1")
            return ["srun", f"--mpi={os.environ.get('PBNG_SRUN_MPI', 'pmix')}", f"--nodes={nodes}", f"--ntasks={self.ranks}",
                    f"--cpus-per-task={self.threads}", "--cpu-bind=cores"]
        return [os.environ.get("MPIEXEC", "mpiexec"), "-n", str(self.ranks), "--bind-to", "none"] + \
            shlex.split(os.environ.get("PBNG_MPIEXEC_ARGS", ""))

    def finished(self, sample):
        """The result of an earlier run of exactly these options, complete and verified, else None."""
        p = self.paths(sample)
        summary = read_summary(p["summary"])
        if summary is None or not os.path.exists(p["output"]):
            return None
        attrs = root_attributes(p["output"])
        if attrs is None or attrs.get("status") != "complete" or attrs.get("format") != "pbng-1":
            return None
        if not same_command(attrs.get("command_line", ""), self.pbng_args(sample)):
            return None
        if attrs.get("frames_written") != summary.get("frames", -2) + 1 or attrs.get("frame_groups") != attrs.get("frames_written"):
            return None
        return self.result(sample, summary, "skipped", "")

    def result(self, sample, summary, action, message):
        p = self.paths(sample)
        status = "capped" if summary.get("capped_frames", 0) > 0 else "done"
        return {"status": status, "action": action, "solved_frames": summary.get("frames", ""),
                "iterations": summary.get("iterations", ""),
                "relative_residual": f"{summary.get('final_relative_residual', float('nan')):.6g}",
                "residual": f"{summary.get('final_residual', float('nan')):.6g}",
                "seconds": f"{summary.get('total_seconds', float('nan')):.3f}",
                "output": os.path.relpath(p["output"], self.dir), "log": os.path.relpath(p["log"], self.dir),
                "message": message}

    def unfinished(self, sample, status, action, message):
        p = self.paths(sample)
        return {"status": status, "action": action, "output": os.path.relpath(p["output"], self.dir),
                "log": os.path.relpath(p["log"], self.dir), "message": message}

    def run(self, sample):
        """Runs (or continues from its checkpoint) one sample; its result row."""
        p = self.paths(sample)
        args = self.pbng_args(sample)
        action = "continued" if self.keep_checkpoint(sample, args) else "run"
        atomic_write(p["args"], json.dumps(args) + "\n")
        if os.path.exists(p["summary"]):
            os.remove(p["summary"])
        cmd = self.launcher() + [PBNG] + args
        env = dict(os.environ, OMP_NUM_THREADS=str(self.threads))
        started = time.time() - 1
        with open(p["log"], "a") as log:
            log.write(f"[{datetime.datetime.now().isoformat(timespec='seconds')}] pbng-dataset: {' '.join(cmd)}\n")
            log.flush()
            self.child = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env)
            rc = self.child.wait()
            self.child = None
            log.write(f"[{datetime.datetime.now().isoformat(timespec='seconds')}] pbng-dataset: exit status {rc}\n")
        summary = read_summary(p["summary"])
        if rc == 0 and summary is not None:
            return self.result(sample, summary, action, "")
        if os.path.exists(p["checkpoint"]) and (os.path.getmtime(p["checkpoint"]) >= started or self.stop_signal):
            return self.unfinished(sample, "stopped", action, "stopped by a signal; a checkpoint continues it")
        return self.unfinished(sample, "failed", action, last_error(p["log"]) or f"pbng exit status {rc}")

    def keep_checkpoint(self, sample, args):
        """True when a checkpoint of these very options is there to continue; a stale one is removed."""
        p = self.paths(sample)
        if not os.path.exists(p["checkpoint"]):
            return False
        try:
            with open(p["args"]) as f:
                if json.load(f) == args:
                    return True
        except (OSError, ValueError):
            pass
        for stale in (p["checkpoint"], p["output"] + ".partial"):
            if os.path.exists(stale):
                os.remove(stale)
        return False

    def forward(self, signum, _frame):
        """SIGTERM / SIGUSR1 / SIGINT: pass it on to the running pbng and stop after it."""
        self.stop_signal = signum
        if self.child is not None:
            try:
                self.child.send_signal(signum)
            except ProcessLookupError:
                pass


def read_summary(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def root_attributes(path):
    """The root attributes of a pbng result (strings decoded) and its frame-group count; None if unreadable."""
    import h5py
    try:
        with h5py.File(path, "r") as f:
            attrs = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in f.attrs.items()}
            attrs["frame_groups"] = len(f["frames"]) if "frames" in f else 0
            attrs["frames_written"] = int(attrs.get("frames_written", -1))
            return attrs
    except (OSError, KeyError):
        return None


def same_command(command_line, args):
    """Whether a result's command_line (argv joined by spaces, at most 8191 characters) is pbng with args."""
    recorded = command_line.split(" ", 1)[1] if " " in command_line else ""
    wanted = " ".join(args)
    return recorded == wanted or (len(command_line) >= 8191 and wanted.startswith(recorded))


def last_error(log_path):
    try:
        with open(log_path, errors="replace") as f:
            lines = [ln.strip() for ln in f if "error" in ln]
    except OSError:
        return ""
    return lines[-1] if lines else ""


# --- the index --------------------------------------------------------------------------------------------------

def atomic_write(path, text):
    tmp = f"{path}.tmp-{os.getpid()}"
    with open(tmp, "w", newline="") as f:
        f.write(text)
    os.replace(tmp, path)


def write_index(path, columns, rows):
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    atomic_write(path, out.getvalue())


def index_columns(table):
    return ["id"] + [c for c in table.columns if c != "id" and c in COLUMNS] + list(RESULT_COLUMNS)


def hms(seconds):
    s = int(round(seconds))
    return f"{s // 3600:02d}:{s % 3600 // 60:02d}:{s % 60:02d}"


def progress_line(k, n, sample, row, eta, remaining):
    what = "skipped (done)" if row["action"] == "skipped" else row["status"]
    if row["status"] in ("done", "capped"):
        body = (f"{what}, {row['solved_frames']} frames, {row['iterations']} iterations, relative residual "
                f"{row['relative_residual']}, {row['seconds']} s")
    else:
        body = f"{what}: {row['message']} (log {row['log']})"
    return f"[{k}/{n}] sample {sample.id}: {body}; ETA {eta} ({remaining} samples)"


# --- subcommands ------------------------------------------------------------------------------------------------

def cmd_check(a):
    table, samples = load_samples(a.table, a.base, not a.no_dry_run)
    if a.print:
        for s in samples:
            print(s.id, " ".join(shlex.quote(x) for x in a.base + s.args))
    print(f"pbng-dataset: {a.table}: {len(samples)} samples, every row valid"
          f"{'' if a.no_dry_run else ' (pbng -dry_run included)'}")
    return 0


def copy_table(table_path, out_dir):
    """The table beside the results (DIR/table.csv or .yaml), for merge and for the record."""
    ext = ".yaml" if table_path.endswith((".yaml", ".yml")) else ".csv"
    with open(table_path) as f:
        atomic_write(os.path.join(out_dir, "table" + ext), f.read())


def cmd_run(a):
    task, tasks = task_slice(a)
    if a.ranks < 1 or a.threads < 1:
        raise Refusal("--ranks and --threads must be >= 1")
    table, samples = load_samples(a.table, a.base, not a.no_dry_run, lambda all_: slice_of(all_, task, tasks))
    mine = slice_of(samples, task, tasks)
    os.makedirs(os.path.join(a.out, "samples"), exist_ok=True)
    copy_table(a.table, a.out)
    runner = Runner(os.path.abspath(a.out), a.ranks, a.threads, a.base)
    for signum in (signal.SIGTERM, signal.SIGUSR1, signal.SIGINT):
        signal.signal(signum, runner.forward)
    index = os.path.join(a.out, index_name(task))
    columns = index_columns(table)
    rows = {s.id: dict({"id": s.id, **s.cells}, status="pending", output=os.path.relpath(runner.paths(s)["output"], runner.dir))
            for s in mine}
    write_index(index, columns, rows.values())
    slice_text = "" if task is None else f", array task {task} of {tasks}"
    print(f"pbng-dataset: {len(samples)} samples in {a.table}{slice_text}: {len(mine)} to do here, "
          f"{a.ranks} rank(s) x {a.threads} thread(s) each, into {a.out}", flush=True)
    ran_seconds, ran = 0.0, 0
    for k, sample in enumerate(mine, 1):
        if runner.stop_signal:
            break
        start = time.monotonic()
        result = runner.finished(sample)
        if result is None:
            result = runner.run(sample)
            ran_seconds, ran = ran_seconds + time.monotonic() - start, ran + 1
        rows[sample.id].update(result)
        write_index(index, columns, rows.values())
        remaining = len(mine) - k
        eta = hms(ran_seconds / ran * remaining) if ran else ("00:00:00" if not remaining else "--:--:--")
        print(progress_line(k, len(mine), sample, rows[sample.id], eta, remaining), flush=True)
    return finish_run(list(rows.values()), index)


def finish_run(rows, index):
    counts = status_counts(rows)
    print(f"pbng-dataset: {', '.join(f'{n} {s}' for s, n in counts.items())}; index {index}", flush=True)
    if counts.get("stopped") or counts.get("pending"):
        print("pbng-dataset: stopped before the end: run the same command again to continue", flush=True)
        return EXIT_STOPPED
    return EXIT_FAILED if counts.get("failed") else 0


def status_counts(rows):
    counts = {}
    for r in rows:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    return counts


def read_index(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def default_table(out_dir):
    for name in ("table.csv", "table.yaml"):
        if os.path.exists(os.path.join(out_dir, name)):
            return os.path.join(out_dir, name)
    return None


def cmd_merge(a):
    parts = sorted((f for f in os.listdir(a.dir) if re.fullmatch(r"index\.task-\d+\.csv", f)),
                   key=lambda f: int(f.split("-")[1].split(".")[0]))
    if not parts and not os.path.exists(os.path.join(a.dir, "index.csv")):
        raise Refusal(f"{a.dir}: no index.task-*.csv nor index.csv to merge")
    parts = parts or ["index.csv"]
    rows, seen = [], {}
    errors = []
    for part in parts:
        for row in read_index(os.path.join(a.dir, part)):
            if row["id"] in seen:
                errors.append(f"sample {row['id']} is in {seen[row['id']]} and in {part}")
            seen[row["id"]] = part
            rows.append(row)
    table_path = a.table or default_table(a.dir)
    if table_path:
        ids = [s.id for s in valid_samples(read_table(table_path))]
        missing = [i for i in ids if i not in seen]
        extra = [i for i in seen if i not in ids]
        if missing:
            errors.append(f"{len(missing)} sample(s) of {table_path} in no index: {', '.join(missing)}")
        if extra:
            errors.append(f"{len(extra)} sample(s) not in {table_path}: {', '.join(extra)}")
        order = {i: n for n, i in enumerate(ids)}
        rows.sort(key=lambda r: order.get(r["id"], len(order)))
    if errors:
        for e in errors:
            print(f"pbng-dataset merge: {e}", file=sys.stderr)
        return EXIT_FAILED
    columns = list(rows[0].keys()) if rows else ["id"] + list(RESULT_COLUMNS)
    write_index(os.path.join(a.dir, "index.csv"), columns, rows)
    counts = status_counts(rows)
    print(f"pbng-dataset merge: {len(rows)} samples from {len(parts)} index file(s) into "
          f"{os.path.join(a.dir, 'index.csv')}: {', '.join(f'{n} {s}' for s, n in counts.items())}")
    return 0 if set(counts) <= {"done", "capped"} else EXIT_FAILED


def parse_param(text):
    """NAME=LO:HI[:log] -> (name, lo, hi, log)."""
    m = re.fullmatch(r"([A-Za-z0-9_]+)=([^:]+):([^:]+)(:log)?", text)
    if not m:
        raise Refusal(f"--param {text}: need NAME=LO:HI or NAME=LO:HI:log")
    name, lo, hi, log = m.group(1), m.group(2), m.group(3), bool(m.group(4))
    if name not in NUMERIC_COLUMNS:
        raise Refusal(f"--param {text}: {name} is not a numeric column (numeric: {', '.join(NUMERIC_COLUMNS)})")
    lo, hi = number(lo), number(hi)
    if not lo < hi or (log and lo <= 0):
        raise Refusal(f"--param {text}: need LO < HI{' and LO > 0 (log)' if log else ''}")
    return name, lo, hi, log


def latin_hypercube(params, n, seed):
    """n points, one per stratum of every parameter's range (strata in log space for :log), seeded."""
    import numpy as np
    rng = np.random.default_rng(seed)
    columns = {}
    for name, lo, hi, log in params:
        u = (rng.permutation(n) + rng.random(n)) / n
        a, b = (math.log(lo), math.log(hi)) if log else (lo, hi)
        values = a + u * (b - a)
        columns[name] = np.exp(values) if log else values
    return columns


def format_value(name, value):
    return str(int(round(value))) if COLUMNS[name].integer else f"{value:.9g}"


def cmd_sample(a):
    if a.n < 1:
        raise Refusal("--n must be >= 1")
    params = [parse_param(p) for p in a.param]
    fixed = {}
    for s in a.set:
        name, _, value = s.partition("=")
        if name not in COLUMNS or name == "options" and not value:
            raise Refusal(f"--set {s}: unknown column {name}")
        fixed[name] = value
    clash = [p[0] for p in params if p[0] in fixed]
    if clash:
        raise Refusal(f"{', '.join(clash)}: both --param and --set")
    values = latin_hypercube(params, a.n, a.seed)
    width = max(4, len(str(a.n - 1)))
    rows = [{"id": f"s{i:0{width}d}", **{name: format_value(name, values[name][i]) for name, *_ in params}, **fixed}
            for i in range(a.n)]
    columns = ["id"] + [p[0] for p in params] + list(fixed)
    valid_samples(Table(a.out or "<sample>", columns, rows))
    text = sample_yaml(rows) if a.out and a.out.endswith((".yaml", ".yml")) else sample_csv(columns, rows)
    if a.out:
        atomic_write(a.out, text)
        print(f"pbng-dataset sample: {a.n} samples of {', '.join(p[0] for p in params)} (seed {a.seed}) to {a.out}")
    else:
        sys.stdout.write(text)
    return 0


def sample_csv(columns, rows):
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()


def yaml_scalar(text):
    """A cell as a YAML number when it is one (so the YAML table holds numbers, not strings)."""
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def sample_yaml(rows):
    import yaml
    return yaml.safe_dump({"samples": [{k: yaml_scalar(v) for k, v in r.items()} for r in rows]}, sort_keys=False)


def parse(argv):
    if "--" in argv:
        cut = argv.index("--")
        argv, base = argv[:cut], argv[cut + 1:]
    else:
        base = []
    ap = argparse.ArgumentParser(prog="pbng-dataset", description=__doc__.split("\n\n")[0],
                                 epilog="Options after -- are given to every sample's pbng run first.")
    sub = ap.add_subparsers(dest="command", required=True)
    check = sub.add_parser("check", help="validate a table (exit 0 valid, 2 refused)")
    check.add_argument("table")
    check.add_argument("--print", action="store_true", help="print each sample's pbng options")
    check.add_argument("--no-dry-run", action="store_true", help="leave out the pbng -dry_run of every row")
    run = sub.add_parser("run", help="run the samples of a table (or of this array task's slice)")
    run.add_argument("table")
    run.add_argument("--out", required=True, help="the data set's directory")
    run.add_argument("--ranks", type=int, default=int(os.environ.get("SLURM_NTASKS", "1")))
    run.add_argument("--threads", type=int, default=int(os.environ.get("SLURM_CPUS_PER_TASK", "1")))
    run.add_argument("--task", type=int)
    run.add_argument("--tasks", type=int)
    run.add_argument("--no-dry-run", action="store_true")
    merge = sub.add_parser("merge", help="merge the array tasks' indexes into DIR/index.csv")
    merge.add_argument("dir")
    merge.add_argument("--table", help="the table (default: the copy DIR/table.csv or .yaml)")
    sample = sub.add_parser("sample", help="a Latin-hypercube table over parameter ranges")
    sample.add_argument("--param", action="append", default=[], metavar="NAME=LO:HI[:log]")
    sample.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")
    sample.add_argument("--n", type=int, required=True)
    sample.add_argument("--seed", type=int, required=True)
    sample.add_argument("--out", help="table file (.csv, or .yaml/.yml); default: CSV on stdout")
    a = ap.parse_args(argv)
    a.base = base
    if a.command == "sample" and not a.param:
        ap.error("sample needs at least one --param NAME=LO:HI")
    return a


def main(argv=None):
    a = parse(sys.argv[1:] if argv is None else argv)
    try:
        return {"check": cmd_check, "run": cmd_run, "merge": cmd_merge, "sample": cmd_sample}[a.command](a)
    except Refusal as err:
        for line in str(err).splitlines():
            print(f"pbng-dataset: {line}", file=sys.stderr)
        return EXIT_REFUSED


if __name__ == "__main__":
    sys.exit(main())
