#!/usr/bin/env bash
# Multilevel PBNG (-solver pbng -multilevel L: PBNG sweeps as the smoother of PETSc's FAS):
#  - the transfer operators' unit test (test_transfer) on 3 ranks;
#  - the FAS fixed point: one cycle from Newton's converged equilibrium leaves it unchanged (1e-12);
#  - two- and three-level FAS converge (checked independently) to the same equilibrium as -solver newton (1e-9)
#    on the stretched and twisted box (every material), the bar under gravity, a Gmsh cube with non-nested -mesh_levels, a
#    TetGen tube with coarse levels made from it alone, the weakly bound blocks (generated, and from a
#    -weak file with the constraints carried to given and made coarse levels) and the dynamic block;
#  - p-multigrid: P2/P3/Q2 bars with linear coarse levels (tet4, hex8), and a Q1 bar with hex8 levels,
#    reach Newton's equilibrium (1e-12); coarse files of other kinds (a Q2 box over
#    prisms, a hex8/prism6/pyramid5 mesh over tetrahedra) too (1e-9);
#  - pbng-partition -multilevel carries the weak constraints to the coarse levels' files, and writes a
#    Q2 bar's hex8 levels (= the levels made on the fly);
#  - (rank/thread independence: tests/test_multilevel_ranks.sh, labelled numerics);
#  - Newton with PBNG as nonlinear preconditioner (-newton_npc pbng, right and left) reaches it too;
#  - PETSc's -snes_fas_* / -fas_* options pass through (monitor, PBNG sweeps as the coarse solver);
#  - errors: a coarse mesh that does not cover the fine one, one without a boundary set's nodes,
#    impossible level counts, misspelt FAS options, options for the wrong solver, weak constraints over
#    hexahedral coarse levels, a hexahedral file without its coarse levels.
source "$(dirname "$0")/lib.sh"
: "${MPIEXEC:=mpiexec}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive
D="$PBNG_TEST_DATA"
MPI=("$MPIEXEC" --oversubscribe --bind-to none)
# later LABEL ARGS...: queue an independent check (tests/check_output.py ARGS); run_later runs every queued check in
# one python process (the checker's start-up, 0.2 s of its 0.25 s a file here, once instead of 28 times), each a pass
# or a failure named LABEL; a check that did not report (the checker crashed) is a failure too
LATER=()
later() { local label="$1" IFS=$'\x1f'; shift; LATER+=("$label"$'\t'"$*"); }
run_later() {
  local line seen=0
  while IFS= read -r line; do
    case "$line" in "PASS "*) ok; seen=$((seen + 1)) ;; "FAIL "*) fail "${line#FAIL }"; seen=$((seen + 1)) ;; *) echo "$line" ;; esac
  done < <(printf '%s\n' "${LATER[@]}" | "$PY" -c '
import sys
sys.path.insert(0, sys.argv[1])
import check_output
for line in sys.stdin:
    label, args = line.rstrip("\n").split("\t", 1)
    try:
        rc = check_output.main(args.split("\x1f") + ["--quiet"])
    except BaseException as err:  # an argument error or an exception in a check
        print(f"check_output: {err!r}")
        rc = 1
    print(("PASS " if rc == 0 else "FAIL ") + label, flush=True)
' "$HERE")
  [ "$seen" = "${#LATER[@]}" ] && ok || fail "independent checks: $seen of ${#LATER[@]} reported"
  LATER=()
}

if "${MPI[@]}" -n 3 "$PBNG_TEST_BIN/test_transfer" > "$TMP/log" 2>&1; then ok; else fail "test_transfer on 3 ranks"; cat "$TMP/log"; fi

# FAS fixed point
bar=(-scene bar_gravity -res 4 -bar_length 2 -threads 1)
"$PBNG" "${bar[@]}" -solver newton -iters 50 -rtol 1e-13 -residual_every 1 -output "$TMP/fixed_ref.h5" > "$TMP/log" 2>&1 && ok || fail "newton reference"
"$PBNG" "${bar[@]}" -initial "$TMP/fixed_ref.h5" -multilevel 2 -iters 1 -output "$TMP/fixed.h5" > "$TMP/log" 2>&1 && ok || { fail "one cycle"; cat "$TMP/log"; }
# the reference checked independently (relative residual <= 1e-13), and the cycle's last frame equal to its own
# (measured: bitwise; the bound is round-off of the converged state)
later "newton reference: independent check" "$TMP/fixed_ref.h5" --max-relative-residual 1e-13
last_frames_agree "$TMP/fixed_ref.h5" "$TMP/fixed.h5" 1e-12 > "$TMP/diff" && ok || fail "FAS fixed point: one cycle moved the converged solution ($(cat "$TMP/diff"))"

