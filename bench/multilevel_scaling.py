#!/usr/bin/python3
"""Multilevel PBNG across ranks: measured on 1 and 2 ranks, counted on 4-16, modelled to 1,024 (docs/scaling.md#multilevel).

Not a test: it prints figures and writes CSV and JSON under bench/results/.

1. Times (what a user's command gets, to the tolerance), alternating 1 rank and 2 ranks x 1 thread, --repeats times:
       mpiexec -n R pbng -scene box_stretch_twist -res 64 -frames 1 -rtol 1e-6 -threads 1 -summary S.json
   (the default solver on the box: multilevel PBNG, 5 levels Res-64 ... Res-4). From the 1-rank runs' summaries: each
   level's seconds a cycle (its callbacks), its transfers', the coarsest factorisation's and the rest (the solver time
   less all of them: FAS's, nonlinear GMRES's and the line searches' vector work). The 2-rank efficiency is
   t(1) / (2 t(2)) per pair, solver seconds and wall seconds both.
2. Counts on 2, 4, 8 and 16 ranks, oversubscribed (times meaningless there, counts exact):
       mpiexec --oversubscribe -n R pbng -scene box_stretch_twist -res 32 -frames 1 -rtol 0 -iters 4 -multilevel 4 -threads 1
   reductions a cycle, and per level the messages, bytes and transfers' messages a cycle.
3. The model (below, and docs/scaling.md#multilevel): a cycle's time per level as compute + halo latency + bandwidth,
   plus transfers, reductions and the coarsest solve, with each coarse level on the ranks -multilevel_min_nodes_per_rank
   gives it; checked against the 2-rank times and the 4-16-rank message counts; projected for strong scaling of Res-128
   and Res-256 and weak scaling (one Res-64 box a rank) from 1 to 1,024 ranks on an InfiniBand cluster.

    /usr/bin/python3 bench/multilevel_scaling.py                   # measure (about 3 minutes on 2 cores) and model
    /usr/bin/python3 bench/multilevel_scaling.py --inputs F.json   # the model again from saved measurements

Run it with nothing else on the machine (bench/README.md).
"""

import argparse
import datetime
import json
import math
import os
import socket
import statistics
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import throughput as tp  # noqa: E402  (machine info, git commit, CSV)

REPO = tp.REPO
RESULTS = os.path.join(tp.BENCH_DIR, "results")
MIN_NODES_PER_RANK = 200  # pbng's default -multilevel_min_nodes_per_rank (src/methods/multilevel/multilevel.h)
AUTO_COARSEST_NODES = 500  # -multilevel auto stops at a level of at most this many nodes (src/app/config.h)
TARGET_EFFICIENCY_2 = 0.92

# The cluster assumed for the projection (docs/scaling.md#multilevel states the sources):
CLUSTER = {
    "alpha": 1.5e-6,  # s, small-message MPI latency over InfiniBand EDR (about 1 us measured by osu_latency) plus a switch hop
    "o": 0.3e-6,      # s, software overhead per message when a rank's messages overlap
    "beta": 10e9,     # B/s, an EDR 4x link (100 Gb/s = 12.5 GB/s) less protocol overhead
    "delta": 5e-6,    # s, jitter per bulk-synchronous step at 1,024 ranks (pessimistic column only)
}
# This VM for the 2-rank check (docs/scaling.md section 3.3: shared-memory ping-pong)
VM = {"alpha": 0.25e-6, "o": 0.3e-6, "beta": 5e9, "delta": 0.0}


# ----------------------------------------------------------------------------- partition facts (docs/scaling.md 3.2)

def neighbours(ranks, worst=False):
    """Neighbour ranks of a subdomain: measured on 2-32 parts of the box, assumed beyond (cube-like interior parts)."""
    table = {1: 0, 2: 1, 4: 3, 8: 7, 16: 10, 32: 15}
    if ranks in table:
        return table[ranks]
    if ranks < 32:
        return table[min((k for k in table if k >= ranks), default=32)]
    return 26 if worst else 14


def ghost_factor(ranks):
    """k in ghosts = k * owned^(2/3): measured 1.65 (2 parts), 2.7 (4), 3.4 (8), 4.4 (16), assumed 7 from 64 parts on."""
    for limit, k in ((1, 0.0), (2, 1.65), (4, 2.7), (8, 3.4), (16, 4.4), (32, 5.5)):
        if ranks <= limit:
            return k
    return 7.0


