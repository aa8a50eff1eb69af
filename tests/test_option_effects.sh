#!/usr/bin/env bash
# Options with no effect are errors (docs/options.md#options-with-no-effect): an option that acts on nothing in
# the run is refused before any work (exit 1, no output file), naming the option, why, and what would act; the
# same option is accepted where it acts. One refusal and one acceptance per rule family. The refusals are real
# runs (not -dry_run), so that "no output file" is shown, not implied; the acceptances are dry runs.
source "$(dirname "$0")/lib.sh"
o="$TMP/out.h5"
sheet_file="$PBNG_TEST_DATA/sheet_square_v41_ascii.msh" # tri3 only
mixed_file="$PBNG_TEST_DATA/sheet_block_v41_ascii.msh"  # tetrahedra and tri3
# accepted WHAT pbng-options...: a dry run of the options succeeds
accepted() {
  local what="$1"; shift
  "$PBNG" "$@" -dry_run -output "$o" > "$TMP/accepted.log" 2>&1 && ok || { fail "$what: refused"; cat "$TMP/accepted.log"; }
}
cloth() { "$PBNG" -scene cloth_stretch -res 5 -frames 1 "$@"; }
box() { "$PBNG" -scene box -res 3 -frames 1 -fix_box 0,0,0,0,1,1 "$@"; }

# 1. the volume material on a mesh without volume elements: from the scene (with the options), and from a
#    mesh file (once it is read, before the output file)
expect_error "-poisson on a generated sheet" '-poisson has no effect in this run: the mesh has no volume elements; sheets: -sheet_poisson' \
  cloth -poisson 0.499 -output "$o"
expect_error "-youngs on a sheet file" '-youngs has no effect in this run: the mesh has no volume elements; sheets: -sheet_youngs' \
  "$PBNG" -mesh "$sheet_file" -fix_box -1,-1,-1,0,1,1 -frames 1 -youngs 1e4 -output "$o"
accepted "-sheet_poisson on a sheet" -scene cloth_stretch -res 5 -sheet_poisson 0.499
accepted "-poisson on a mesh of tetrahedra and sheets" -mesh "$mixed_file" -fix_box -1,-1,-1,0,1,1 -poisson 0.45

# 2. sheet materials: the other membrane law's parameters, the FEM parameters of peridynamic membranes, sheet
#    options on a mesh without sheets
expect_error "-sheet_k_weft with an isotropic membrane" \
  '-sheet_k_weft has no effect in this run: the membrane law is isotropic (-sheet_membrane); give -sheet_membrane orthotropic' \
  cloth -sheet_k_weft 2e6 -output "$o"
expect_error "-sheet_youngs with peridynamic membranes" \
  '-sheet_youngs has no effect in this run: the sheets are peridynamic membranes (-sheet_model peridynamic); their modulus: -pd_s0' \
  cloth -mode dynamic -solver sissm -sheet_model peridynamic -sheet_youngs 1e5 -output "$o"
expect_error "-sheet_thickness on tetrahedra" '-sheet_thickness has no effect in this run: the mesh has no sheet elements (tri3)' \
  box -sheet_thickness 0.01 -output "$o"
accepted "-sheet_k_weft with an orthotropic membrane" -scene cloth_stretch -res 5 -sheet_membrane orthotropic -sheet_k_weft 2e6
halves="$TMP/halves.msh" # a sheet of two physical groups, left and right (the sheet-group rules: -sheetK_*)
"$PY" "$HERE/make_trampoline.py" "$halves" --block 0 --halves > /dev/null && ok || fail "make_trampoline.py --halves"
expect_error "a group's -sheet1_k_weft with its isotropic membrane" \
  '-sheet1_k_weft has no effect in this run: the membrane law is isotropic (-sheet1_membrane); give -sheet1_membrane orthotropic' \
  "$PBNG" -mesh "$halves" -fix_box 0,0,0,0,0,1 -frames 1 -sheet1_group right -sheet1_k_weft 2e6 -output "$o"
accepted "a group's -sheet1_k_weft with its orthotropic membrane" -mesh "$halves" -fix_box 0,0,0,0,0,1 -sheet1_group right \
  -sheet1_membrane orthotropic -sheet1_k_weft 2e6
accepted "-pd_s0 with peridynamic membranes" -scene cloth_stretch -res 5 -mode dynamic -solver sissm -sheet_model peridynamic -pd_s0 1e5

# 3. time and mass in quasistatic frames that depend on neither
expect_error "-dt on static quasistatic frames" \
  '-dt has no effect in this run: the quasistatic frames do not depend on time (no boundary set moves or is released, no plasticity, no pseudo-time solver); leave it out, or use -mode dynamic' \
  box -gravity 0,-9.8,0 -dt 0.5 -output "$o"
expect_error "-density without gravity (quasistatic)" '-density has no effect in this run: quasistatic frames without gravity have no load from the masses' \
  box -bc0_box 1,0,0,1,1,1 -bc0_velocity 0.1,0,0 -density 100 -output "$o"
accepted "-dt with a moving set" -scene box -res 3 -fix_box 0,0,0,0,1,1 -bc0_box 1,0,0,1,1,1 -bc0_velocity 0.1,0,0 -dt 0.5
accepted "-dt in dynamic mode" -scene box -res 3 -fix_box 0,0,0,0,1,1 -mode dynamic -dt 0.5
accepted "-density with gravity" -scene box -res 3 -fix_box 0,0,0,0,1,1 -gravity 0,-9.8,0 -density 100
accepted "-density with a pseudo-time solver" -scene box_stretch_twist -res 4 -solver xpbd_qs -density 100