# the same equilibrium as Newton: name, levels, tolerance, scene options (ML_ONLY: options of the
# multilevel runs alone; REF=name: the Newton equilibrium of an earlier call with the same scene options).
# Newton runs to 1e-10: it is quadratic there and stalls at round-off (1e-11 .. 3e-11) below, so a tighter
# -rtol only spends its -iters cap. One check per multilevel run: its result independently (relative residual
# <= its tolerance) and Newton's positions equal to it (measured differences 6.0e-14 .. 3.2e-10: the weakly
# bound blocks the largest).
# (one thread: on these small meshes a second one costs more in waking than it gains; threads: test_multilevel_ranks.sh)
ML_ONLY=()
check_equilibrium() {
  local name="$1" levels="$2" tol="$3" ref="$TMP/${REF:-$1}_newton.h5"; shift 3
  if [ -z "${REF:-}" ] && ! "$PBNG" "$@" -solver newton -iters 80 -rtol 1e-10 -residual_every 1 -threads 1 -output "$ref" > "$TMP/${name}_newton.log" 2>&1; then
    fail "$name: newton"; cat "$TMP/${name}_newton.log"; return
  fi
  for L in $levels; do
    if "$PBNG" "$@" "${ML_ONLY[@]}" -multilevel "$L" -iters 200 -rtol "$tol" -residual_every 1 -threads 1 -output "$TMP/${name}_ml$L.h5" > "$TMP/log" 2>&1; then ok
    else fail "$name: $L levels"; cat "$TMP/log"; continue; fi
    later "$name, $L levels: not converged to $tol, or another equilibrium than newton's" \
      "$TMP/${name}_ml$L.h5" --max-relative-residual "$tol" --compare "$ref" --rtol 1e-9
  done
}
check_equilibrium box "2 3" 1e-11 -scene box_stretch_twist -res 9 -frames 2
check_equilibrium bar "2 3" 1e-11 -scene bar_gravity -res 5 -bar_length 2

# p-multigrid: P2, P3 and Q2 bars whose first coarse level is the linear mesh of the same cells (tet4,
# hex8), and a Q1 bar with halved hex8 levels, reach Newton's equilibrium (P2 and Q2 on 1 and 3 ranks:
# tests/test_multilevel_ranks.sh); measured differences 1.2e-14 .. 2.9e-13 (relative to the largest coordinate)
for el in tet10 tet20 hex8 hex27; do
  pm=(-scene bar_gravity -element "$el" -res 3 -bar_length 2 -youngs 1e5 -threads 1) # P3 at E = 1e3 (tip drop > the length) stalls Newton too
  case $el in
    tet*) levels=3 first="level 1 (generated bar, res 3, tet4)" ;;
    hex27) levels=3 first="level 1 (generated bar, res 3, hex8)" ;;
    hex8) levels=2 first="level 0 (generated bar, res 2, hex8)" ;;
  esac
  if "$PBNG" "${pm[@]}" -solver newton -iters 150 -rtol 1e-10 -residual_every 1 -output "$TMP/p_${el}_newton.h5" > "$TMP/log" 2>&1 &&
    "$PBNG" "${pm[@]}" -multilevel $levels -iters 150 -rtol 1e-11 -residual_every 1 -output "$TMP/p_${el}_ml.h5" > "$TMP/log2" 2>&1; then ok
  else fail "$el: newton or $levels levels"; cat "$TMP/log" "$TMP/log2"; continue; fi
  grep -qF "$first" "$TMP/log2" && ok || fail "$el: the first coarse level is not '$first'"
  later "$el: $levels levels not converged to 1e-11, or another equilibrium than newton's" \
    "$TMP/p_${el}_ml.h5" --max-relative-residual 1e-11 --compare "$TMP/p_${el}_newton.h5" --rtol 1e-12
done
for material in corotated stable_neohookean; do
  check_equilibrium "box_$material" "2" 1e-11 -scene box_stretch_twist -res 7 -frames 1 -material $material
