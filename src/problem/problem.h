/* The discrete problem every solver works on (Sec. 4): FEM potential energy of the volume elements
 * (Eq. 15) and of the sheet terms (tri3 membranes, bend4 bending stencils: problem/sheet_terms.h) plus weak
 * constraints (Eq. 18-19, in the dmesh), external forces (Eq. 16: lumped gravity m_i g, and a point load
 * shared by the nodes of a box), Dirichlet motions (Eq. 12) and, in
 * dynamic mode, the backward-Euler inertia term of the incremental potential. Owns the positions. */
#ifndef PBNG_PROBLEM_PROBLEM_H
#define PBNG_PROBLEM_PROBLEM_H

#include "core/material.h"
#include "mesh/boundary.h"
#include "contact/contacts.h"
#include "parallel/dmesh.h"
#include "parallel/halo.h"
#include "parallel/reduce.h"
#include "problem/geometry.h"
#include "core/sheet_material.h"
#include "core/plasticity.h"
#include "problem/pd_terms.h"

typedef enum { PBNG_MODE_QUASISTATIC = 0, PBNG_MODE_DYNAMIC = 1 } pbng_mode;

/* A constant external force (-load_box, -load_force): the total `force` shared equally by every node
 * whose rest position is in `box` (x0 y0 z0 x1 y1 z1, matched like boundary boxes), prescribed ones
 * included (their share acts on nothing). */
typedef struct {
  int active;
  double box[6];
  double force[3];
} pbng_point_load;

/* A solver's own energy term beside the problem's (SISSM's contact barrier, -pd_contact_kappa): fn adds, at the positions
 * x (local rows), its gradient to grad's owned rows ([nlocal][3]; NULL: not wanted) and this rank's share of its energy
 * to *energy (NULL: not wanted). Collective. */
typedef struct {
  PetscErrorCode (*fn)(void *ctx, const double *x, double *grad, pbng_exact_sum *energy);
  void *ctx;
} pbng_problem_term;

typedef struct {
  const pbng_dmesh *dm;
  const pbng_bc_list *bcs;
  pbng_material mat;
  double density;
  double gravity[3];
  pbng_mode mode;
  double dt;
  double time;              /* time of the frame being solved */
  pbng_geometry geo;        /* element records and rest shapes */
  double *mass;             /* [nowned] lumped mass m_i = sum_e rho V_e / 4 (HRZ for other kinds): inertia */
  double *load_mass;        /* [nowned] gravity puts load_mass_i g on node i (Eq. 16): the consistent load weight
                               int rho N_i dV in quasistatic mode; the same array as mass for linear tetrahedra
                               and in dynamic mode (a free body then falls rigidly) */
  double *x;                /* [nlocal][3] current positions */
  double *x_prev;           /* [nowned][3] positions at the previous frame (dynamic) */
  double *velocity;         /* [nowned][3] (dynamic) */
  double *x_hat;            /* [nowned][3] inertial target x^n + dt v^n (dynamic) */
  pbng_halo *halo;          /* ghost updates; NULL when there are no other ranks to talk to */
  float *rotation;          /* [nelems][4] warm-start quaternions (corotated), or NULL */
  int64_t x_nodes;          /* node slots of x: nlocal, + the contact ghosts' room */
  pbng_sheet_material sheet; /* the tri3/bend4 terms' material (issue 18), when geo.sheet is set */
  pbng_sheet_material *sheet_table; /* materials per physical group (mesh/sheet_groups.h), or NULL: `sheet` everywhere */
  uint8_t *sheet_material;  /* [nelems] each element's entry in sheet_table, or NULL */
  double *node_load;        /* [nowned][3] the point load's share of each owned node (Eq. 16's f_ext beside gravity), or NULL */
  int64_t loaded_nodes;     /* nodes sharing the point load (all ranks) */
  double *plastic_strain;   /* [nelems][6] each local element's plastic strain eps_p (Voigt xx yy zz yz xz xy; elastoplastic
                               StVK on volume elements of any kind, constant over an element's quadrature points;
                               seed position-based-continuous-materials.txt Sec. 4.2), or NULL */
  pbng_plasticity plasticity; /* its yield, creep and maximum */
  int8_t *handle;           /* [nlocal] the released boundary set (pbng_bc.release > 0) holding node i, -1 elsewhere; NULL: none */
  double *handle_k;         /* [nowned] spring stiffness tying an owned handle node to its set's motion */
  uint8_t *handle_held;     /* [nlocal] 1: node i's released set holds it at pb->time (pbng_problem_set_time) */
  double *handle_xD;        /* [nlocal][3] its target x_D(X, pb->time) while held */
  int64_t handle_nodes;     /* nodes of released sets (all ranks) */
  struct pbng_pd_terms *pd; /* peridynamic membranes in place of the tri3/bend4 energies (-sheet_model peridynamic,
                               problem/pd_terms.h), or NULL */
  pbng_problem_term term;   /* a solver's own term (fn NULL: none): in the residual beside the rings' forces (peridynamic
                               membranes only: pbng_problem_ring_forces) and in the energy (pbng_problem_energy) */
  pbng_contacts *contacts;  /* the contacts (dynamic weak constraints, issue 17), or NULL; x then has room for
                               their ghosts after the static ones: [nlocal + contacts->ghost_capacity][3] */
} pbng_problem;

