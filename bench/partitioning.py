#!/usr/bin/env python3
"""Partitioning a generated box: METIS (serial pbng-partition) against PT-Scotch (pbng-partition -partitioner ptscotch on
as many processes as parts), measured (issue 42 item 4; docs/scaling.md#35-partitioning-in-parallel): not a test, it
prints a table and writes a CSV under bench/results/.

For each resolution and part count, both partitioners write a partitioned file of the Res-N box; from the file (each
part's owned nodes and ghosts, its elements) the script takes the cut and balance: ghost nodes summed over parts and the
largest part's, owned nodes max/mean, work max/mean (a part's work: the element visits of its owned nodes, i.e. the
incident elements a PBNG sweep reads); from the partitioner's report the wall time (the slowest process for PT-Scotch)
and peak memory (per process, the largest). The files are removed once read (Res-128: about 1 GB each).

    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 /usr/bin/python3 bench/partitioning.py --res 64,128 --parts 2,4
"""
import argparse
import csv
import datetime
import os
import re
import socket
import subprocess
import sys
import tempfile

import h5py
import numpy as np

sys.dont_write_bytecode = True
import throughput as tp  # noqa: E402  (machine info, commit)

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)


def part_stats(path):
    """Cut and balance of a partitioned file: ghosts (sum, max), owned nodes and work (max / mean)."""
    with h5py.File(path, "r") as f:
        no, eo = f["/nodes/offset"][:, 0], f["/elements/offset"][:, 0]
        nowned = f["/parts/nowned"][:, 0].astype(np.int64)
        P = int(f.attrs["nparts"])
        work, ghosts = np.zeros(P), np.zeros(P)
        for p in range(P):
            rows = f["/elements/nodes"][eo[p]:eo[p + 1]]
            work[p] = np.count_nonzero(rows < nowned[p])  # visits of the owned nodes
            ghosts[p] = no[p + 1] - no[p] - nowned[p]
    return {"ghosts_sum": int(ghosts.sum()), "ghosts_max": int(ghosts.max()),
            "owned_imbalance": float(nowned.max() / nowned.mean()), "work_imbalance": float(work.max() / work.mean())}


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        sys.exit("failed: %s\n%s" % (" ".join(cmd), p.stdout))
    return p.stdout


def metis(binary, res, parts, path):
    out = run([binary, "-scene", "box", "-res", str(res), "-parts", str(parts), "-output", path])
    m = re.search(r"total ([0-9.]+) s; peak memory ([0-9.]+) MiB", out)
    return {"seconds": float(m.group(1)), "peak_mib_max": float(m.group(2)), "phases": re.search(r"^time: (.*?), total", out, re.M).group(1)}


def ptscotch(binary, mpiexec, res, parts, path):
    out = run([mpiexec, "-n", str(parts), "--oversubscribe", "--bind-to", "none", binary, "-partitioner", "ptscotch", "-scene", "box", "-res",
               str(res), "-parts", str(parts), "-output", path])
    m = re.search(r"total ([0-9.]+) s \(slowest process\); peak memory ([0-9.]+) MiB per process at most", out)
    p0 = re.search(r"^process 0: (.*); peak memory", out, re.M).group(1)
    return {"seconds": float(m.group(1)), "peak_mib_max": float(m.group(2)), "phases": p0}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--res", default="64,128", help="box resolutions (default 64,128)")
    ap.add_argument("--parts", default="2,4", help="part counts; PT-Scotch runs on as many processes (default 2,4)")
    ap.add_argument("--partitioner", default=os.path.join(REPO, "build", "bin", "pbng-partition"), help="pbng-partition binary")
    ap.add_argument("--mpiexec", default="mpiexec")
    ap.add_argument("--scratch", default=None, help="directory for the files (default: a temporary one)")
    a = ap.parse_args()
    binary = os.path.abspath(a.partitioner)
    scratch = a.scratch or tempfile.mkdtemp(prefix="pbng-partitioning-")
    rows = []
    for res in tp.int_list(a.res):
        for parts in tp.int_list(a.parts):
            for name in ("metis", "ptscotch"):
                path = os.path.join(scratch, "box%d.%s.p%d.h5" % (res, name, parts))
                r = metis(binary, res, parts, path) if name == "metis" else ptscotch(binary, a.mpiexec, res, parts, path)
                r.update(part_stats(path))
                os.remove(path)
                r.update({"res": res, "parts": parts, "partitioner": name})
                rows.append(r)
                print("Res-%d %d parts %-8s  ghosts %9d (max %8d)  owned max/mean %.4f  work max/mean %.4f  %7.2f s  peak %8.1f MiB  [%s]"
                      % (res, parts, name, r["ghosts_sum"], r["ghosts_max"], r["owned_imbalance"], r["work_imbalance"], r["seconds"],
                         r["peak_mib_max"], r["phases"]), flush=True)
    info = tp.machine_info()
    commit, _ = tp.git_commit(REPO)
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    out = os.path.join(HERE, "results", "partitioning-%s-%s.csv" % (socket.gethostname().split(".")[0],
                                                                     datetime.datetime.now().strftime("%Y%m%d-%H%M")))
    keys = ["res", "parts", "partitioner", "ghosts_sum", "ghosts_max", "owned_imbalance", "work_imbalance", "seconds", "peak_mib_max", "phases"]
    with open(out, "w", newline="") as f:
        f.write("# %s, %s cores, %s; commit %s\n" % (info.get("cpu_model"), info.get("nproc"), info.get("memory", ""), commit))
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        for r in rows:
            w.writerow({k: r[k] for k in keys})
    print("wrote %s" % out)


if __name__ == "__main__":
    main()