done
ML_ONLY=(-mesh_levels "$D/cube_v41_ascii.msh,$D/cube_coarse_v41.msh")
check_equilibrium gmsh "3" 1e-11 -mesh "$D/cube_fine_v41.msh" -fix_group left -bc0_group right -bc0_velocity 0.5,0,0 -bc0_rotation_rate 2 -frames 2
# coarse files of other kinds: a Q2 box over a prism mesh, a mesh mixing hex8, prism6 and pyramid5 over
# linear tetrahedra
ML_ONLY=(-mesh_levels "$D/prism6_v22_ascii.msh")
check_equilibrium q2_prisms "2" 1e-10 -mesh "$D/hex27_v22_ascii.msh" -fix_group left -gravity 0,0,-9.8 -youngs 1e5 -frames 1
ML_ONLY=(-mesh_levels "$D/cube_v41_ascii.msh")
check_equilibrium mixed "2" 1e-11 -mesh "$D/mixed_box_v22_ascii.msh" -fix_group left -bc0_group right -bc0_velocity 0.5,0,0 -bc0_rotation_rate 2 -frames 2
ML_ONLY=() # coarse levels made from the fine mesh alone (a curved, thin-walled TetGen tube)
check_equilibrium tube "2" 1e-10 -mesh "$D/tube.node" -fix_box 0,-1,-1,0,1,1 -gravity 0,-9.8,0 -frames 1
ML_ONLY=(-multilevel_coarsen_angle 60 -multilevel_coarsen_quality 0.03)
REF=tube check_equilibrium tube_coarser "3" 1e-10 -mesh "$D/tube.node" -fix_box 0,-1,-1,0,1,1 -gravity 0,-9.8,0 -frames 1
grep -q "^level 0 ($D/tube.node coarsened 2 times): 82 nodes" "$TMP/log" && ok || fail "the tube's coarsest level is not the expected one"
ML_ONLY=()
check_equilibrium blocks "2" 1e-11 -scene two_blocks_hanging -res 5 -weak_stiffness 1e4
# weak constraints from a file (a block hanging from another one by 74 of them), carried to every coarse
# level: given coarse meshes and coarse levels made from the fine mesh
weak_blocks=(-mesh "$D/two_blocks_v22.msh" -fix_group top -weak "$D/two_blocks_weak.txt" -gravity 0,0,-9.8 -youngs 1e4 -frames 1)
ML_ONLY=(-mesh_levels "$D/two_blocks_coarse_v22.msh")
check_equilibrium weak_file "2" 1e-10 "${weak_blocks[@]}"
grep -q "^level 0 ($D/two_blocks_coarse_v22.msh): .* tetrahedra, 74 weak constraints" "$TMP/log" && ok || fail "the coarse level lacks the carried weak constraints"
ML_ONLY=()
check_equilibrium weak_file_made "2" 1e-10 "${weak_blocks[@]}"
check_equilibrium dynamic "2" 1e-11 -scene block_drop_dynamic -res 7 -frames 3

# Newton with PBNG sweeps as nonlinear preconditioner, right and left: the same equilibrium
for side in right left; do
  if "$PBNG" -scene box_stretch_twist -res 9 -frames 2 -solver newton -newton_npc pbng -newton_snes_npc_side $side -iters 60 -rtol 1e-11 \
      -residual_every 1 -threads 1 -output "$TMP/npc_$side.h5" > "$TMP/log" 2>&1; then ok; else fail "newton, PBNG preconditioner on the $side"; cat "$TMP/log"; fi
  # measured differences 1.4e-12 (right), 1.5e-12 (left)
  later "newton with PBNG on the $side: not converged, or another equilibrium" \
    "$TMP/npc_$side.h5" --max-relative-residual 1e-11 --compare "$TMP/box_newton.h5" --rtol 5e-12
done
expect_error "unknown nonlinear preconditioner" "-newton_npc: unknown \"fas\" (known: none, pbng)" \
  "$PBNG" -scene box -solver newton -newton_npc fas -output "$TMP/bad.h5"