/* sheet: the material of the mesh's sheet kinds (tri3, bend4; docs/cloth.md), NULL when it has none (an
 * error otherwise). */
PetscErrorCode pbng_problem_create(const pbng_dmesh *dm, const pbng_bc_list *bcs, const pbng_material *mat, const pbng_sheet_material *sheet,
                                   double density, const double gravity[3], pbng_mode mode, double dt, pbng_problem *pb);
PetscErrorCode pbng_problem_destroy(pbng_problem *pb);

/* Sheet materials per physical group (-sheetK_group; mesh/sheet_groups.h): the table (n entries) and each
 * local element's entry (both copied); the lumped masses are made again with them. */
PetscErrorCode pbng_problem_set_sheet_materials(pbng_problem *pb, int n, const pbng_sheet_material *table, const uint8_t *material);

/* The sheet material of local element e (a tri3 or bend4). */
static inline const pbng_sheet_material *pbng_problem_sheet_material(const pbng_problem *pb, int32_t e)
{
  return pb->sheet_material ? &pb->sheet_table[pb->sheet_material[e]] : &pb->sheet;
}

/* Shares a point load among the nodes in its box (rest positions, tolerance 1e-9 extent as boundary
 * boxes; extent: the whole mesh's). Collective. Error when the box holds no node. */
PetscErrorCode pbng_problem_set_point_load(pbng_problem *pb, const pbng_point_load *load, double extent);

/* Peridynamic membranes (issue 20; problem/pd_terms.h): the sheet's energy becomes the rings' of every vertex of
 * its triangles (tri3 rows), the tri3 membranes and bend4 stencils add nothing; only solvers with the
 * kind flag `peridynamics` accept it (pbng_node_force does not hold the rings' forces; pbng_problem_residual
 * and the energy do). Errors name the bad vertex or option. Collective. */
PetscErrorCode pbng_problem_set_peridynamics(pbng_problem *pb, const pbng_pd_options *o);

/* Elastoplasticity (problem/plastic_state.c; docs/cloth.md#plasticity-in-a-run): StVK with
 * S = C : (E_q - eps_p) at every quadrature point q of a volume element of any kind, one eps_p per local
 * element (constant over its points) starting at 0. Errors naming the problem for another material, a
 * mesh with sheets (tri3, bend4: no plastic strain) or impossible parameters (dt: the frames' time
 * step). Collective. */
PetscErrorCode pbng_problem_set_plasticity(pbng_problem *pb, const pbng_plasticity *p, double dt);
/* Element e's volume-mean Green strain at the current positions, sum_q V_q E(F_q) / sum_q V_q (full
 * 3x3; a linear tetrahedron's one E). */
void pbng_problem_mean_green_strain(const pbng_problem *pb, int32_t e, double E[9]);
/* The seed's update (Sec. 4.2, pbng_plastic_update) of every local element's eps_p over dt at the current
 * positions (ghosts current: every rank updates its copies of an element alike): at a linear
 * tetrahedron's E (pbng_plastic_update_at), at any other kind's volume-mean Green strain
 * (pbng_problem_mean_green_strain). changed: elements of this rank (owned) whose eps_p moved, summed
 * over the ranks. Collective. */
PetscErrorCode pbng_problem_plastic_update(pbng_problem *pb, double dt, int64_t *changed);

/* Released sets (problem/handles.c): the nodes of every boundary set with release > 0 (by box, rest
 * positions, tolerance 1e-9 extent) are free nodes tied to x_D(X, t) (Eq. 12) by a zero-length spring of
 * stiffness k_i = penalty tr(A_i) / 3 (A_i the node's PBNG block at rest, so the spring outweighs the
 * node's elastic stiffness by `penalty`) while t <= release; afterwards they move freely. Collective. */
