/* What the constraint solvers (PBD, XPBD, XPBD-QS: xpbd.c; the seed's XPBD: xpbd_ho.c) share:
 * inverse masses, the constraint colors (elements of one color share no node), the (pseudo) time
 * step's inertial target, the weak constraints' projection and one Gauss-Seidel sweep over every
 * color. A color's constraints are projected in parallel by the rank owning them (the owner of their
 * first node), which may move ghost nodes: after each color, moved ghosts go back to their owners
 * (reverse halo) and every ghost is refreshed, so results do not depend on the rank or thread count.
 * With contacts, the sweep ends with every contact projected in key order on every rank alike
 * (methods/pbd/contact_projection.h). */
#ifndef PBNG_METHODS_PBD_CONSTRAINT_SWEEP_H
#define PBNG_METHODS_PBD_CONSTRAINT_SWEEP_H

#include "methods/pbd/constraints.h"
#include "methods/pbd/contact_projection.h"
#include "methods/pbd/energy_constraints.h"
#include "methods/solver.h"

enum { PBNG_ELEMENT_MULTIPLIERS = 2 }; /* multipliers per element: two constraints (Sec. 6) or two terms (seed) */

typedef struct {
  pbng_projection proj;          /* the material and 1/dt^2 of the current step (0: PBD) */
  double dt;                     /* step of the inertia term */
  double *inv_mass;              /* [nlocal] w_i = 1/m_i, 0 for prescribed and massless nodes */
  double *gravity_scale;         /* [nlocal] load weight / lumped mass: node i accelerates by gravity_scale_i g
                                    (1 for linear tetrahedra; the consistent load for other kinds) */
  double *load_accel;            /* [nlocal][3] the point load's w_i p_i (NULL: no point load) */
  double *handle_inv_mass;       /* [nlocal] inverse masses without the released sets' hold (NULL: no released set) */
  pbng_color_groups elem, weak;  /* owned elements / counted weak constraints by constraint color */
  double *lambda_elem;           /* [PBNG_ELEMENT_MULTIPLIERS nowned_elems] */
  double *lambda_weak;           /* [3 nowned_weak] */
  double *x_tilde;               /* [nlocal][3] inertial target x~ */
  double *x_step;                /* [nlocal][3] positions at the start of the (pseudo) step */
  double *work;                  /* [nlocal][3] */
  uint8_t *touched;              /* [nlocal] ghosts moved in the current color */
  pbng_contact_projection contact; /* the contacts' projection and multipliers (when the problem has contacts) */
  PetscLogEvent ev_project, ev_halo;
} pbng_constraint_sweep;

/* Projects owned element e's constraints (any thread; elements of one color share no node) and
 * marks the local nodes it moved in cs->touched. */
typedef void (*pbng_project_element_fn)(pbng_solver *s, pbng_constraint_sweep *cs, int32_t e);

/* The same for owned elements item[0..n) of one color at once (GPBD: its tetrahedra on SIMD lanes). */
typedef void (*pbng_project_elements_fn)(pbng_solver *s, pbng_constraint_sweep *cs, const int32_t *item, int32_t n);

/* Errors naming the solver when the mesh lacks constraint colors; then allocates everything, with
 * step dt (proj.inv_dt2 = 1/dt^2, or 0 when pbd). */
PetscErrorCode pbng_constraint_sweep_create(const pbng_solver *s, double dt, int pbd, pbng_constraint_sweep *cs);
PetscErrorCode pbng_constraint_sweep_destroy(pbng_constraint_sweep *cs);

/* Starts a (pseudo) time step from the current positions: x_step = x, x~ = x + dt v + dt^2 g on every
 * node with mass (v given per local node, or 0), x = x~ (the initial guess), multipliers 0 (the
 * contacts' too). Every rank does this for its static ghosts too, from the same values; contact ghosts
 * are refreshed from their owners (collective). */
PetscErrorCode pbng_constraint_sweep_start_step(pbng_constraint_sweep *cs, const pbng_problem *pb, const double *v);

/* v = (x - x_step) / dt on every local node (Alg. 1 line 14; the next pseudo step's velocity). */
void pbng_constraint_sweep_velocity(const pbng_constraint_sweep *cs, const pbng_problem *pb, double *v);

/* One Gauss-Seidel sweep over every constraint color: the elements' (project_element, a color's
 * elements in parallel) and the weak constraints' colors, in the order -xpbd_order asks for, each
 * followed by the ghost exchange; then the contacts, in key order (contact_projection.h). */
PetscErrorCode pbng_constraint_sweep_run(pbng_solver *s, pbng_constraint_sweep *cs, pbng_project_element_fn project_element);
/* The same sweep with each color's elements handed to project_elements `chunk` at a time (threads take chunks
 * as they finish: a chunk's cost varies); parts > 0: in at most `parts` chunks of at least `chunk` elements each
 * (fewer, larger chunks: one per color on one thread). */