# 4. boundary sets: a motion's parts without the set, or without the motion they belong to
expect_error "-bc1_velocity without a set" '-bc1_velocity has no effect in this run: there is no boundary set -bc1; give -bc1_box or -bc1_group' \
  box -bc1_velocity 1,0,0 -output "$o"
expect_error "-bc1_axis without a rotation" '-bc1_axis has no effect in this run: set -bc1 does not rotate; give -bc1_rotation_rate' \
  box -bc1_box 1,0,0,1,1,1 -bc1_velocity 0.1,0,0 -bc1_axis 0,1,0 -output "$o"
expect_error "-release_penalty without a released set" '-release_penalty has no effect in this run: no boundary set is released (-bcK_release)' \
  box -release_penalty 10 -output "$o"
accepted "-bc1_axis with a rotation" -scene box -res 3 -fix_box 0,0,0,0,1,1 -bc1_box 1,0,0,1,1,1 -bc1_rotation_rate 1 -bc1_axis 0,1,0
accepted "-release_penalty with a released set" -scene box -res 3 -fix_box 0,0,0,0,1,1 -bc1_box 1,0,0,1,1,1 -bc1_release 0.1 -release_penalty 10

# 5. solver options: of a solver or setting not selected (the solvers' own checks, and this table's)
expect_error "-omega with newton" '-omega, -rho and -gamma are for -solver pbng (the solver is newton)' box -solver newton -omega 1.5 -output "$o"
expect_error "-newton_preconditioner with pbng" 'option -newton_preconditioner is for -solver newton (the solver is pbng)' \
  box -newton_preconditioner gamg -output "$o"
expect_error "-multilevel_linesearch single-level" '-multilevel_linesearch is for -multilevel L with L > 1' box -multilevel 1 -multilevel_linesearch secant -output "$o"
expect_error "-multilevel_ngmres with newton" '-multilevel_ngmres is for -multilevel L with L > 1' box -solver newton -multilevel_ngmres 2 -output "$o"
expect_error "-multilevel_coarse_reuse with newton" '-multilevel_coarse_reuse is for -multilevel L with L > 1' box -solver newton -multilevel_coarse_reuse 1 -output "$o"
expect_error "-multilevel_aggregation with newton" '-multilevel_aggregation is for -multilevel L with L > 1' box -solver newton -multilevel_aggregation 2 -output "$o"
expect_error "-multilevel_coarse_reuse X" '-multilevel_coarse_reuse x: must be auto or an integer in 0..1000' box -multilevel 2 -multilevel_coarse_reuse x -output "$o"
expect_error "-xpbd_order without weak constraints" '-xpbd_order has no effect in this run: the mesh has no weak constraints' \
  box -solver xpbd_qs -xpbd_order weak_first -output "$o"
expect_error "-dynamic_guess with a solver of its own guess" \
  '-dynamic_guess has no effect in this run: the solver starts each step from its own prediction' \
  box -mode dynamic -solver xpbd_ho -dynamic_guess free_fall -output "$o"
expect_error "-residual_every with -monitor" '-residual_every has no effect in this run: -monitor evaluates the residual after every iteration' \
  box -rtol 1e-3 -monitor -residual_every 5 -output "$o"
expect_error "-sissm_rho without Chebyshev" '-sissm_rho has no effect in this run: -sissm_chebyshev is off; give -sissm_chebyshev' \
  cloth -mode dynamic -solver sissm -sheet_model peridynamic -sissm_rho 0.9 -output "$o"
accepted "-xpbd_order with weak constraints" -scene two_blocks_hanging -res 3 -solver xpbd_qs -xpbd_order weak_first
accepted "-omega with -accel sor" -scene box -res 3 -fix_box 0,0,0,0,1,1 -accel sor -omega 1.5
accepted "-sissm_rho with Chebyshev" -scene cloth_stretch -res 5 -mode dynamic -solver sissm -sheet_model peridynamic -sissm_chebyshev -sissm_rho 0.9

# 6. contacts: the sheets' contact gap without sheets; the contact local step's parameters without it or its solver
expect_error "-contact_thickness without sheets" \
  '-contact_thickness has no effect in this run: the mesh has no sheet elements (tri3); volume surfaces: -contact_distance' \
  box -contact -contact_thickness 0.01 -output "$o"
expect_error "-pd_contact_mu without the contact step" '-pd_contact_mu has no effect in this run: the contact local step is off; give -pd_contact' \
  cloth -mode dynamic -solver sissm -sheet_model peridynamic -pd_contact_mu 2 -output "$o"
expect_error "-contact 0 with a contact option" '-contact 0 with contact options' box -contact 0 -contact_distance 0.1 -output "$o"
accepted "-contact_thickness with sheets" -scene cloth_stretch -res 5 -contact -contact_thickness 0.01
accepted "-pd_contact_mu with the contact step" -scene cloth_stretch -res 5 -mode dynamic -solver sissm -sheet_model peridynamic -pd_contact -pd_contact_mu 2

# 7. loads: a point load of no force
expect_error "-load_box without a force" '-load_box has no effect in this run: the point load'"'"'s force is zero; give -load_force' \
  box -load_box 1,0,0,1,1,1 -output "$o"
accepted "-load_box with a force" -scene box -res 3 -fix_box 0,0,0,0,1,1 -load_box 1,0,0,1,1,1 -load_force 1,0,0

# PETSc's own options still work (read at PetscFinalize, or by the solver's PETSc objects)
accepted "-options_left" -scene box -res 3 -fix_box 0,0,0,0,1,1 -options_left 0
accepted "-newton_ksp_rtol with newton" -scene box -res 3 -fix_box 0,0,0,0,1,1 -solver newton -newton_ksp_rtol 1e-6
finish
