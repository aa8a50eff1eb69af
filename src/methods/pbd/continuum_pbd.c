/* The continuum seed's solver (Bender, Koschier, Charrier, Weber 2014, position-based-continuous-
 * materials.txt; docs/cloth.md#the-seeds-solver): position-based energy reduction with one energy
 * constraint per element, C_e(x) = E_e(x) - E_e(X) (its elastic energy; the rest energy subtracted, zero
 * for StVK, the membranes and bending, not for pbng's neo-Hookean models of Sec. 8), projected
 * Gauss-Seidel by constraint color with the PBD/XPBD baselines' owners and ghost exchanges
 * (methods/pbd/constraint_sweep.h):
 *   lambda = -C / sum_j w_j |grad_j C|^2 (Eq. 3),   dx_i = w_i lambda grad_i C (Eq. 2),
 * skipped where C <= 0 (the element is at its energy's minimum) or no node can move.
 *   -mode dynamic      Alg. 1: a frame of -dt is -continuum_pbd_substeps substeps of h = dt / N: symplectic
 *                      Euler prediction x~ = x + h v + h^2 g (lines 1-2), -continuum_pbd_iterations sweeps
 *                      (lines 3-9), v = (x - x_old) / h (line 10), v scaled by 1 - -continuum_pbd_damping
 *                      (line 12); prescribed nodes follow their motion to each substep's time.
 *   -mode quasistatic  pseudo time: every -continuum_pbd_iterations sweeps start a pseudo step of
 *                      -continuum_pbd_dt from the current positions at rest (x~ = x + h^2 g).
 * Volume elements: E_e = sum_q V_q Psi(F_q), grad_a C = sum_q V_q P(F_q) dN_a/dX; StVK with the seed's
 * inversion handling (core/inversion: clamped stretches, the reflection on the smallest singular value)
 * unless -continuum_pbd_inversion 0. Sheets: the membrane and bending energies (problem/sheet_terms.h).
 * Weak constraints are projected as PBD does (rigid). Unlike the problem's equilibrium, the result
 * depends on the iteration count (the seed's Sec. 6 and Fig. 5; bench/seed_continuum). */
#include <math.h>
#include <string.h>
#include "core/inversion.h"
#include "methods/pbd/constraint_sweep.h"
#include "problem/sheet_terms.h"

typedef struct {
  pbng_substepper st; /* the sweep, substeps, sweeps per (pseudo) step, velocity */
  double damping;     /* line 12 */
  int inversion;      /* StVK: the seed's inversion handling */
  double rest_psi;    /* Psi(I) of the volume material (subtracted: C = 0 at rest) */
} cpbd_data;

