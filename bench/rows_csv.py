"""The shared pieces of the benchmarks that keep a row per run and frame (bench/contact_solvers.py, bench/muscles.py): the
options that say how pbng is started, and one CSV writer."""

import csv
import os


def add_run_arguments(ap, here):
    """--pbng (default build/bin/pbng beside the bench directory `here`), --mpiexec, --ranks (2), --threads (1)."""
    ap.add_argument("--pbng", default=os.path.join(here, "..", "build", "bin", "pbng"))
    ap.add_argument("--mpiexec", default="mpiexec")
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1)


def write_rows(path, rows):
    """rows (dicts with the same keys) to path as CSV, the first row's keys as the header; written whole or not at all."""
    tmp = path + ".tmp"
    with open(tmp, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    os.replace(tmp, path)
    print(f"results: {path}")


def results_path(here, kind):
    """bench/results/<kind>-<host>-<stamp>.csv (here: the bench directory)."""
    import datetime
    import socket
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M")
    return os.path.join(here, "results", f"{kind}-{socket.gethostname().split('.')[0][:8]}-{stamp}.csv")