# pbng-partition -multilevel writes the coarse levels with the constraints carried over: the same
# positions as the levels made on the fly; a partitioned coarse level without them is an error
weak_run=(-fix_group top -gravity 0,0,-9.8 -youngs 1e4 -frames 1 -iters 4 -threads 1)
"$PBNG_BIN/pbng-partition" -mesh "$D/two_blocks_v22.msh" -weak "$D/two_blocks_weak.txt" -fix_group top -parts 2 -multilevel 2 \
  -output "$TMP/tb.p2.h5" > "$TMP/log" 2>&1 && ok || { fail "pbng-partition -multilevel with weak constraints"; cat "$TMP/log"; }
"${MPI[@]}" -n 2 "$PBNG" -mesh "$TMP/tb.p2.h5" -mesh_levels "$TMP/tb.p2.level1.h5" "${weak_run[@]}" -output "$TMP/tb_files.h5" > "$TMP/log" 2>&1 && ok ||
  { fail "partitioned levels with weak constraints"; cat "$TMP/log"; }
"${MPI[@]}" -n 2 "$PBNG" -mesh "$D/two_blocks_v22.msh" -weak "$D/two_blocks_weak.txt" -multilevel 2 "${weak_run[@]}" -output "$TMP/tb_fly.h5" > "$TMP/log" 2>&1 && ok ||
  { fail "levels made on the fly with weak constraints"; cat "$TMP/log"; }
# bitwise (measured); both stop at the default tolerance 1e-3 (measured 2.7e-4 after the cycle that reached it)
later "pbng-partition's levels differ from those made on the fly (or the residual bound)" \
  "$TMP/tb_fly.h5" --max-relative-residual 1e-3 --compare "$TMP/tb_files.h5" --rtol 0
# ... and the hex8 levels of a Q2 bar
q2=(-scene bar_gravity -element hex27 -res 5 -bar_length 2)
"$PBNG_BIN/pbng-partition" "${q2[@]}" -parts 2 -multilevel 3 -output "$TMP/q2.p2.h5" > "$TMP/log" 2>&1 && ok ||
  { fail "pbng-partition -multilevel of a Q2 bar"; cat "$TMP/log"; }
"${MPI[@]}" -n 2 "$PBNG" -scene bar_gravity -mesh "$TMP/q2.p2.h5" -mesh_levels "$TMP/q2.p2.level1.h5,$TMP/q2.p2.level2.h5" -iters 4 -threads 1 \
  -output "$TMP/q2_files.h5" > "$TMP/log" 2>&1 &&
  "${MPI[@]}" -n 2 "$PBNG" "${q2[@]}" -multilevel 3 -iters 4 -threads 1 -output "$TMP/q2_fly.h5" > "$TMP/log2" 2>&1 && ok ||
  { fail "Q2 bar: partitioned levels or levels made on the fly"; cat "$TMP/log" "$TMP/log2"; }
grep -q "^level 0 ($TMP/q2.p2.level2.h5): 45 nodes, 16 hex8" "$TMP/log" && ok || fail "the Q2 bar's partitioned coarsest level is not hex8"
# bitwise (measured); 4 cycles lower the residual (relative residual 0.40)
later "Q2 bar: pbng-partition's levels differ from those made on the fly (or the residual bound)" \
  "$TMP/q2_fly.h5" --max-relative-residual 1 --compare "$TMP/q2_files.h5" --rtol 0
"$PBNG_BIN/pbng-partition" -mesh "$D/two_blocks_coarse_v22.msh" -parts 2 -output "$TMP/tbc.p2.h5" > "$TMP/log" 2>&1 && ok || fail "pbng-partition of the coarse mesh"
expect_error "partitioned coarse level without the weak constraints" "the partitioned file has no weak constraints, the fine mesh 74" \
  "${MPI[@]}" -n 2 "$PBNG" -mesh "$TMP/tb.p2.h5" -mesh_levels "$TMP/tbc.p2.h5" "${weak_run[@]}" -output "$TMP/bad.h5"

# PETSc options pass through; the report names every level
small=(-scene box_stretch_twist -res 9 -frames 1 -multilevel 2 -threads 1)
"$PBNG" "${small[@]}" -iters 2 -monitor -snes_fas_monitor -output "$TMP/monitor.h5" > "$TMP/log" 2>&1 && ok || fail "-snes_fas_monitor"
grep -q "SNES Function norm" "$TMP/log" && ok || fail "-snes_fas_monitor printed nothing"
later "-snes_fas_monitor run: independent check (2 cycles: measured 1.5e-2)" "$TMP/monitor.h5" --max-relative-residual 4e-2
grep -q "^level 1 (generated Res-9 box): 729 nodes" "$TMP/log" && grep -q "^level 0 (generated Res-5 box): 125 nodes" "$TMP/log" && ok ||
  fail "the report does not list the levels"