PetscErrorCode pbng_problem_set_handles(pbng_problem *pb, double extent, double penalty);
/* Whether local node i is held by its released set at the frame's time pb->time; then its target x_D (computed
 * once per frame by pbng_problem_set_time, read here by the node kernels). */
static inline int pbng_problem_handle_target(const pbng_problem *pb, int32_t i, double xD[3])
{
  if (!pb->handle_held || !pb->handle_held[i]) return 0;
  for (int d = 0; d < 3; ++d) xD[d] = pb->handle_xD[3 * i + d];
  return 1;
}
/* The problem's time t (a frame's end): the released sets' targets x_D(X, t) and which of them still hold. */
void pbng_problem_set_time(pbng_problem *pb, double t);
/* A frame's first iterate: the nodes a released set holds at pb->time placed at their targets x_D (owned
 * and ghost copies alike; the spring's force is then only what the elements pull with, as for a
 * prescribed node). Not at frame 0, whose state is the start (rest, -initial, -initial_state). */
void pbng_problem_place_held_handles(pbng_problem *pb);
/* Whether any released set still holds its nodes at pb->time. */
int pbng_problem_handles_active(const pbng_problem *pb);

/* Starts frame n+1 at time t: moves prescribed nodes to x_D(X, t) (Eq. 12); in dynamic mode sets
 * x_hat = x^n + dt v^n and uses it as the initial guess of the free nodes (ghosts updated). */
PetscErrorCode pbng_problem_begin_frame(pbng_problem *pb, double t);
/* Dynamic: the free nodes move by dt^2 (load / mass) g (and dt^2 / mass times their point load) from where they are (x_hat at a frame start: the
 * frame's first iterate x^n + dt v^n + dt^2 g, PBD's guess, which a body in free fall solves exactly);
 * ghosts updated. Collective. */
PetscErrorCode pbng_problem_add_free_fall(pbng_problem *pb);

/* Makes the problem's energy include the contacts of ct (kept by reference) and gives the positions room
 * for their ghosts. Before anything keeps a pointer to pb->x. */
PetscErrorCode pbng_problem_attach_contacts(pbng_problem *pb, pbng_contacts *ct);
/* Forgets the contacts (before they are destroyed; the positions keep their room). */
PetscErrorCode pbng_problem_detach_contacts(pbng_problem *pb);
/* Collective. A new detection at the current positions (pbng_contacts_update). */
PetscErrorCode pbng_problem_update_contacts(pbng_problem *pb);

/* Every prescribed local node's position at time t (Eq. 12) into x[nlocal][3] (owned and ghost copies). */
void pbng_problem_prescribed_positions(const pbng_problem *pb, double t, double *x);

/* Brings every ghost position up to date (after updates outside a color sweep). */
PetscErrorCode pbng_problem_update_ghosts(pbng_problem *pb);
/* Ends a frame (dynamic mode: v^{n+1} = (x^{n+1} - x^n) / dt). */
void pbng_problem_end_frame(pbng_problem *pb);

/* Force on owned node i at positions x: f_i(x) + f_ext_i (Eq. 35 with its weak-constraint term, + Eq.
 * 16), minus the inertia term m_i (x_i - x_hat_i) / dt^2 in dynamic mode. When A is given, also the
 * SPD modified Hessian of Eq. 37-38 (+ m_i / dt^2 I in dynamic mode). `warm` selects whether corotated warm starts are updated. */
void pbng_node_force(const pbng_problem *pb, int32_t i, const double *x, double f[3], double A[9], int warm);
/* The corotated warm starts (pb->rotation, linear tetrahedra) of the visits entries[0..n) (4 e + a) moved on as
 * the visit of element e's node a at positions x would move them (the same code), without computing anything else:
 * a rank holding e beside another rank's node a keeps its copy as that rank's visit does (docs/architecture.md#determinism). */
void pbng_problem_refresh_rotations(const pbng_problem *pb, const int32_t *entries, int32_t n, const double *x);

/* VBD's node block (-vbd_exact_block; linear tetrahedra only): instead of Eq. 36-38, the sum over node
 * i's elements of the exact d^2 E_e / dx_i^2 (pbng_tet_node_block of pbng_stress_derivative, the element's
 * plastic strain with StVK), each made positive semidefinite by clamping its eigenvalues at 0, plus the
 * same weak-constraint, contact, handle and inertia (m_i / dt^2 I) terms as pbng_node_force's A (the same
 * code). Full, symmetric; positive definite in dynamic mode. The sweep then asks pbng_node_force for f alone. */
