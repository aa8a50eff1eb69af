/* PBD (Mueller et al. 2007), XPBD (Macklin et al. 2016) and XPBD-QS (Sec. 6, 6.1): constraint-centric
 * nonlinear Gauss-Seidel on the same distributed mesh and problem as PBNG, for comparison.
 *   pbd      hard constraints (alpha -> 0); initial guess x^n + dt v^n + dt^2 g (quasistatic: v = 0)
 *   xpbd     backward Euler (Eq. 24-28), multipliers reset every frame; -mode dynamic
 *   xpbd_qs  XPBD run in pseudo-time inside each quasistatic frame: every -xpbd_qs_substeps
 *            iterations start a new pseudo step of length -xpbd_qs_dt from the current positions
 * Constraints (methods/pbd/constraints.h) are colored so that those of one color share no node (Sec. 9:
 * elements, then weak constraints in their own colors, or weak first with -xpbd_order weak_first).
 * A color's constraints are projected in parallel by the rank owning them (the owner of their first
 * node), which may move ghost nodes: after each color, moved ghosts go back to their owners and every
 * ghost is refreshed. Contacts (issue 17) are projected last in each sweep, in key order on every rank
 * alike (methods/pbd/contact_projection.h). The reported residual is the problem's, as for every solver.
 * Sheets (issue 18): each tri3 membrane and bend4 stencil is one energy constraint C = sqrt(2 E), alpha = 1
 * (methods/pbd/energy_constraints.h), colored and projected with the elements (its multiplier in the element's
 * first slot); linear tetrahedra mixed with sheets take their B and V from the quadrature data. */
#include <math.h>
#include <string.h>
#include "parallel/reduce.h"
#include "methods/pbd/constraint_sweep.h"

typedef enum { METHOD_PBD, METHOD_XPBD, METHOD_XPBD_QS } cb_method;

typedef struct {
  cb_method method;
  pbng_constraint_sweep cs;
} cb_data;