grep -Eq "iter +1 .* alpha [0-9.]+" "$TMP/log" && ok || fail "-monitor lines lack the correction's alpha"
"$PBNG" "${small[@]}" -iters 100 -rtol 1e-8 -residual_every 1 -fas_coarse_snes_type ngs -fas_coarse_snes_max_it 20 -fas_coarse_snes_ngs_sweeps 2 \
  -snes_fas_cycles 2 -output "$TMP/ngs_coarse.h5" > "$TMP/log" 2>&1 && ok || { fail "PBNG sweeps as the coarse solver, W-cycles"; cat "$TMP/log"; }
later "PBNG sweeps as the coarse solver: not converged" "$TMP/ngs_coarse.h5" --max-relative-residual 1e-8
for search in none secant; do
  "$PBNG" "${small[@]}" -iters 100 -rtol 1e-8 -residual_every 1 -multilevel_linesearch $search -output "$TMP/ls_$search.h5" > "$TMP/log" 2>&1 && ok ||
    { fail "-multilevel_linesearch $search"; cat "$TMP/log"; }
  later "-multilevel_linesearch $search: not converged" "$TMP/ls_$search.h5" --max-relative-residual 1e-8
done

# errors
expect_error "coarse mesh not covering the fine one" "level 0 ($D/half_cube_v41.msh) does not cover level 1 ($D/cube_fine_v41.msh)" \
  "$PBNG" -mesh "$D/cube_fine_v41.msh" -fix_group left -mesh_levels "$D/half_cube_v41.msh" -output "$TMP/bad.h5"
expect_error "coarse mesh without a boundary set" "boundary condition fix_box0 selects no node of level 0 ($D/half_cube_v41.msh)" \
  "$PBNG" -mesh "$D/cube_fine_v41.msh" -fix_box 0.9,0,0,1,1,1 -mesh_levels "$D/half_cube_v41.msh" -output "$TMP/bad.h5"
expect_error "coarse mesh without a node set" "has no node set (physical group) named \"left\"" \
  "$PBNG" -mesh "$D/cube_fine_v41.msh" -fix_group left -mesh_levels "$D/tiny_sparse_v41.msh" -output "$TMP/bad.h5"
expect_error "too many levels for the scene" "-multilevel 3: the generated mesh (-res 4) has only 1 coarser level with" \
  "$PBNG" -scene box_stretch_twist -res 4 -multilevel 3 -output "$TMP/bad.h5"
expect_error "-multilevel out of range" "-multilevel 11: must be 1..10" "$PBNG" -scene box -multilevel 11 -output "$TMP/bad.h5"
expect_error "-multilevel with newton" "-multilevel and -mesh_levels are for -solver pbng" "$PBNG" -scene box -solver newton -multilevel 2 -output "$TMP/bad.h5"
expect_error "-mesh_levels with a scene" "-mesh_levels names coarser meshes of -mesh FILE" \
  "$PBNG" -scene box -mesh_levels "$D/cube_v41_ascii.msh" -output "$TMP/bad.h5"
expect_error "-mesh_levels disagreeing with -multilevel" "-multilevel 3 with 1 -mesh_levels files" \
  "$PBNG" -mesh "$D/cube_fine_v41.msh" -fix_group left -multilevel 3 -mesh_levels "$D/cube_v41_ascii.msh" -output "$TMP/bad.h5"
expect_error "a missing coarse mesh file" "cube_missing.msh" \
  "$PBNG" -mesh "$D/cube_fine_v41.msh" -fix_group left -mesh_levels "$D/cube_missing.msh" -output "$TMP/bad.h5"
expect_error "misspelt FAS option" "option -fas_levels_snes_ngs_sweep was not used by the multilevel solver" \
  "$PBNG" "${small[@]}" -fas_levels_snes_ngs_sweep 3 -output "$TMP/bad.h5"
expect_error "FAS option without levels" "option -fas_levels_snes_type is for the multilevel solver" \
  "$PBNG" -scene box_stretch_twist -res 5 -multilevel 1 -fas_levels_snes_type ngs -output "$TMP/bad.h5"
