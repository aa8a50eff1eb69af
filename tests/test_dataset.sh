#!/usr/bin/env bash
# Data-set mode, pbng-dataset (issue 21 item 2; docs/dataset.md), on Res-4 boxes of 2 frames:
#  - a 6-sample CSV table (youngs, poisson, gravity and a face's velocity varying) on 2 ranks: 6 results, each
#    passing tests/check_output.py, an index with 6 rows "done" and a progress line per sample;
#  - restart: the same command again skips all 6 (files untouched: same mtimes); one result deleted: only it reruns;
#  - a sample that fails at run time is recorded (failed, with pbng's message), the others run, the exit status is 1;
#  - a run stopped by SIGUSR1 (the driver passes it to pbng, which checkpoints): exit 85, the index says stopped,
#    the next run continues the sample from its checkpoint;
#  - an array of 3 tasks (SLURM_ARRAY_TASK_ID=0..2, _COUNT=3, mpiexec) + merge: every sample exactly once; merge
#    with a task's index missing names the missing ids and fails;
#  - the YAML form of the table gives the same runs (check --print), a YAML defaults: + samples: table too;
#  - the sampler: the same seed twice gives the same file, and every parameter hits each of its n strata once;
#  - bad tables refused with exit 2, naming row and column, before any work (no output directory created).
source "$(dirname "$0")/lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive OMP_NUM_THREADS=1
unset SLURM_JOB_ID SLURM_ARRAY_TASK_ID SLURM_ARRAY_TASK_COUNT SLURM_ARRAY_TASK_MIN SLURM_NTASKS SLURM_CPUS_PER_TASK
DS="$(dirname "$PBNG")/pbng-dataset"
BASE=(-scene box -res 4 -frames 2 -rtol 1e-3 -iters 400 -fix_box 0,0,0,0,1,1 -bc0_box 1,0,0,1,1,1)
cd "$TMP"
cat > table.csv << 'EOF'
id,youngs,poisson,gravity,bc0_velocity
s00,1e4,0.3,"0,-9.8,0","0.1,0,0"
s01,2e4,0.25,"0,-5,0","0.2,0,0"
s02,5e4,0.35,"0,0,-9.8","0,0.1,0"
s03,1e5,0.2,"0,0,0","0.3,0,0"
s04,3e4,0.4,"-9.8,0,0","0,0,0.1"
s05,8e4,0.1,"0,-20,0","0.15,0.05,0"
EOF
IDS="s00 s01 s02 s03 s04 s05"