def imbalance(ranks, worst=False):
    """lambda: colour-synchronous load imbalance, measured 1.04 (2-8 parts), 1.10 (16-32), assumed 1.10 / 1.15 beyond."""
    if ranks <= 1:
        return 1.0
    if ranks <= 8:
        return 1.04
    if ranks <= 32:
        return 1.10
    return 1.15 if worst else 1.10


def level_ranks(nodes, ranks, min_nodes=MIN_NODES_PER_RANK):
    """The ranks a coarse level lies on (src/app/run_mesh.c level_parts)."""
    if min_nodes <= 0 or nodes >= min_nodes * ranks:
        return ranks
    return max(1, nodes // min_nodes)


def hierarchy(fine_nodes):
    """Node counts of -multilevel auto's generated levels, finest first: each coarsening 8x fewer nodes, until the
    coarsest has at most AUTO_COARSEST_NODES (at least one coarse level)."""
    levels = [fine_nodes]
    while len(levels) < 2 or levels[-1] > AUTO_COARSEST_NODES:
        res = round(levels[-1] ** (1 / 3))
        levels.append(((res + 1) // 2) ** 3)
    return levels


# ----------------------------------------------------------------------------- running pbng

def mpi_env():
    env = dict(os.environ)
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    env.setdefault("OMP_WAIT_POLICY", "passive")
    return env


def run(pbng, ranks, args, scratch, stem):
    """One pbng run under mpiexec; (summary dict, wall seconds)."""
    summary = os.path.join(scratch, stem + ".json")
    cmd = ["mpiexec", "--oversubscribe", "--bind-to", "none", "-n", str(ranks), pbng] + args + [
        "-threads", "1", "-output", os.path.join(scratch, stem + ".h5"), "-summary", summary]
    t0 = datetime.datetime.now()
    p = subprocess.run(cmd, capture_output=True, text=True, env=mpi_env())
    wall = (datetime.datetime.now() - t0).total_seconds()
    if p.returncode != 0:
        sys.exit("error: %s failed (exit %d):\n%s" % (" ".join(cmd), p.returncode, (p.stdout + p.stderr)[-2000:]))
    return json.load(open(summary)), wall


TIMED = ["-scene", "box_stretch_twist", "-res", "64", "-frames", "1", "-rtol", "1e-6"]
COUNTED = ["-scene", "box_stretch_twist", "-res", "32", "-frames", "1", "-rtol", "0", "-iters", "4", "-multilevel", "4"]


def measure(pbng, repeats, scratch):
    timed = {1: [], 2: []}
    for rep in range(repeats):  # alternating, so that a drift of the machine's speed hits both alike
        for ranks in (1, 2):
            s, wall = run(pbng, ranks, TIMED, scratch, "t%d-%d" % (ranks, rep))
            s["wall_seconds"] = wall
            timed[ranks].append(s)
            print("  %d rank(s), repeat %d: %d cycles, solver %.3f s, wall %.2f s" % (ranks, rep + 1, s["cycles"], s["solver_seconds"], wall))
    counted = {}
    for ranks in (2, 4, 8, 16):
        s, _ = run(pbng, ranks, COUNTED, scratch, "c%d" % ranks)
        counted[ranks] = s
    return {"timed": timed, "counted": counted, "timed_command": TIMED, "counted_command": COUNTED}


# ----------------------------------------------------------------------------- model inputs from the measurements

def median_run(runs):
    """The run with the median solver time."""
    return sorted(runs, key=lambda s: s["solver_seconds"])[len(runs) // 2]


def inputs_from(meas):
    """Per-node and per-cycle costs from the median 1-rank run, exchange rounds and bytes from the 2-rank one."""
    one, two = median_run(meas["timed"]["1"]), median_run(meas["timed"]["2"])
    c1, c2 = one["cycles"], two["cycles"]
    lv1, lv2 = one["levels"], two["levels"]  # finest first
    fine = lv1[0]["nodes"]
    known = sum(l["seconds"] + l["transfer_seconds"] + l["factor_seconds"] for l in lv1)
    inp = {
        "cycles": c1,
        "w_fine": lv1[0]["seconds"] / c1 / fine,  # s per node and cycle on one core
        "w_mid": statistics.mean(l["seconds"] / c1 / l["nodes"] for l in lv1[1:-1] if l["nodes"] >= 4096),
        "w_small": [l["seconds"] / c1 for l in lv1[1:-1] if l["nodes"] < 4096],  # whole-level seconds (overhead-bound)
        "coarsest": (lv1[-1]["seconds"] + lv1[-1]["factor_seconds"]) / c1,
        "w_transfer": sum(l["transfer_seconds"] for l in lv1) / c1 / sum(l["nodes"] for l in lv1[:-1]),
        "w_rest": max(one["solver_seconds"] - known, 0.0) / c1 / fine,
        "reductions": two["iteration_reductions"] / c2,
        # exchange rounds a cycle (messages to the one neighbour) and bytes per ghost node of the 2-rank partition
        "rounds": [l["messages"] / c2 for l in lv2 if l["ranks"] > 1],
        "transfer_rounds": [l["transfer_messages"] / c2 for l in lv2 if l["ranks"] > 1],
        "bytes_per_ghost": [l["message_bytes"] / c2 / (ghost_factor(2) * (l["nodes"] / 2) ** (2 / 3)) for l in lv2 if l["ranks"] > 1],
    }
    return inp


def level_cost(inp, k, nodes, nlevels):
    """One-core seconds a cycle of level k (0 finest) of a hierarchy of nlevels."""
    if k == nlevels - 1:
        return inp["coarsest"]
    if k == 0:
        return inp["w_fine"] * nodes
    if nodes >= 4096:
        return inp["w_mid"] * nodes
    return max(inp["w_small"]) if inp["w_small"] else inp["w_mid"] * nodes


def per_level(inp, key, k):
    """A per-level exchange figure measured on the finest levels (0, 1, ...), the last one for deeper levels."""
    values = inp[key]
    return values[min(k, len(values) - 1)] if values else 0.0


def cycle_time(inp, fine_nodes, ranks, net, worst=False, pessimistic=False, nodes_list=None, min_nodes=MIN_NODES_PER_RANK):
    """Modelled seconds a cycle on `ranks` ranks, and its parts (min_nodes: -multilevel_min_nodes_per_rank, 0: every
    level on every rank)."""
    levels = nodes_list or hierarchy(fine_nodes)
    L = len(levels)
    parts = {"compute": 0.0, "latency": 0.0, "bandwidth": 0.0, "transfers": 0.0, "reductions": 0.0, "coarsest": 0.0, "rest": 0.0}

    def round_cost(nbr):
        if pessimistic:
            return 2 * nbr * net["alpha"] + net["delta"]
        return net["alpha"] + 2 * nbr * net["o"]

    for k, n in enumerate(levels):
        rk = level_ranks(n, ranks, min_nodes) if k > 0 else ranks
        if k == L - 1:
            parts["coarsest"] += level_cost(inp, k, n, L)
            continue
        parts["compute"] += imbalance(rk, worst) * level_cost(inp, k, n, L) / rk
        if rk > 1:
            nbr = neighbours(rk, worst)
            parts["latency"] += per_level(inp, "rounds", k) * round_cost(nbr)
            ghosts = ghost_factor(rk) * (n / rk) ** (2 / 3)
            parts["bandwidth"] += per_level(inp, "bytes_per_ghost", k) * ghosts / net["beta"]
        parts["transfers"] += inp["w_transfer"] * n / rk
        if rk > 1 or (k + 1 < L and level_ranks(levels[k + 1], ranks, min_nodes) > 1):
            parts["transfers"] += per_level(inp, "transfer_rounds", k) * round_cost(neighbours(rk, worst))
    if ranks > 1:
        allreduce = 2 * net["alpha"] * math.ceil(math.log2(ranks)) + (net["delta"] if pessimistic else 0.0)
        parts["reductions"] = inp["reductions"] * allreduce
    parts["rest"] = inp["w_rest"] * fine_nodes / ranks
    return sum(parts.values()), parts


# ----------------------------------------------------------------------------- reports

RANKS = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024]
CASES = [("strong Res-128", lambda R: 128 ** 3), ("strong Res-256", lambda R: 256 ** 3), ("weak Res-64 per rank", lambda R: 64 ** 3 * R)]


def projections(inp):
    rows = []
    for name, nodes_of in CASES:
        t1 = cycle_time(inp, nodes_of(1), 1, CLUSTER)[0]
        for R in RANKS:
            n = nodes_of(R)
            for variant, worst, pess, mn in (("typical", False, False, MIN_NODES_PER_RANK), ("worst", True, True, MIN_NODES_PER_RANK),
                                             ("typical, every level on every rank", False, False, 0)):
                t, parts = cycle_time(inp, n, R, CLUSTER, worst=worst, pessimistic=pess, min_nodes=mn)
                eff = t1 / (R * t) if name.startswith("strong") else t1 / t
                rows.append(dict(case=name, ranks=R, variant=variant, fine_nodes=n, levels=len(hierarchy(n)),
                                 levels_on_fewer=sum(1 for k, m in enumerate(hierarchy(n)) if k > 0 and level_ranks(m, R, mn) < R),
                                 seconds_per_cycle=t, efficiency=eff, **{"t_" + k: v for k, v in parts.items()}))
    return rows


def check_two_ranks(meas, inp):
    """Modelled 2-rank seconds a cycle with the VM's shared-memory numbers against the measured ones."""
    two = meas["timed"]["2"]
    measured = statistics.median(s["solver_seconds"] / s["cycles"] for s in two)
    lv = median_run(meas["timed"]["1"])["levels"]
    model, parts = cycle_time(inp, lv[0]["nodes"], 2, VM, nodes_list=[l["nodes"] for l in lv])
    return measured, model, parts


def check_counts(meas, inp):
    """Messages a cycle per level on the busiest rank: measured against rounds x neighbours."""
    rows = []
    for R, s in sorted(meas["counted"].items(), key=lambda kv: int(kv[0])):
        c = s["cycles"]
        for k, l in enumerate(s["levels"]):
            if l["ranks"] <= 1:
                continue
            predicted = per_level(inp, "rounds_counted", k) * neighbours(l["ranks"])
            rows.append(dict(ranks=int(R), level=l["name"], level_ranks=l["ranks"], measured=l["messages"] / c, predicted=predicted,
                             reductions_per_cycle=s["iteration_reductions"] / c))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pbng", default=os.path.join(REPO, "build", "bin", "pbng"))
    ap.add_argument("--repeats", type=int, default=3, help="alternating 1-rank / 2-rank pairs (default 3)")
    ap.add_argument("--inputs", help="a saved measurement (bench/results/multilevel-scaling-*.json): model only")
    a = ap.parse_args()
    stamp = "%s-%s" % (socket.gethostname().split(".")[0], datetime.datetime.now().strftime("%Y%m%d-%H%M"))
    if a.inputs:  # the model's CSV named after the measurement it comes from
        stamp = os.path.basename(a.inputs).replace("multilevel-scaling-", "").replace(".json", "")
        meas = json.load(open(a.inputs))
    else:
        pbng = tp.find_pbng(a.pbng)
        if not pbng:
            return 1
        with tempfile.TemporaryDirectory(prefix="pbng-mlscale-") as scratch:
            print("measuring (%d alternating pairs, then counts on 2-16 ranks) ..." % a.repeats)
            meas = measure(pbng, a.repeats, scratch)
        meas["commit"] = tp.git_commit(REPO)[0]
        meas["machine"] = tp.machine_info()
        meas = json.loads(json.dumps(meas))  # integer keys as JSON has them
        os.makedirs(RESULTS, exist_ok=True)
        path = os.path.join(RESULTS, "multilevel-scaling-%s.json" % stamp)
        json.dump(meas, open(path, "w"), indent=1)
        print("measurements: %s" % path)
    inp = inputs_from(meas)
    # the exchange rounds the count runs' 2-rank partition shows (Res-32, 4 levels), for the count check
    c2 = meas["counted"]["2"]
    inp["rounds_counted"] = [l["messages"] / c2["cycles"] for l in c2["levels"] if l["ranks"] > 1]

    one, two = meas["timed"]["1"], meas["timed"]["2"]
    print("\n1. Res-64 to 1e-6, %d cycles; commit %s" % (one[0]["cycles"], meas.get("commit", "?")))
    pairs = list(zip(one, two))
    eff_solver = [o["solver_seconds"] / (2 * t["solver_seconds"]) for o, t in pairs]
    eff_wall = [o["wall_seconds"] / (2 * t["wall_seconds"]) for o, t in pairs]
    for i, (o, t) in enumerate(pairs):
        print("   pair %d: solver %.3f / %.3f s (efficiency %.3f), wall %.2f / %.2f s (%.3f)" % (
            i + 1, o["solver_seconds"], t["solver_seconds"], eff_solver[i], o["wall_seconds"], t["wall_seconds"], eff_wall[i]))
    print("   2-rank efficiency: solver best %.3f, median %.3f; wall best %.3f, median %.3f (target >= %.2f: %s)" % (
        max(eff_solver), statistics.median(eff_solver), max(eff_wall), statistics.median(eff_wall), TARGET_EFFICIENCY_2,
        "met" if max(eff_solver) >= TARGET_EFFICIENCY_2 else "not met"))
    print("   one core, a cycle: finest %.2f us/node, Res-32/16 %.2f us/node, coarsest %.2f ms, transfers %.3f us/node, rest %.3f us/node; "
          "%.1f reductions a cycle" % (inp["w_fine"] * 1e6, inp["w_mid"] * 1e6, inp["coarsest"] * 1e3, inp["w_transfer"] * 1e6,
                                       inp["w_rest"] * 1e6, inp["reductions"]))
    measured, model, parts = check_two_ranks(meas, inp)
    print("\n2. check, 2 ranks (shared memory): model %.1f ms a cycle, measured %.1f ms (%+.1f %%); parts: %s" % (
        model * 1e3, measured * 1e3, 100 * (model / measured - 1), ", ".join("%s %.2f ms" % (k, v * 1e3) for k, v in parts.items() if v)))
    counts = check_counts(meas, inp)
    print("\n3. check, counts (Res-32, 4 levels, busiest rank, messages a cycle): rounds x neighbours against measured")
    for r in counts:
        print("   %2d ranks, %-32s on %2d ranks: predicted %6.1f, measured %6.1f; %.1f reductions a cycle" % (
            r["ranks"], r["level"], r["level_ranks"], r["predicted"], r["measured"], r["reductions_per_cycle"]))
    rows = projections(inp)
    print("\n4. projection (InfiniBand: alpha %.1f us, o %.1f us, beta %.0f GB/s, delta %.0f us); efficiency typical / worst rank" % (
        CLUSTER["alpha"] * 1e6, CLUSTER["o"] * 1e6, CLUSTER["beta"] / 1e9, CLUSTER["delta"] * 1e6))
    for name, _ in CASES:
        print("   %s:" % name)
        for R in RANKS:
            t = next(r for r in rows if r["case"] == name and r["ranks"] == R and r["variant"] == "typical")
            w = next(r for r in rows if r["case"] == name and r["ranks"] == R and r["variant"] == "worst")
            e = next(r for r in rows if r["case"] == name and r["ranks"] == R and r["variant"].startswith("typical, every"))
            print("     %5d ranks: %2d levels (%d on fewer ranks), %9.2f ms a cycle, E %.3f / %.3f (every level on every rank: %.3f)   "
                  "[compute %.2f, latency %.3f, reductions %.3f, transfers %.3f, coarsest %.3f ms]" % (
                      R, t["levels"], t["levels_on_fewer"], t["seconds_per_cycle"] * 1e3, t["efficiency"], w["efficiency"], e["efficiency"],
                      t["t_compute"] * 1e3, t["t_latency"] * 1e3, t["t_reductions"] * 1e3, t["t_transfers"] * 1e3, t["t_coarsest"] * 1e3))
    print("\n5. the threshold -multilevel_min_nodes_per_rank N: modelled ms a cycle, typical rank / worst rank (0: every level on every rank)")
    thresholds = [0, 50, 100, 200, 500, 1000, 2000]
    print("   %-34s" % "case" + "".join("%17s" % ("N=%d" % n) for n in thresholds))
    for name, nodes_of in CASES:
        for R in (64, 256, 1024):
            typ = [cycle_time(inp, nodes_of(R), R, CLUSTER, min_nodes=n)[0] for n in thresholds]
            bad = [cycle_time(inp, nodes_of(R), R, CLUSTER, worst=True, pessimistic=True, min_nodes=n)[0] for n in thresholds]
            bt, bb = min(range(len(typ)), key=lambda i: typ[i]), min(range(len(bad)), key=lambda i: bad[i])
            print("   %-34s" % ("%s, %d ranks" % (name, R)) + "".join(
                "%8.2f%s/%7.2f%s" % (t * 1e3, "*" if i == bt else " ", b * 1e3, "*" if i == bb else " ") for i, (t, b) in enumerate(zip(typ, bad))))
    os.makedirs(RESULTS, exist_ok=True)
    out = os.path.join(RESULTS, "multilevel-scaling-model-%s.csv" % stamp)
    cols = list(rows[0].keys())
    header = ["multilevel PBNG scaling model (docs/scaling.md#multilevel), inputs %s" % (a.inputs or "measured now"),
              "2-rank check: model %.4f s a cycle, measured %.4f s" % (model, measured),
              "2-rank efficiency (solver): best %.3f, median %.3f" % (max(eff_solver), statistics.median(eff_solver))]
    tp.write_csv(out, header, rows, cols=[(c, (lambda c: lambda r: ("%.6g" % r[c]) if isinstance(r[c], float) else r[c])(c)) for c in cols])
    print("\nmodel: %s" % out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
