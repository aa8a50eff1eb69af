#!/usr/bin/env bash
# Multilevel PBNG with contacts (docs/contact.md#multilevel): the fine contacts carried to every coarse
# level as terms between interpolated rest points.
#  - a box hanging from its top face and stretched onto a plane: 2 and 3 levels reach single-level
#    PBNG's equilibrium (unilateral contacts);
#  - a bar lying on a plane under gravity (the case that stalled at 1e-1 before the contacts were
#    carried): 3 levels reach 1e-8 within 60 cycles, no vertex below the plane (independent check);
#  - two_blocks_colliding on 2 levels: the independent checker recomputes every frame's residual and
#    energy with its contacts and the penetration; 1 rank x 2 threads = 3 ranks x 1 thread to 1e-10
#    (docs/multilevel.md#determinism: the coarsest matrix's entries are summed in an order that depends
#    on the partition; measured 6e-15); a
#    stop and a restart in the middle of a contact frame give bitwise the uninterrupted frames;
#  - coarse levels that are not linear tetrahedra are refused with a message saying what to do.
source "$(dirname "$0")/lib.sh"
: "${MPIEXEC:=mpiexec}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive

# --- a box stretched onto a plane: the same equilibrium as single-level PBNG -----------------------------
hang=(-scene box -res 6 -fix_box 0,0.99,0,1,1,1 -gravity 0,-9.8,0 -youngs 100 -obstacle "plane:0,-0.1,0,0,1,0" -contact_model unilateral
      -frames 1 -rtol 1e-9 -threads 2)
run hang_pbng "${hang[@]}" -iters 3000
run hang_ml2 "${hang[@]}" -iters 100 -multilevel 2
run hang_ml3 "${hang[@]}" -iters 100 -multilevel 3
check hang_ml2 --compare "$TMP/hang_pbng.h5" --rtol 1e-8 --max-relative-residual 1e-9
check hang_ml3 --compare "$TMP/hang_pbng.h5" --rtol 1e-8 --max-relative-residual 1e-9

# --- a bar lying on a plane ----------------------------------------------------------------------------------
run bar -scene bar_gravity -res 8 -obstacle "plane:0,-0.05,0,0,1,0" -contact_model unilateral -frames 1 -iters 60 -rtol 1e-8 -multilevel 3 -threads 2
check bar --max-relative-residual 1e-8 --max-penetration 1e-5

# --- two blocks colliding ---------------------------------------------------------------------------------------
blocks=(-scene two_blocks_colliding -res 5 -frames 62 -iters 100 -rtol 1e-8 -multilevel 2)
for layout in "1 2" "3 1"; do
  read -r ranks threads <<<"$layout"
  mpi "$ranks" "$PBNG" "${blocks[@]}" -threads "$threads" -output "$TMP/blocks.$ranks.h5" > "$TMP/log" 2>&1 && ok \
    || { fail "blocks, $ranks ranks"; cat "$TMP/log"; }
done
grep -q "contacts [1-9]" "$TMP/log" && ok || fail "blocks: no contact in the frame lines"
check blocks.1 --max-penetration 0.142
"$PY" "$HERE/check_output.py" "$TMP/blocks.3.h5" --compare "$TMP/blocks.1.h5" --rtol 1e-10 --quiet && ok || fail "blocks: 3 ranks x 1 thread != 1 rank x 2 threads"

restart=(-scene two_blocks_colliding -res 5 -frames 62 -iters 10 -contact_model unilateral -multilevel 2 -threads 1)
mpi 2 "$PBNG" "${restart[@]}" -output "$TMP/full.h5" > "$TMP/log" 2>&1 && ok || { fail "uninterrupted"; cat "$TMP/log"; }
rc=0; mpi 2 "$PBNG" "${restart[@]}" -output "$TMP/cut.h5" -test_signal_after 585 > "$TMP/log" 2>&1 || rc=$?
[ "$rc" -eq 85 ] && ok || { fail "stop: exit $rc"; cat "$TMP/log"; }
mpi 2 "$PBNG" "${restart[@]}" -output "$TMP/cut.h5" -restart auto > "$TMP/log" 2>&1 && ok || { fail "restart"; cat "$TMP/log"; }
check cut --compare "$TMP/full.h5" --rtol 0

# --- misuse -----------------------------------------------------------------------------------------------------
expect_error "hexahedral coarse levels" "contacts with -multilevel need coarse levels of linear tetrahedra" \
  "$PBNG" -scene box -res 4 -element hex8 -obstacle "plane:0,-0.1,0,0,1,0" -multilevel 2 -output "$TMP/bad.h5"
finish