PetscErrorCode pbng_constraint_sweep_run_chunks(pbng_solver *s, pbng_constraint_sweep *cs, int32_t chunk, int32_t parts,
                                                pbng_project_elements_fn project_elements);
/* The element colors alone (no weak constraints, no contacts), chunks of each color as above, each color followed by
 * the ghost exchange: a pass of another element projection over the same colors (GPBD's inverted elements). */
PetscErrorCode pbng_constraint_sweep_run_element_colors(pbng_solver *s, pbng_constraint_sweep *cs, int32_t chunk, pbng_project_elements_fn project_elements);

/* Checkpoint fields of the step, named <prefix>_lambda, _lambda_weak, _x_tilde, _x_step (and with
 * contacts _lambda_contact: collective, the contact set restored first on a restart), and after a restart
 * the ghosts' inertial target and step start (pbng_constraint_sweep_start_step sets them on every local
 * node). */
PetscErrorCode pbng_constraint_sweep_state(pbng_constraint_sweep *cs, const pbng_problem *pb, const char *prefix, pbng_state_field *fields, int *n);
PetscErrorCode pbng_constraint_sweep_restored(pbng_constraint_sweep *cs, const pbng_problem *pb);

/* What the substepping constraint solvers (the seeds' XPBD, xpbd_ho.c, and continuum PBD, continuum_pbd.c)
 * share: a frame of -dt is `substeps` substeps of h = dt / substeps (dynamic; 0: quasistatic pseudo steps
 * from rest), each `iterations` sweeps; iteration l is sweep l mod iterations of step l / iterations. */
typedef struct {
  pbng_constraint_sweep cs;
  int substeps;     /* dynamic: substeps per frame (0: quasistatic) */
  int iterations;   /* sweeps per (pseudo) step */
  double *velocity; /* [nlocal][3] dynamic: v after the last substep (NULL: quasistatic) */
} pbng_substepper;

/* The sweep (step h: dt / substeps, or the pseudo step when quasistatic), and the velocity when dynamic. */
PetscErrorCode pbng_substepper_create(const pbng_solver *s, int substeps, int iterations, double h, int pbd, pbng_substepper *st);
PetscErrorCode pbng_substepper_destroy(pbng_substepper *st);
/* A dynamic frame's substeps start from x^n itself (the problem predicted x^n + dt v^n and kept x^n for
 * the owned nodes; ghosts from their owners). Collective. */
PetscErrorCode pbng_substepper_begin_frame(pbng_substepper *st, pbng_problem *pb);
/* Iteration l: at a step's first sweep, prescribed nodes to the substep's time x_D(t_n + (k+1) h) (dynamic)
 * and the step started (x~ = x + h v + h^2 g; quasistatic: v = 0); then one sweep of project_element.
 * Returns 1 when the sweep ended a dynamic step, whose velocity v = (x - x_old) / h is then updated. */
PetscErrorCode pbng_substepper_iterate(pbng_substepper *st, pbng_solver *s, int l, pbng_project_element_fn project_element, int *step_done);
/* Checkpoint fields (<prefix>_..., the sweep's and <prefix>_velocity) and the ghosts' after a restart. */
PetscErrorCode pbng_substepper_state(pbng_substepper *st, const pbng_problem *pb, const char *prefix, pbng_state_field *fields, int *n);
PetscErrorCode pbng_substepper_restored(pbng_substepper *st, const pbng_problem *pb);
/* A frame's iterations: substeps x iterations per substep, substeps (<= 0: not given) from -iters. */
int pbng_substep_iterations(int substeps, int iterations, int iters);

/* Element e's nodes and quadrature data (seed Alg. 3): the stored arrays, or V and grad filled
 * (linear tetrahedra: one point, V and dN_a/dX from B; affine kinds: J^{-T} dN_a/dr); its own kind's
 * when kinds mix. Volume kinds only. */
void pbng_constraint_element_points(const pbng_problem *pb, int32_t e, double *V, double *grad, pbng_element_points *el);

/* Linear tetrahedron e's nodes (returned), B = Dm^{-1} and V: its record (a mesh of linear tetrahedra only),
 * or from its quadrature data when kinds mix (one point: V_0 = V, dN_a/dX the rows of B for a = 1..3). */
const int32_t *pbng_constraint_tet_shape(const pbng_problem *pb, int32_t e, double B[9], double *V);

/* The element kinds of the whole mesh (every rank's elements) as a kind mask (pbng_element_kinds_mask's
 * bits). Collective. */
PetscErrorCode pbng_constraint_mesh_kinds(const pbng_dmesh *dm, unsigned *mask);

/* Local element e's sheet kind (PBNG_ELEMENT_TRI3, PBNG_ELEMENT_BEND4: one energy constraint,
 * pbng_project_sheet_constraint, its multiplier the element's first), or -1 for a volume element. */
int pbng_constraint_sheet_kind(const pbng_problem *pb, int32_t e);

#endif