# index_column INDEX ID COLUMN: one cell of an index file
index_column() { "$PY" -c 'import csv, sys
rows = {r["id"]: r for r in csv.DictReader(open(sys.argv[1]))}
print(rows[sys.argv[2]][sys.argv[3]] if sys.argv[2] in rows else "-")' "$@"; }
mtimes() { stat -c '%n %Y.%y' "$1"/samples/*.h5; }

# --- a whole table on 2 ranks ---------------------------------------------------------------------------------------
"$DS" run table.csv --out ds --ranks 2 -- "${BASE[@]}" > run1.log 2>&1 && ok || { fail "run the table"; cat run1.log; }
for id in $IDS; do
  "$PY" "$HERE/check_output.py" "ds/samples/$id.h5" --frames 2 --quiet && ok || fail "$id: check_output"
  [ "$(index_column ds/index.csv "$id" status)" = done ] && ok || fail "$id: index status $(index_column ds/index.csv "$id" status)"
  grep -q "^\[[1-6]/6\] sample $id: done, 2 frames, [0-9]* iterations, relative residual [0-9.e-]*, [0-9.]* s; ETA [0-9:]* ([0-5] samples)$" run1.log \
    && ok || fail "$id: no progress line"
done
[ "$(index_column ds/index.csv s02 poisson),$(index_column ds/index.csv s02 gravity)" = "0.35,0,0,-9.8" ] && ok || fail "the index lacks the parameters"
[ "$(index_column ds/index.csv s03 output)" = samples/s03.h5 ] && ok || fail "the index's output path"

# --- restart: everything skipped, files untouched; then one deleted result reruns alone -----------------------------
before=$(mtimes ds)
"$DS" run table.csv --out ds --ranks 2 -- "${BASE[@]}" > run2.log 2>&1 && ok || { fail "rerun"; cat run2.log; }
[ "$(grep -c 'skipped (done)' run2.log)" = 6 ] && ok || { fail "rerun: not all 6 skipped"; cat run2.log; }
[ "$(mtimes ds)" = "$before" ] && ok || fail "rerun: results were rewritten"
[ "$(index_column ds/index.csv s04 action)" = skipped ] && [ "$(index_column ds/index.csv s04 status)" = done ] && ok || fail "rerun: index"
rm ds/samples/s02.h5
"$DS" run table.csv --out ds --ranks 2 -- "${BASE[@]}" > run3.log 2>&1 && ok || { fail "rerun after a deletion"; cat run3.log; }
[ "$(grep -c 'skipped (done)' run3.log)" = 5 ] && grep -q "sample s02: done" run3.log && ok || { fail "only s02 should rerun"; cat run3.log; }
"$PY" "$HERE/check_output.py" ds/samples/s02.h5 --frames 2 --quiet && ok || fail "s02 rerun: check_output"
# a changed row reruns (its options differ from the result's command line)
sed 's/^s05,8e4/s05,9e4/' table.csv > changed.csv
"$DS" run changed.csv --out ds --ranks 2 -- "${BASE[@]}" > run4.log 2>&1 && grep -q "sample s05: done" run4.log \
  && [ "$(grep -c 'skipped (done)' run4.log)" = 5 ] && ok || { fail "a changed row should rerun alone"; cat run4.log; }

# --- a failed sample (found at run time: --no-dry-run) is recorded and the next one still runs; exit 1 ----------------
printf '%s\n' id,youngs,options "bad,1e4,-material foo" "good,2e4," > fails.csv
rc=0; "$DS" run fails.csv --out fails --ranks 2 --no-dry-run -- "${BASE[@]}" > fails.log 2>&1 || rc=$?
[ "$rc" = 1 ] && [ "$(index_column fails/index.csv bad status),$(index_column fails/index.csv good status)" = failed,done ] \
  && index_column fails/index.csv bad message | grep -q 'unknown material "foo"' && grep -q "sample bad: failed: .*unknown material" fails.log \
  && ok || { fail "a failed sample: exit $rc"; cat fails.log fails/index.csv; }

# --- a stopped run continues from its checkpoint ---------------------------------------------------------------------
printf 'id,youngs\nlong,1e4\n' > long.csv
# 400 frames (about 1 s on 2 ranks): the signal must come while the sample still runs (40 frames took 0.4 s in all, and
# a run's faster output made the signal arrive after it had finished)
LONG=(-scene box -res 8 -frames 400 -iters 300 -fix_box 0,0,0,0,1,1 -bc0_box 1,0,0,1,1,1 -bc0_velocity 0.01,0,0)
"$DS" run long.csv --out stop --ranks 2 -- "${LONG[@]}" > stop1.log 2>&1 &
driver=$!
for _ in $(seq 1 400); do grep -q "^frame    2/" stop/samples/long.log 2> /dev/null && break; sleep 0.025; done
kill -USR1 "$driver"
rc=0; wait "$driver" || rc=$?
[ "$rc" = 85 ] && [ "$(index_column stop/index.csv long status)" = stopped ] && [ -e stop/samples/long.checkpoint.h5 ] && ok \
  || { fail "SIGUSR1: exit $rc, status $(index_column stop/index.csv long status)"; cat stop1.log; }
"$DS" run long.csv --out stop --ranks 2 -- "${LONG[@]}" > stop2.log 2>&1 && ok || { fail "continue after SIGUSR1"; cat stop2.log; }
[ "$(index_column stop/index.csv long action)" = continued ] && grep -q "^restart: .*long.checkpoint.h5, frame" stop/samples/long.log && ok \
  || { fail "the stopped sample did not continue from its checkpoint"; cat stop2.log; }
"$PY" "$HERE/check_output.py" stop/samples/long.h5 --frames 400 --quiet && ok || fail "continued sample: check_output"

# --- an array of 3 tasks, then merge -----------------------------------------------------------------------------------
for t in 0 1 2; do
  SLURM_ARRAY_TASK_ID=$t SLURM_ARRAY_TASK_COUNT=3 "$DS" run table.csv --out arr --ranks 2 -- "${BASE[@]}" > "task$t.log" 2>&1 \
    && ok || { fail "array task $t"; cat "task$t.log"; }
done
[ "$(index_column arr/index.task-1.csv s04 status),$(index_column arr/index.task-1.csv s01 status)" = "done,done" ] \
  && [ "$(wc -l < arr/index.task-1.csv)" = 3 ] && ok || fail "task 1 should run s01 and s04 (sample i goes to task i mod 3)"
"$DS" merge arr > merge.log 2>&1 && grep -q "6 samples from 3 index file(s).*6 done" merge.log && ok || { fail "merge"; cat merge.log; }
"$PY" - arr/index.csv table.csv << 'EOF' && ok || fail "merged index: not every sample exactly once"
import csv, sys
merged = [r["id"] for r in csv.DictReader(open(sys.argv[1]))]
table = [r["id"] for r in csv.DictReader(open(sys.argv[2]))]
assert merged == table, (merged, table)
EOF
for id in $IDS; do "$PY" "$HERE/check_output.py" "arr/samples/$id.h5" --quiet && ok || fail "array $id: check_output"; done
rm arr/index.csv && mv arr/index.task-2.csv .
rc=0; "$DS" merge arr > merge2.log 2>&1 || rc=$?
[ "$rc" = 1 ] && grep -q "2 sample(s) of .*table.csv in no index: s02, s05" merge2.log && [ ! -e arr/index.csv ] && ok \
  || { fail "merge with a task missing: exit $rc"; cat merge2.log; }

# --- YAML tables: the same runs -------------------------------------------------------------------------------------------
cat > table.yaml << 'EOF'
- {id: s00, youngs: 1e4, poisson: 0.3, gravity: [0, -9.8, 0], bc0_velocity: [0.1, 0, 0]}
- {id: s01, youngs: 2e4, poisson: 0.25, gravity: "0,-5,0", bc0_velocity: [0.2, 0, 0]}
- {id: s02, youngs: 5e4, poisson: 0.35, gravity: [0, 0, -9.8], bc0_velocity: [0, 0.1, 0]}
- {id: s03, youngs: 1e5, poisson: 0.2, gravity: [0, 0, 0], bc0_velocity: [0.3, 0, 0]}
- {id: s04, youngs: 3e4, poisson: 0.4, gravity: [-9.8, 0, 0], bc0_velocity: [0, 0, 0.1]}
- {id: s05, youngs: 8e4, poisson: 0.1, gravity: [0, -20, 0], bc0_velocity: [0.15, 0.05, 0]}
EOF
cat > defaults.yaml << 'EOF'
defaults: {scene: box, res: 4, frames: 2, fix_box: [0, 0, 0, 0, 1, 1], bc0_box: [1, 0, 0, 1, 1, 1]}
samples:
  - {id: a, youngs: 1e4}
  - {id: b, youngs: 2e4, res: 3}
EOF
"$DS" check table.csv --print -- "${BASE[@]}" > csv.plan 2> csv.err && "$DS" check table.yaml --print -- "${BASE[@]}" > yaml.plan 2> yaml.err && ok || { fail "check"; cat csv.err yaml.err; }
diff <(grep -v "^pbng-dataset" csv.plan) <(grep -v "^pbng-dataset" yaml.plan) > /dev/null && ok || { fail "YAML and CSV tables differ"; diff csv.plan yaml.plan; }
"$DS" check defaults.yaml --print > defaults.plan 2>&1 && grep -q "^b -scene box -res 3 -frames 2 .*-youngs 2e4$" defaults.plan \
  && ok || { fail "YAML defaults"; cat defaults.plan; }

# --- the sampler ------------------------------------------------------------------------------------------------------------
SAMPLE=(sample --param youngs=1e3:1e5:log --param poisson=0.1:0.45 --param bc0_rotation_rate=-2:2 --n 8 --seed 11 --set frames=2)
"$DS" "${SAMPLE[@]}" --out lhs1.csv > /dev/null && "$DS" "${SAMPLE[@]}" --out lhs2.csv > /dev/null && cmp -s lhs1.csv lhs2.csv && ok \
  || fail "the sampler: the same seed gave different tables"
"$DS" sample --param youngs=1e3:1e5:log --n 8 --seed 12 --out lhs3.csv > /dev/null && ! cmp -s lhs1.csv lhs3.csv && ok || fail "another seed, the same table"
"$PY" - lhs1.csv << 'EOF' && ok || fail "the sampler: not a Latin hypercube"
import csv, math, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert [r["id"] for r in rows] == [f"s{i:04d}" for i in range(8)] and all(r["frames"] == "2" for r in rows)
for name, lo, hi, log in (("youngs", 1e3, 1e5, True), ("poisson", 0.1, 0.45, False), ("bc0_rotation_rate", -2, 2, False)):
    f = (lambda v: math.log(v)) if log else (lambda v: v)
    strata = sorted(int(8 * (f(float(r[name])) - f(lo)) / (f(hi) - f(lo))) for r in rows)
    assert strata == list(range(8)), (name, strata)
EOF
"$DS" check lhs1.csv --no-dry-run > /dev/null && ok || fail "the sampled table is not accepted"

# --- refusals: exit 2, row and column named, nothing created --------------------------------------------------------
# refuse WHAT MESSAGE TABLE-LINES...: a table of these lines is refused by run, naming the problem, creating nothing
refuse() {
  local what="$1" msg="$2" rc=0
  shift 2
  printf '%s\n' "$@" > bad.csv
  "$DS" run bad.csv --out refused --ranks 2 -- "${BASE[@]}" > bad.log 2>&1 || rc=$?
  [ "$rc" = 2 ] && grep -qF -- "$msg" bad.log && [ ! -e refused ] && ok || { fail "$what: exit $rc, expected 2 with \"$msg\""; cat bad.log; }
}
refuse "unknown column" "bad.csv header, column poison: unknown column; did you mean poisson?" "id,youngs,poison" "x0,1e4,0.3"
refuse "duplicate id" "bad.csv row 3 (id x0), column id: duplicate id (also row 1)" "id,youngs" "x0,1e4" "x1,2e4" "x0,3e4"
refuse "poisson 0.6" "bad.csv row 4 (id x3), column poisson: 0.6 is not in (-1, 0.5)" "id,poisson" "x0,0.3" "x1,0.3" "x2,0.3" "x3,0.6"
refuse "not a number" "bad.csv row 2 (id x1), column youngs: 'abc' is not a number" "id,youngs" "x0,1e4" "x1,abc"
refuse "gravity length" "bad.csv row 1 (id x0), column gravity: '0,-9.8' has 2 values (need 3" "id,gravity" 'x0,"0,-9.8"'
refuse "bad id" "bad.csv row 1 (id a b), column id: 'a b' is not an id" "id,youngs" "a b,1e4"
refuse "missing mesh" "bad.csv row 1 (id x0), column mesh: 'none.msh': no such file" "id,mesh" "x0,none.msh"
refuse "driver's option" "bad.csv row 1 (id x0), column options: -output is set by pbng-dataset" "id,options" "x0,-output x.h5"
refuse "box selecting no node (dry run)" "bad.csv row 2 (id x1), column bc1_box: pbng -dry_run: boundary condition bc1 selects no node of the mesh" \
  "id,bc1_box" 'x0,"0,0,0,1,1,1"' 'x1,"5,5,5,6,6,6"'
refuse "unknown material in options (dry run)" "bad.csv row 1 (id x0), column options: pbng -dry_run: -material: unknown material" \
  "id,options" "x0,-material foo"
rc=0; "$DS" check bad.csv > bad.log 2>&1 || rc=$?
[ "$rc" = 2 ] && ok || fail "check on a bad table: exit $rc"
finish