expect_error "-snes_fas_levels disagreeing" "-snes_fas_levels 3 disagrees with -multilevel 2" "$PBNG" "${small[@]}" -snes_fas_levels 3 -output "$TMP/bad.h5"
expect_error "weak constraints over hexahedral coarse levels" \
  "level 0 (generated Res-2 box, hex8): weak constraints are carried to coarse levels of tetrahedra only: a constraint's side holds at most 4 nodes" \
  "$PBNG" -scene box -element hex8 -res 4 -weak "$D/box4_weak.txt" -multilevel 2 -output "$TMP/bad.h5"
# a hexahedral file without its coarse levels: its tetrahedra (a node at each cell's centroid) coarsened by edge
# collapses (45 nodes -> 13), to Newton's equilibrium
hexfile=(-mesh "$D/hex8_v22_ascii.msh" -fix_group left -gravity 0,-9.8,0 -youngs 1e4 -frames 1 -threads 1)
run hexfile_newton "${hexfile[@]}" -solver newton -rtol 1e-10 -iters 50
run hexfile_ml "${hexfile[@]}" -multilevel 2 -rtol 1e-8 -iters 500
grep -q "^level 0 (.*hex8_v22_ascii.msh coarsened 1 time): 13 nodes, 15 tetrahedra" "$TMP/hexfile_ml.log" && ok || fail "hexfile: $(grep '^level' "$TMP/hexfile_ml.log")"
check hexfile_ml --max-relative-residual 1e-8 --compare "$TMP/hexfile_newton.h5" --rtol 1.6e-9  # measured 5.3e-10
# more levels than edge collapses make (240 nodes -> 39 -> 8 with the relaxed limits; 8 cannot be coarsened): the level left
# is made by aggregation of the coarsest mesh's Newton matrix (not refused), to Newton's equilibrium; its prolongator
# reproduces the 12 linear fields (rigid motions among them) to round-off (measured 6e-16 on the tube)
cube=(-mesh "$D/cube_fine_v41.msh" -fix_group left -gravity 0,-9.8,0 -youngs 1e4 -frames 1 -threads 1)
run cube_newton "${cube[@]}" -solver newton -rtol 1e-10 -iters 50
run cube_aggregation "${cube[@]}" -multilevel 4 -rtol 1e-8 -iters 500 -multilevel_aggregation_check
grep -q "^below level 0: 1 level by aggregation of its Newton matrix" "$TMP/cube_aggregation.log" &&
  [ "$(grep -c '^level [012] (' "$TMP/cube_aggregation.log")" = 3 ] && ok || fail "cube_aggregation: $(grep '^level\|^below' "$TMP/cube_aggregation.log")"
check cube_aggregation --max-relative-residual 1e-8 --compare "$TMP/cube_newton.h5" --rtol 1e-8
d=$(sed -n 's/^aggregation check: 12 modes, .* range \(.*\)$/\1/p' "$TMP/cube_aggregation.log")
[ -n "$d" ] && "$PY" -c "import sys; sys.exit(float('$d') > 1e-12)" && ok || fail "cube_aggregation: linear fields $d from the prolongator's range"
# a mesh that cannot be coarsened even once (one tetrahedron): refused, naming what would do
printf '4 3 0 0\n1 0 0 0\n2 1 0 0\n3 0 1 0\n4 0 0 1\n' > "$TMP/one.node"
printf '1 4 0\n1 1 2 3 4\n' > "$TMP/one.ele"
expect_error "a mesh that cannot be coarsened once" "-multilevel 3: $TMP/one.node cannot be coarsened even once" \
  "$PBNG" -mesh "$TMP/one.node" -fix_box 0,0,0,0,1,1 -multilevel 3 -output "$TMP/bad.h5"
expect_error "coarsening options with -mesh_levels" "-multilevel_coarsen_* are for -multilevel L > 1 with -mesh FILE and no -mesh_levels" \
  "$PBNG" -mesh "$D/cube_fine_v41.msh" -fix_group left -mesh_levels "$D/cube_v41_ascii.msh" -multilevel_coarsen_ratio 4 -output "$TMP/bad.h5"
expect_error "unknown correction line search" "-multilevel_linesearch: unknown \"wolfe\"" "$PBNG" "${small[@]}" -multilevel_linesearch wolfe -output "$TMP/bad.h5"
run_later
finish