static PetscErrorCode check_setting(const pbng_solver *s, cb_method method)
{
  const pbng_problem *pb = s->pb;
  const char *name = s->ops->name;
  unsigned kinds;

  PetscFunctionBeginUser;
  PetscCall(pbng_constraint_mesh_kinds(pb->dm, &kinds));
  const unsigned volume = kinds & ~PBNG_SHEET_KINDS_MASK;
  PetscCheck(!volume || pbng_material_has_constraints(&pb->mat), PETSC_COMM_WORLD, PETSC_ERR_SUP,
             "-solver %s: the %s energy is not a sum of squared constraints (Eq. 21); use -material corotated or neohookean", name,
             pbng_material_kind_name(pb->mat.kind));
  PetscCheck(method != METHOD_XPBD || pb->mode == PBNG_MODE_DYNAMIC, PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP,
             "-solver xpbd is a dynamic method: give -mode dynamic, or use -solver xpbd_qs for quasistatics");
  PetscCheck(method != METHOD_XPBD_QS || pb->mode == PBNG_MODE_QUASISTATIC, PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP,
             "-solver xpbd_qs runs quasistatic frames: use -mode quasistatic (or -solver xpbd for dynamics)");
  if (volume & ~(1u << PBNG_ELEMENT_TET4)) {
    char label[128];
    pbng_element_kinds_label(kinds, label, sizeof(label));
    SETERRQ(PETSC_COMM_WORLD, PETSC_ERR_SUP,
            "-solver %s (the paper's Sec. 6 baseline) works on linear tetrahedra and sheets (tri3, bend4); this mesh has %s elements (-solver xpbd_ho "
            "takes every kind)", name, label);
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode cb_create(pbng_solver *s, cb_method method)
{
  cb_data *d;

  PetscFunctionBeginUser;
  PetscCall(check_setting(s, method));
  PetscCall(PetscNew(&d));
  s->data = d;
  d->method = method;
  PetscCall(pbng_constraint_sweep_create(s, method == METHOD_XPBD_QS ? s->opt.xpbd.pseudo_dt : s->pb->dt, method == METHOD_PBD, &d->cs));
  PetscFunctionReturn(0);
}

static PetscErrorCode pbd_create(pbng_solver *s) { return cb_create(s, METHOD_PBD); }
static PetscErrorCode xpbd_create(pbng_solver *s) { return cb_create(s, METHOD_XPBD); }
static PetscErrorCode xpbd_qs_create(pbng_solver *s) { return cb_create(s, METHOD_XPBD_QS); }

/* Frame start. The problem has moved the prescribed nodes and, in dynamic mode, set x = x^n + dt v^n;
 * the gravity term of x~ (PBD's and XPBD's initial guess) is added here. */
static PetscErrorCode cb_begin_frame(pbng_solver *s)
{
  cb_data *d = s->data;

  PetscFunctionBeginUser;
  PetscCall(pbng_constraint_sweep_start_step(&d->cs, s->pb, NULL));
  PetscFunctionReturn(0);
}

/* XPBD-QS: a new pseudo step with v = (x - x_step) / dt. */
static PetscErrorCode next_pseudo_step(pbng_solver *s)
{
  cb_data *d = s->data;

  PetscFunctionBeginUser;
  pbng_constraint_sweep_velocity(&d->cs, s->pb, d->cs.work);
  PetscCall(pbng_constraint_sweep_start_step(&d->cs, s->pb, d->cs.work));
  PetscFunctionReturn(0);
}

static void project_element(pbng_solver *s, pbng_constraint_sweep *cs, int32_t e)
{
  const pbng_problem *pb = s->pb;
  const int kind = pbng_constraint_sheet_kind(pb, e);
  const int32_t *node;
  uint32_t moved;
  int n = 4;
  if (kind >= 0) {
    node = &pb->dm->elems[(int64_t)pb->dm->nen * e];
    n = kind == PBNG_ELEMENT_TRI3 ? 3 : 4;
    moved = pbng_project_sheet_constraint(pbng_problem_sheet_material(pb, e), (pbng_element_kind)kind, &pb->geo.sheet[e], node, cs->proj.inv_dt2,
                                          cs->inv_mass, &cs->lambda_elem[2 * e], pb->x);
  } else {
    double B[9], V;
    node = pbng_constraint_tet_shape(pb, e, B, &V);
    moved = (uint32_t)pbng_project_element(&cs->proj, node, B, V, cs->inv_mass, &cs->lambda_elem[2 * e], pb->rotation ? &pb->rotation[4 * e] : NULL,
                                           pb->x);
  }
  for (int a = 0; a < n; ++a)
    if ((moved >> a) & 1u) cs->touched[node[a]] = 1;
}

/* Element e's squared secondary residual, its constraint forces added to force (Sec. 6.2). */
static double element_residual(const pbng_problem *pb, const pbng_constraint_sweep *cs, int32_t e, double *force)
{
  const int kind = pbng_constraint_sheet_kind(pb, e);
  if (kind >= 0)
    return pbng_sheet_constraint_residual(pbng_problem_sheet_material(pb, e), (pbng_element_kind)kind, &pb->geo.sheet[e],
                                          &pb->dm->elems[(int64_t)pb->dm->nen * e], cs->proj.inv_dt2, cs->lambda_elem[2 * e], pb->x, force);
  double B[9], V;
  const int32_t *node = pbng_constraint_tet_shape(pb, e, B, &V);
  return pbng_element_constraint_residual(&cs->proj, node, B, V, &cs->lambda_elem[2 * e], pb->x, force);
}

static PetscErrorCode cb_iterate(pbng_solver *s, int l)
{
  cb_data *d = s->data;

  PetscFunctionBeginUser;
  if (d->method == METHOD_XPBD_QS && l > 0 && l % s->opt.xpbd.substeps == 0) PetscCall(next_pseudo_step(s));
  PetscCall(pbng_constraint_sweep_run(s, &d->cs, project_element));
  PetscFunctionReturn(0);
}

/* Sec. 6.2: the primary residual |M(x - x~) - grad C^T lambda| / dt^2 over the free nodes (force
 * units, like the problem's residual) and the secondary residual |C + alpha~ lambda| over the
 * constraints (contacts included). Collective. */
static PetscErrorCode constraint_residuals(pbng_solver *s, double *primary, double *secondary)
{
  cb_data *d = s->data;
  const pbng_problem *pb = s->pb;
  const pbng_dmesh *dm = pb->dm;
  double *h2, *g2, *h2c, sum;
  int64_t nc = 0;

  PetscFunctionBeginUser;
  if (pb->contacts) PetscCall(pbng_contact_projection_sync(&d->cs.contact, pb, d->cs.inv_mass)); /* a detection since the last sweep */
  PetscCall(PetscMalloc3(dm->nowned_elems + dm->nowned_weak + 1, &h2, dm->nfree + 1, &g2, d->cs.contact.n + 1, &h2c));
  memset(d->cs.work, 0, sizeof(double) * 3 * (size_t)dm->nlocal);
  for (int32_t e = 0; e < dm->nowned_elems; ++e) h2[e] = element_residual(pb, &d->cs, e, d->cs.work);
  for (int32_t w = 0; w < dm->nowned_weak; ++w)
    h2[dm->nowned_elems + w] = pbng_weak_constraint_residual(&d->cs.proj, &dm->weak[w], &d->cs.lambda_weak[3 * w], pb->x, d->cs.work);
  if (pb->halo) PetscCall(pbng_halo_reverse(pb->halo, PBNG_HALO_ADD, NULL, d->cs.work));
  if (pb->contacts) PetscCall(pbng_contact_projection_residual(&d->cs.contact, &d->cs.proj, pb, h2c, &nc, d->cs.work));
  for (int32_t i = 0; i < dm->nfree; ++i) {
    g2[i] = 0.0;
    for (int k = 0; k < 3; ++k) {
      const double g = (pb->mass[i] * (pb->x[3 * i + k] - d->cs.x_tilde[3 * i + k]) - d->cs.work[3 * i + k]) / (d->cs.dt * d->cs.dt);
      g2[i] += g * g;
    }
  }
  const double *hs[2] = {h2, h2c}, *gs[1] = {g2};
  const int64_t hn[2] = {dm->nowned_elems + dm->nowned_weak, nc}, gn[1] = {dm->nfree};
  PetscCall(pbng_reproducible_sum(dm->comm, 1, gs, gn, &sum));
  *primary = sqrt(sum);
  PetscCall(pbng_reproducible_sum(dm->comm, 2, hs, hn, &sum));
  *secondary = sqrt(sum);
  PetscCall(PetscFree3(h2, g2, h2c));
  PetscFunctionReturn(0);
}

/* -monitor suffix of XPBD and XPBD-QS: "  primary P  secondary S". */
static PetscErrorCode xpbd_monitor(pbng_solver *s, char *buf, size_t len)
{
  double primary = 0, secondary = 0;

  PetscFunctionBeginUser;
  PetscCall(constraint_residuals(s, &primary, &secondary));
  snprintf(buf, len, "  primary %.6e  secondary %.6e", primary, secondary);
  PetscFunctionReturn(0);
}

static PetscErrorCode cb_destroy(pbng_solver *s)
{
  cb_data *d = s->data;

  PetscFunctionBeginUser;
  if (d) PetscCall(pbng_constraint_sweep_destroy(&d->cs));
  PetscCall(PetscFree(s->data));
  PetscFunctionReturn(0);
}

/* Checkpoint state: multipliers, the inertial target and the pseudo step's start. */
static PetscErrorCode cb_state(pbng_solver *s, pbng_state_field *fields, int *n)
{
  cb_data *d = s->data;

  PetscFunctionBeginUser;
  PetscCall(pbng_constraint_sweep_state(&d->cs, s->pb, "xpbd", fields, n));
  PetscFunctionReturn(0);
}

static PetscErrorCode cb_restored(pbng_solver *s)
{
  cb_data *d = s->data;

  PetscFunctionBeginUser;
  PetscCall(pbng_constraint_sweep_restored(&d->cs, s->pb));
  PetscFunctionReturn(0);
}

/* ---- options (one set for the three constraint solvers) ----------------------------------------- */

/* the elements first (the paper's XPBD-QS), one iteration per pseudo step of -dt */
static void xpbd_defaults(pbng_solver_options *o) { o->xpbd = (pbng_xpbd_options){.weak_first = 0, .pseudo_dt = 0.0, .substeps = 1}; }

/* -xpbd_order, -xpbd_qs_dt, -xpbd_qs_substeps: only with the constraint solvers they apply to. */
static PetscErrorCode pbng_xpbd_set_from_options(PetscOptionItems *PetscOptionsObject, pbng_solver_options *o, const char *selected)
{
  char order[32] = "elastic_first";
  PetscBool set_order, set_dt, set_sub;
  PetscInt substeps = o->xpbd.substeps;
  const pbng_solver_ops *ops = pbng_solver_find(selected, 1);
  const int constraints = ops && ops->kind.constraint_colors, qs = ops == &pbng_solver_xpbd_qs_ops;

  PetscFunctionBeginUser;
  PetscCall(PetscOptionsString("-xpbd_order", "elastic_first (the paper's XPBD-QS) | weak_first (\"flipped\")", NULL, order, order, sizeof(order),
                               &set_order));
  PetscCheck(!strcmp(order, "elastic_first") || !strcmp(order, "weak_first"), PETSC_COMM_WORLD, PETSC_ERR_ARG_UNKNOWN_TYPE,
             "-xpbd_order: unknown order \"%s\" (known: elastic_first, weak_first)", order);
  o->xpbd.weak_first = !strcmp(order, "weak_first");
  PetscCall(PetscOptionsReal("-xpbd_qs_dt", "xpbd_qs: pseudo-time step (0: -dt)", NULL, o->xpbd.pseudo_dt, &o->xpbd.pseudo_dt, &set_dt));
  PetscCall(PetscOptionsInt("-xpbd_qs_substeps", "xpbd_qs: iterations per pseudo-time step", NULL, substeps, &substeps, &set_sub));
  PetscCheck(!set_order || constraints, PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP, "-xpbd_order is for -solver pbd | xpbd | xpbd_qs | xpbd_ho");
  PetscCheck(!(set_dt || set_sub) || qs, PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP, "-xpbd_qs_dt and -xpbd_qs_substeps are for -solver xpbd_qs");
  PetscCheck(o->xpbd.pseudo_dt >= 0 && isfinite(o->xpbd.pseudo_dt), PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-xpbd_qs_dt %g: must be > 0", o->xpbd.pseudo_dt);
  PetscCheck(substeps >= 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-xpbd_qs_substeps %d: must be >= 1", (int)substeps);
  o->xpbd.substeps = (int)substeps;
  PetscFunctionReturn(0);
}

#define CB_OPS(NAME, HELP, CREATE, MONITOR, CONTACT_EVERY)                                                                                 \
  {.name = NAME,                                                                                                                           \
   .kind = {.selectable = 1, .chosen_by = "-solver " NAME, .help = HELP, .constraint_colors = 1, .own_guess = 1, .contacts = 1,            \
            .contact_every = CONTACT_EVERY, .set_from_options = pbng_xpbd_set_from_options, .options_defaults = xpbd_defaults},                                  \
   .create = CREATE, .begin_frame = cb_begin_frame, .iterate = cb_iterate, .destroy = cb_destroy, .monitor = MONITOR, .state = cb_state,   \
   .restored = cb_restored}
/* Contacts: detected at each frame start (a dynamic frame is one step) and, in quasistatic frames, every
 * -contact_every iterations (10 by default, as PBNG). */
const pbng_solver_ops pbng_solver_pbd_ops = CB_OPS("pbd", "position-based dynamics (Sec. 6; -xpbd_order for pbd, xpbd, xpbd_qs)", pbd_create, NULL, 10);
const pbng_solver_ops pbng_solver_xpbd_ops = CB_OPS("xpbd", "extended PBD with compliance (Sec. 6)", xpbd_create, xpbd_monitor, 0);
const pbng_solver_ops pbng_solver_xpbd_qs_ops = CB_OPS("xpbd_qs", "quasistatic XPBD in pseudo time (Sec. 6)", xpbd_qs_create, xpbd_monitor, 10);
