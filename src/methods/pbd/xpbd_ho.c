/* The seed's XPBD for every element kind (Saillant et al. 2024, Sec. 4, Alg. 1-2): per element two
 * energy constraints, one per stiffness term of the material (methods/pbd/energy_constraints.h), projected
 * with the constraint colors, owners and ghost exchanges the PBD/XPBD baselines use
 * (methods/pbd/constraint_sweep.h).
 *   -mode dynamic      Alg. 1: a frame of -dt is -xpbd_ho_substeps substeps of h = dt / N, each of
 *                      -xpbd_ho_iterations sweeps n_it (default 1: Macklin's small steps): predict
 *                      x~ = x + h v + h^2 g, multipliers 0, n_it sweeps over every color, v = (x - x_old) / h;
 *                      prescribed nodes follow their motion to each substep's time.
 *   -mode quasistatic  pseudo time: every n_it iterations (sweeps) start a pseudo step of -xpbd_ho_dt
 *                      from the current positions at zero velocity (x~ = x + h^2 g, multipliers 0).
 * Sheets (issue 18): each tri3 membrane and bend4 stencil is one energy constraint C = sqrt(2 E), alpha = 1
 * (methods/pbd/energy_constraints.h), projected with the elements (its multiplier in the element's first slot).
 * The reported residual is the problem's, as for every solver. */
#include <math.h>
#include <string.h>
#include "methods/pbd/constraint_sweep.h"
#include "methods/pbd/energy_constraints.h"

typedef struct {
  pbng_energy_split split;
  pbng_substepper st; /* the sweep, substeps (Alg. 1), n_it sweeps per (pseudo) step, v_n of Alg. 1 */
} ho_data;

/* The volume material's split into the seed's terms (Table 2), refused by name when there is none. */
static PetscErrorCode check_volume_material(const pbng_solver *s, pbng_energy_split *split)
{
  const pbng_problem *pb = s->pb;

  PetscFunctionBeginUser;
  PetscCheck(pb->mat.kind != PBNG_MATERIAL_STVK || s->opt.xpbd_ho.split == PBNG_SPLIT_STABLE, PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP,
             "-xpbd_ho_split macklin is a neo-Hookean split; StVK has one split (Table 2: tr(E^2) and tr(E)^2), -xpbd_ho_split stable");
  PetscCheck(pb->mat.kind != PBNG_MATERIAL_STVK || pb->mat.k_volume >= 0.0, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE,
             "-solver xpbd_ho: StVK with -poisson %g has lambda = %g < 0, a negative stiffness with no compliance; use nu >= 0",
             pb->mat.poisson, pb->mat.k_volume);
  PetscCheck(!pbng_energy_split_init(&pb->mat, (pbng_split_kind)s->opt.xpbd_ho.split, split), PETSC_COMM_WORLD, PETSC_ERR_SUP,
             "-solver xpbd_ho: the %s energy has no split into the seed's constraint terms (Table 2); use -material neohookean, "
             "stable_neohookean or stvk",
             pbng_material_kind_name(pb->mat.kind));
  PetscFunctionReturn(0);
}

/* The volume material's split (a mesh of sheets alone has no volume material to check); mode-specific
 * options given for the other mode are errors naming them. Collective. */
static PetscErrorCode check_setting(const pbng_solver *s, pbng_energy_split *split)
{
  const pbng_problem *pb = s->pb;
  const int dynamic = pb->mode == PBNG_MODE_DYNAMIC;
  unsigned kinds;

  PetscFunctionBeginUser;
  PetscCall(pbng_constraint_mesh_kinds(pb->dm, &kinds));
  memset(split, 0, sizeof(*split));
  if (kinds & ~PBNG_SHEET_KINDS_MASK) PetscCall(check_volume_material(s, split));
  PetscCheck(dynamic || s->opt.xpbd_ho.substeps == 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP,
             "-xpbd_ho_substeps is for -mode dynamic; quasistatic frames take one pseudo step per iteration (-xpbd_ho_dt)");
  PetscCheck(!dynamic || s->opt.xpbd_ho.dt == 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP,
             "-xpbd_ho_dt is for -mode quasistatic; a dynamic frame's substeps are -dt / -xpbd_ho_substeps");
  PetscFunctionReturn(0);
}