static PetscErrorCode cpbd_create(pbng_solver *s)
{
  const pbng_problem *pb = s->pb;
  const double identity[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  cpbd_data *d;

  PetscFunctionBeginUser;
  PetscCheck(pb->mode == PBNG_MODE_DYNAMIC || s->opt.cpbd.substeps == 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP,
             "-continuum_pbd_substeps is for -mode dynamic; quasistatic frames take one pseudo step per -continuum_pbd_iterations sweeps");
  PetscCheck(pb->mode != PBNG_MODE_DYNAMIC || s->opt.cpbd.dt == 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP,
             "-continuum_pbd_dt is for -mode quasistatic; a dynamic frame's substeps are -dt / -continuum_pbd_substeps");
  PetscCall(PetscNew(&d));
  s->data = d;
  d->damping = s->opt.cpbd.damping;
  d->inversion = s->opt.cpbd.inversion;
  d->rest_psi = pbng_energy_density(&pb->mat, identity);
  const int substeps = pb->mode == PBNG_MODE_DYNAMIC ? s->opt.cpbd.substeps : 0;
  PetscCheck(pb->mode != PBNG_MODE_DYNAMIC || substeps >= 1, PETSC_COMM_SELF, PETSC_ERR_PLIB, "-solver continuum_pbd: substeps not resolved");
  const double h = substeps ? pb->dt / substeps : (s->opt.cpbd.dt > 0 ? s->opt.cpbd.dt : pb->dt);
  PetscCall(pbng_substepper_create(s, substeps, s->opt.cpbd.iterations, h, 1, &d->st));
  PetscFunctionReturn(0);
}

static PetscErrorCode cpbd_begin_frame(pbng_solver *s) { return pbng_substepper_begin_frame(&((cpbd_data *)s->data)->st, s->pb); }

/* A volume element's energy above its rest energy and its gradient G[a] (nodes el->node). ep: the
 * element's plastic strain (StVK, any volume kind: one per element, at every point), or NULL; with it the energy is the elastoplastic
 * StVK energy of Sec. 4.2 and the inversion handling, written for the elastic energy, is not applied. */
static double volume_constraint(const cpbd_data *d, const pbng_material *mat, const pbng_element_points *el, const double *ep, const double *x,
                                double (*G)[3])
{
  const int safe_stvk = d->inversion && mat->kind == PBNG_MATERIAL_STVK && !ep;
  double C = 0.0;
  for (int a = 0; a < el->nen; ++a) G[a][0] = G[a][1] = G[a][2] = 0.0;
  for (int q = 0; q < el->nq; ++q) {
    const double *grad = &el->grad[3 * (int64_t)el->nen * q];
    double F[9], P[9];
    pbng_qp_deformation_gradient(el->nen, el->node, grad, x, F);
    if (safe_stvk) {
      C += el->V[q] * pbng_stvk_energy_inversion_safe(mat->mu, mat->lambda, F, P); /* one SVD for both */
    } else if (ep) {
      double S[9];
      C += el->V[q] * pbng_stvk_energy_density_plastic(mat, F, ep);
      pbng_stvk_second_piola(mat, F, S);
      pbng_stvk_subtract_plastic(mat, ep, S);
      mat3_mul(F, S, P);
    } else {
      C += el->V[q] * (pbng_energy_density(mat, F) - d->rest_psi);
      pbng_first_piola(mat, F, P);
    }
    for (int a = 0; a < el->nen; ++a) {
      double Pg[3];
      mat3_vec(P, &grad[3 * a], Pg);
      for (int k = 0; k < 3; ++k) G[a][k] += el->V[q] * Pg[k];
    }
  }
  return C;
}

/* Eq. 2-3 for one constraint of value C and gradient G on nodes node[0 .. n): returns the moved nodes as bits. */
static uint32_t project_energy(double C, const double (*G)[3], int n, const int32_t *node, const double *w, double *x)
{
  double denom = 0.0;
  uint32_t moved = 0;
  if (!(C > 0.0) || C == INFINITY) return 0; /* at the energy's minimum, NaN, or no value (neohookean_log with J <= 0) */
  for (int a = 0; a < n; ++a) denom += w[node[a]] * (G[a][0] * G[a][0] + G[a][1] * G[a][1] + G[a][2] * G[a][2]);
  if (!(denom > 0.0)) return 0;
  const double lambda = -C / denom; /* Eq. 3 */
  for (int a = 0; a < n; ++a) {
    const double wa = w[node[a]];
    if (wa == 0.0) continue;
    for (int k = 0; k < 3; ++k) x[3 * node[a] + k] += wa * lambda * G[a][k]; /* Eq. 2 */
    moved |= 1u << a;
  }
  return moved;
}

static void project_element(pbng_solver *s, pbng_constraint_sweep *cs, int32_t e)
{
  const cpbd_data *d = s->data;
  const pbng_problem *pb = s->pb;
  double G[PBNG_MAX_ELEMENT_NODES][3], C;
  const int32_t *node;
  int n;
  const pbng_element_type *t = pbng_dmesh_element_type(pb->dm, e);
  if (pbng_element_is_sheet(t)) {
    node = &pb->dm->elems[(int64_t)pb->dm->nen * e];
    n = t->nodes;
    C = pbng_sheet_element_gradient(pbng_problem_sheet_material(pb, e), t->kind, &pb->geo.sheet[e], node, pb->x, G);
  } else {
    double V[PBNG_MAX_QUAD_POINTS], grad[PBNG_MAX_QUAD_POINTS * PBNG_MAX_ELEMENT_NODES * 3];
    pbng_element_points el;
    pbng_constraint_element_points(pb, e, V, grad, &el);
    node = el.node, n = el.nen;
    C = volume_constraint(d, &pb->mat, &el, pb->plastic_strain ? &pb->plastic_strain[6 * e] : NULL, pb->x, G);
  }
  const uint32_t moved = project_energy(C, (const double(*)[3])G, n, node, cs->inv_mass, pb->x);
  for (int a = 0; a < n; ++a)
    if ((moved >> a) & 1u) cs->touched[node[a]] = 1;
}

/* Iteration l: sweep l mod n_it of (pseudo) step l / n_it (lines 1-2 at its first, 3-9, line 10 after a
 * dynamic step's last), then line 12. */
static PetscErrorCode cpbd_iterate(pbng_solver *s, int l)
{
  cpbd_data *d = s->data;
  int step_done;

  PetscFunctionBeginUser;
  PetscCall(pbng_substepper_iterate(&d->st, s, l, project_element, &step_done));
  if (step_done)
    for (int64_t k = 0; k < 3 * (int64_t)s->pb->dm->nlocal; ++k) d->st.velocity[k] *= 1.0 - d->damping; /* line 12 */
  PetscFunctionReturn(0);
}

static PetscErrorCode cpbd_destroy(pbng_solver *s)
{
  cpbd_data *d = s->data;

  PetscFunctionBeginUser;
  if (d) PetscCall(pbng_substepper_destroy(&d->st));
  PetscCall(PetscFree(s->data));
  PetscFunctionReturn(0);
}

/* Checkpoint state: the step's data and the substeps' velocity (dynamic); the ghosts' after a restart. */
static PetscErrorCode cpbd_state(pbng_solver *s, pbng_state_field *fields, int *n)
{
  return pbng_substepper_state(&((cpbd_data *)s->data)->st, s->pb, "continuum_pbd", fields, n);
}

static PetscErrorCode cpbd_restored(pbng_solver *s) { return pbng_substepper_restored(&((cpbd_data *)s->data)->st, s->pb); }

static int cpbd_frame_iterations(const pbng_solver_options *opt, int dynamic, int iters)
{
  return dynamic ? pbng_substep_iterations(opt->cpbd.substeps, opt->cpbd.iterations, iters) : 0;
}

static void cpbd_set_frame_iterations(pbng_solver_options *opt, int n) { opt->cpbd.substeps = n / opt->cpbd.iterations; }

/* five sweeps per step, StVK's inversion handling on */
static void cpbd_defaults(pbng_solver_options *o) { o->cpbd = (pbng_continuum_pbd_options){.iterations = 5, .inversion = 1}; }

static PetscErrorCode cpbd_set_from_options(PetscOptionItems *PetscOptionsObject, pbng_solver_options *o, const char *selected)
{
  PetscBool set_sub, set_dt, set_it, set_damp, set_inv, inversion = o->cpbd.inversion ? PETSC_TRUE : PETSC_FALSE;
  PetscInt substeps = o->cpbd.substeps, iterations = o->cpbd.iterations;
  const int mine = !strcmp(selected, pbng_solver_continuum_pbd_ops.name);

  PetscFunctionBeginUser;
  PetscCall(PetscOptionsInt("-continuum_pbd_substeps", "dynamic: substeps per frame, -continuum_pbd_iterations sweeps each (default: -iters / them)",
                            NULL, substeps, &substeps, &set_sub));
  PetscCall(PetscOptionsReal("-continuum_pbd_dt", "quasistatic: pseudo-time step (default: -dt)", NULL, o->cpbd.dt, &o->cpbd.dt, &set_dt));
  PetscCall(PetscOptionsInt("-continuum_pbd_iterations", "constraint sweeps per (pseudo) step (Alg. 1 lines 3-9; the seed: 5)", NULL, iterations,
                            &iterations, &set_it));
  PetscCall(PetscOptionsReal("-continuum_pbd_damping", "velocities scaled by 1 - damping after each step (Alg. 1 line 12), in [0, 1)", NULL,
                             o->cpbd.damping, &o->cpbd.damping, &set_damp));
  PetscCall(PetscOptionsBool("-continuum_pbd_inversion", "StVK: the seed's inversion handling (clamped stretches, reflection on the smallest)", NULL,
                             inversion, &inversion, &set_inv));
  PetscCheck(mine || !(set_sub || set_dt || set_it || set_damp || set_inv), PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP,
             "-continuum_pbd_substeps, -continuum_pbd_dt, -continuum_pbd_iterations, -continuum_pbd_damping and -continuum_pbd_inversion are for "
             "-solver continuum_pbd");
  PetscCheck(iterations >= 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-continuum_pbd_iterations %d: must be >= 1", (int)iterations);
  PetscCheck(!set_sub || substeps >= 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-continuum_pbd_substeps %d: must be >= 1", (int)substeps);
  PetscCheck(!set_dt || (o->cpbd.dt > 0 && isfinite(o->cpbd.dt)), PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-continuum_pbd_dt %g: must be > 0",
             o->cpbd.dt);
  PetscCheck(o->cpbd.damping >= 0 && o->cpbd.damping < 1, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-continuum_pbd_damping %g: must be in [0, 1)",
             o->cpbd.damping);
  o->cpbd.substeps = (int)substeps;
  o->cpbd.iterations = (int)iterations;
  o->cpbd.inversion = inversion == PETSC_TRUE;
  PetscFunctionReturn(0);
}

const pbng_solver_ops pbng_solver_continuum_pbd_ops = {
  .name = "continuum_pbd",
  .kind = {.selectable = 1, .chosen_by = "-solver continuum_pbd",
           .help = "the continuum seed's position-based energy reduction (Bender et al. 2014): C = E per element, every kind and sheets",
           .constraint_colors = 1, .own_guess = 1, .plasticity = 1, .set_from_options = cpbd_set_from_options, .options_defaults = cpbd_defaults,
           .frame_iterations = cpbd_frame_iterations, .set_frame_iterations = cpbd_set_frame_iterations},
  .create = cpbd_create, .begin_frame = cpbd_begin_frame, .iterate = cpbd_iterate, .destroy = cpbd_destroy, .state = cpbd_state,
  .restored = cpbd_restored};
