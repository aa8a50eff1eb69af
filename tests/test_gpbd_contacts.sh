#!/usr/bin/env bash
# Contacts in -solver gpbd (issue 19; docs/gpbd_solver.md#contacts): each contact is a k = 1 term projected as
# XPBD's constraint (App. A: GPBD's update of a linearly compliant constraint) after every sweep, in key order
# on every rank alike (methods/pbd/contact_projection.h, as the constraint solvers do; the seed's Sec. 5 projects
# contacts after each sweep too).
#  - two_blocks_colliding (-res 4, dt 0.006: in contact from frame 21 of 23), both forms: contacts form, the
#    independent checker recomputes every frame's residual and energy with its contacts and finds no surface
#    vertex deeper inside the other block than a bound measured for the form (GPBD's frames are a fixed number
#    of sweeps, not equilibria: the penetration is their result's check);
#  - 1 rank x 1 thread = 3 ranks x 2 threads bitwise, both forms (Gauss-Seidel: an element projected by its
#    owner, each color seeing the same positions on every partition; measured bitwise).
# Bounds: at most ~3x the value measured (1 x 1 = 3 x 2; 2026-11-27).
source "$(dirname "$0")/lib.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_WAIT_POLICY=passive

blocks=(-scene two_blocks_colliding -res 4 -dt 0.006 -frames 23 -solver gpbd) # contact distance 0.190
declare -A form_options=([gs]="-gpbd_form gs -iters 10" [jacobi]="-gpbd_form jacobi -gpbd_omega 1.9 -iters 30") # Jacobi, omega 1: no contact after 10
# deepest vertex inside the other block, measured: Gauss-Seidel 1.64e-3, Jacobi 3.10e-3 (frame 23)
declare -A depth=([gs]=4.9e-3 [jacobi]=9.3e-3)
for form in gs jacobi; do
  read -ra fo <<< "${form_options[$form]}"
  run "$form.1x1" "${blocks[@]}" "${fo[@]}" -threads 1
  grep -q "contacts [1-9]" "$TMP/$form.1x1.log" && ok || fail "$form: no contact in the frame lines"
  check "$form.1x1" --max-penetration "${depth[$form]}"
  mpi 3 "$PBNG" "${blocks[@]}" "${fo[@]}" -threads 2 -output "$TMP/$form.3x2.h5" > "$TMP/$form.3x2.log" 2>&1 && ok || { fail "$form 3x2"; cat "$TMP/$form.3x2.log"; }
done
compare jacobi.3x2 jacobi.1x1 0
compare gs.3x2 gs.1x1 0
finish