static PetscErrorCode ho_begin_frame(pbng_solver *s) { return pbng_substepper_begin_frame(&((ho_data *)s->data)->st, s->pb); }

static PetscErrorCode ho_create(pbng_solver *s)
{
  const pbng_problem *pb = s->pb;
  pbng_energy_split split;
  ho_data *d;

  PetscFunctionBeginUser;
  PetscCall(check_setting(s, &split));
  PetscCall(PetscNew(&d));
  s->data = d;
  d->split = split;
  const int substeps = pb->mode == PBNG_MODE_DYNAMIC ? s->opt.xpbd_ho.substeps : 0;
  PetscCheck(pb->mode != PBNG_MODE_DYNAMIC || substeps >= 1, PETSC_COMM_SELF, PETSC_ERR_PLIB, "-solver xpbd_ho: substeps not resolved");
  const double h = substeps ? pb->dt / substeps : (s->opt.xpbd_ho.dt > 0 ? s->opt.xpbd_ho.dt : pb->dt);
  PetscCall(pbng_substepper_create(s, substeps, s->opt.xpbd_ho.iterations, h, 0, &d->st));
  PetscFunctionReturn(0);
}

/* A sheet term's one energy constraint (methods/pbd/energy_constraints.h), its multiplier the element's first. */
static void project_sheet(const pbng_problem *pb, pbng_constraint_sweep *cs, int32_t e, pbng_element_kind kind)
{
  const int32_t *node = &pb->dm->elems[(int64_t)pb->dm->nen * e];
  const uint32_t moved = pbng_project_sheet_constraint(pbng_problem_sheet_material(pb, e), kind, &pb->geo.sheet[e], node, cs->proj.inv_dt2,
                                                       cs->inv_mass, &cs->lambda_elem[PBNG_ELEMENT_MULTIPLIERS * e], pb->x);
  for (int a = 0; a < (kind == PBNG_ELEMENT_TRI3 ? 3 : 4); ++a)
    if ((moved >> a) & 1u) cs->touched[node[a]] = 1;
}

static void project_element(pbng_solver *s, pbng_constraint_sweep *cs, int32_t e)
{
  const ho_data *d = s->data;
  const int sheet = pbng_constraint_sheet_kind(s->pb, e);
  if (sheet >= 0) {
    project_sheet(s->pb, cs, e, (pbng_element_kind)sheet);
    return;
  }
  double V[PBNG_MAX_QUAD_POINTS], grad[PBNG_MAX_QUAD_POINTS * PBNG_MAX_ELEMENT_NODES * 3];
  pbng_element_points el;
  pbng_constraint_element_points(s->pb, e, V, grad, &el);
  const uint32_t moved =
    pbng_project_energy_constraints(&d->split, cs->proj.inv_dt2, &el, cs->inv_mass, &cs->lambda_elem[PBNG_ELEMENT_MULTIPLIERS * e], s->pb->x);
  for (int a = 0; a < el.nen; ++a)
    if ((moved >> a) & 1u) cs->touched[el.node[a]] = 1;
}

/* Alg. 1: iteration l is sweep l mod n_it of (pseudo) step l / n_it: line 3 at a step's first sweep (quasistatic:
 * v = 0), lines 5-11 each sweep, line 14 after a dynamic step's last. */
static PetscErrorCode ho_iterate(pbng_solver *s, int l)
{
  int step_done;
  return pbng_substepper_iterate(&((ho_data *)s->data)->st, s, l, project_element, &step_done);
}

static PetscErrorCode ho_destroy(pbng_solver *s)
{
  ho_data *d = s->data;

  PetscFunctionBeginUser;
  if (d) PetscCall(pbng_substepper_destroy(&d->st));
  PetscCall(PetscFree(s->data));
  PetscFunctionReturn(0);
}

/* Checkpoint state: the step's (multipliers, inertial target, start) and the substeps' velocity
 * (dynamic); after a restart the ghosts' from their owners. */
static PetscErrorCode ho_state(pbng_solver *s, pbng_state_field *fields, int *n)
{
  return pbng_substepper_state(&((ho_data *)s->data)->st, s->pb, "xpbd_ho", fields, n);
}