void pbng_node_exact_block(const pbng_problem *pb, int32_t i, const double *x, double A[9]);

/* A node step dx of owned node i from x: adds to f and A (full, symmetric) the terms of the node's
 * unilateral contacts that do not act at x but would at x + dx (their quadratic branch linearized at x:
 * f -= a_i K C, A += a_i^2 K), so that the step is taken again with them. Returns how many. */
int pbng_node_contacts_activate(const pbng_problem *pb, int32_t i, const double *x, const double dx[3], double f[3], double A[9]);

/* VBD's backtracking line search (-vbd_line_search; Chen et al. 2024, "Vertex Block Descent"), after node
 * i's step dx from x: x_i <- x_i + alpha dx for the first alpha = 1, 1/2, ..., 2^-PBNG_VBD_MAX_HALVINGS
 * that does not increase the node's local incremental potential
 *   g_i(x_i) = sum_{elements e around i} E_e + sum_{weak constraints, contacts c touching i} E_c
 *              - (w_i g + f_load,i + b_i).x_i [+ k_i/2 |x_i - x_D|^2 while a released set holds i]
 *              [+ m_i / (2 dt^2) |x_i - x_hat_i|^2 in dynamic mode]
 * (simple decrease, as VBD; a change below the round-off of the coupled terms, PBNG_VBD_ROUNDOFF times
 * their magnitudes, counts as no increase, so that converged steps are not refused; a +inf trial value
 * (the log barrier's inverted element) never qualifies). From g_i(x_i) = +inf (an element around i
 * inverted already) there is nothing to compare with: the whole step. x_i is kept when no alpha qualifies. Reads only node i's elements and constraints
 * at x (ghosts current, as the node force). Returns the halvings taken, or -1 when x_i was kept. */
enum { PBNG_VBD_MAX_HALVINGS = 8 };
#define PBNG_VBD_ROUNDOFF 1e-14
int pbng_node_line_search(const pbng_problem *pb, int32_t i, double *x, const double *b, const double dx[3]);

/* Hints to the memory system (they change no value): the element records node i will read, and the
 * positions those elements reference. A sweep calls them a few nodes ahead, records first. */
void pbng_node_prefetch_records(const pbng_problem *pb, int32_t i);
void pbng_node_prefetch_positions(const pbng_problem *pb, int32_t i, const double *x);

/* Peridynamic membranes (pb->pd): their forces at pb->x on every owned node, into pb->pd->grad (ghosts
 * current), with the solver's own term's (pb->term); nothing without them. Collective. A node's force is then pbng_node_force's plus
 * pbng_problem_add_ring_force's. */
PetscErrorCode pbng_problem_ring_forces(const pbng_problem *pb);
static inline void pbng_problem_add_ring_force(const pbng_problem *pb, int32_t i, double f[3])
{
  if (!pb->pd) return;
  for (int d = 0; d < 3; ++d) f[d] -= pb->pd->grad[3 * (int64_t)i + d];
}

/* Residual norm ||f_int(x) + f_ext (- inertia)||_2 over free degrees of freedom and the total
 * energy (Eq. 17, + inertia term in dynamic mode), both sums independent of the rank and thread
 * counts (pbng_reproducible_sum); NaN for both when any term is not finite (diverged positions).
 * Collective. */
PetscErrorCode pbng_problem_residual(const pbng_problem *pb, double *residual, double *energy);

/* The total energy alone (as pbng_problem_residual; pb->term's included), minus sum_i b_i . x_i over the owned free nodes
 * when b [nfree][3] is given: the objective of a level solving F(x) = b. NaN when not finite. Collective. */
PetscErrorCode pbng_problem_energy(const pbng_problem *pb, const double *b, double *energy);
/* This rank's part of it, not reduced (pb->term's not included: it is collective) (so that a caller can reduce it together with other sums). */
void pbng_problem_energy_local(const pbng_problem *pb, const double *b, pbng_exact_sum *sum);
/* The lowest global number of an owned element whose energy is +inf (neohookean_log: a point with J <= 0,
 * where the log barrier has no value), or -1 when there is none. Collective. */
PetscErrorCode pbng_problem_first_infinite_element(const pbng_problem *pb, int64_t *gid);

#endif