static PetscErrorCode ho_restored(pbng_solver *s) { return pbng_substepper_restored(&((ho_data *)s->data)->st, s->pb); }

/* Dynamic frames are exactly their substeps x n_it iterations (substeps default: -iters / n_it). */
static int ho_frame_iterations(const pbng_solver_options *opt, int dynamic, int iters)
{
  return dynamic ? pbng_substep_iterations(opt->xpbd_ho.substeps, opt->xpbd_ho.iterations, iters) : 0;
}

static void ho_set_frame_iterations(pbng_solver_options *opt, int n) { opt->xpbd_ho.substeps = n / opt->xpbd_ho.iterations; }

/* one solver iteration per step (Alg. 1's n_it); substeps and dt from the frame unless given */
static void xpbd_ho_defaults(pbng_solver_options *o) { o->xpbd_ho = (pbng_xpbd_ho_options){.iterations = 1}; }

static PetscErrorCode pbng_xpbd_ho_set_from_options(PetscOptionItems *PetscOptionsObject, pbng_solver_options *o, const char *selected)
{
  const char *splits[PBNG_SPLIT_COUNT];
  PetscBool set_split, set_sub, set_dt, set_it;
  PetscInt substeps = o->xpbd_ho.substeps, iterations = o->xpbd_ho.iterations;
  const int mine = !strcmp(selected, pbng_solver_xpbd_ho_ops.name);

  PetscFunctionBeginUser;
  for (int k = 0; k < PBNG_SPLIT_COUNT; ++k) splits[k] = pbng_split_kind_name((pbng_split_kind)k);
  PetscCall(pbng_options_named_choice(PetscOptionsObject, "-xpbd_ho_split",
                                      "stable (the seed's Eq. 24-28; StVK: Table 2's, its only split) | macklin (Table 2's Neo-Hooke, Macklin et al. 2021)", "split ", splits,
                                      PBNG_SPLIT_COUNT, &o->xpbd_ho.split, &set_split));
  PetscCall(PetscOptionsInt("-xpbd_ho_substeps", "dynamic: substeps per frame, n_it iterations each (default: -iters / n_it)", NULL, substeps, &substeps,
                            &set_sub));
  PetscCall(PetscOptionsReal("-xpbd_ho_dt", "quasistatic: pseudo-time step (default: -dt)", NULL, o->xpbd_ho.dt, &o->xpbd_ho.dt, &set_dt));
  PetscCall(PetscOptionsInt("-xpbd_ho_iterations", "sweeps per (pseudo) step, n_it of Alg. 1", NULL, iterations, &iterations, &set_it));
  PetscCheck(mine || !(set_split || set_sub || set_dt || set_it), PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP,
             "-xpbd_ho_split, -xpbd_ho_substeps, -xpbd_ho_dt and -xpbd_ho_iterations are for -solver xpbd_ho");
  PetscCheck(iterations >= 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-xpbd_ho_iterations %d: must be >= 1", (int)iterations);
  PetscCheck(!set_sub || substeps >= 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-xpbd_ho_substeps %d: must be >= 1", (int)substeps);
  PetscCheck(!set_dt || (o->xpbd_ho.dt > 0 && isfinite(o->xpbd_ho.dt)), PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-xpbd_ho_dt %g: must be > 0", o->xpbd_ho.dt);
  o->xpbd_ho.substeps = (int)substeps;
  o->xpbd_ho.iterations = (int)iterations;
  PetscFunctionReturn(0);
}

const pbng_solver_ops pbng_solver_xpbd_ho_ops = {
  .name = "xpbd_ho",
  .kind = {.selectable = 1, .chosen_by = "-solver xpbd_ho", .help = "the seed's XPBD with energy constraints, every element kind (Saillant et al. 2024)",
           .constraint_colors = 1, .own_guess = 1, .contacts = 1, .contact_every = 10, .set_from_options = pbng_xpbd_ho_set_from_options, .options_defaults = xpbd_ho_defaults,
           .frame_iterations = ho_frame_iterations, .set_frame_iterations = ho_set_frame_iterations},
  .create = ho_create, .begin_frame = ho_begin_frame, .iterate = ho_iterate, .destroy = ho_destroy, .state = ho_state, .restored = ho_restored};
