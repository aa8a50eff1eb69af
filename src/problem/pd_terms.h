/* Peridynamic membranes as the problem's sheet energy (issue 20; seed projective-peridynamics-membranes.txt,
 * docs/peridynamics.md#in-a-run): with -sheet_model peridynamic, every owned vertex of the sheet's triangles
 * (tri3 rows) is the centre of a ring, its one-ring in fan order, and the problem's sheet energy is
 *   E_sheet = sum_i W_i + E_b,i,   W_i = V_i Psi(F_i) (Eq. 8-15, 36-41),   E_b,i (Eq. 42, docs/peridynamics.md#bending),
 * V_i = sum over i's triangles of thickness x area / 3 (so that sum_i V_i is the sheet's volume), bond weights 1,
 * the virtual bond of length -pd_thickness along the angle-weighted normal (Eq. 13). The tri3 membranes and
 * bend4 stencils then add nothing (their rows only make the rings and the lumped masses).
 *
 * A ring touches its centre and its neighbours, so a node's gradient sums the rings of itself and of its
 * neighbours. Each rank evaluates the rings of its owned vertices (every triangle around an owned vertex is
 * local); a ghost's slot values go to its owner (pbng_pd_slot_exchange), and every owned node adds all its
 * slots, its own rank's and the others', in the order of increasing global centre, as one rank does: results
 * are bitwise independent of ranks and threads. */
#ifndef PBNG_PROBLEM_PD_TERMS_H
#define PBNG_PROBLEM_PD_TERMS_H

#include <petscsys.h>
#include "core/peridynamics.h"
#include "parallel/halo.h"
#include "contact/pd_contact.h"

/* -sheet_model: fem (tri3 membranes + bend4 stencils), peridynamic (the rings below), cloth6 (the GPBD seed's
 * six-dimensional cloth stencils, core/cloth6.h, in place of tri3 and bend4) */
typedef enum { PBNG_SHEET_MODEL_FEM = 0, PBNG_SHEET_MODEL_PERIDYNAMIC = 1, PBNG_SHEET_MODEL_CLOTH6 = 2 } pbng_sheet_model;

/* -sheet_model, -pd_material, -pd_s0, -pd_s1, -pd_kb, -pd_thickness (docs/peridynamics.md#options). */
typedef struct {
  pbng_sheet_model model;
  pbng_pd_material mat; /* Psi of Eq. 36 or 39 */
  double k_b;           /* bending constant of Eq. 42 (Pa m^2 per unit volume: E_b,i = V_i k_b/2 sum ...) */
  double thickness;     /* xi of Eq. 13: the virtual bond's length (0: each vertex's sheet thickness) */
  pbng_pd_contact_options contact; /* the contact local step (-pd_contact*, -pd_obstacle; contact/pd_contact.h) */
  int hessian_fd;       /* -pd_hessian fd: Newton's ring matrices by central differences of the exact ring gradient
                           (the moving normal included) instead of the analytic ones with the normal held fixed */
} pbng_pd_options;

/* The ghosts' slot values to their owners (more than one rank): built once from the incidence; the owner's
 * order of every owned node's slots, local and received, by increasing global ring centre. */
typedef struct {
  MPI_Comm comm;
  int size;
  int *send_count, *send_displ; /* [size], [size + 1]: slot values this rank sends to each rank */
  int *recv_count, *recv_displ; /* [size], [size + 1]: and receives from each */
  int nneighbors, *neighbor;    /* the ranks it sends to or receives from */
  int32_t *send_slot;           /* [send_displ[size]]: the slots sent, in order */
  int32_t *sum_start;           /* [nowned + 1] */
  int32_t *sum_item;            /* owned node i's terms in order: k >= 0 local slot k, k < 0 received value -1 - k */
} pbng_pd_slot_exchange;

typedef struct pbng_pd_terms {
  pbng_pd_options opt;
  int32_t nrings;     /* owned vertices with triangles around them */
  int32_t *centre;    /* [nrings] local index of each ring's centre (owned), by increasing global id */
  int32_t *slot_start; /* [nrings + 1]: ring r's slots are [slot_start[r], slot_start[r + 1]), slot 0 its centre */
  int32_t *slot_node; /* [nslots] local node of each slot; the neighbours in fan order after the centre */
  pbng_pd_rest *rest; /* [nrings] */
  int32_t *inc_start; /* [nlocal + 1]: the slots that touch local node i are inc[inc_start[i] .. inc_start[i+1]) */
  int32_t *inc;       /* slots by (node, ring); a ring's index is its global centre's order */
  double *slot_grad;  /* [nslots][3] the last evaluation's dE_r/dy at each slot */
  double *ring_energy; /* [nrings] the last evaluation's W_r + E_b,r */
  double *grad;       /* [nlocal][3] dE_sheet/dy of every owned node after pbng_pd_terms_gradient */
  int32_t nowned;
  pbng_pd_slot_exchange *exchange; /* NULL on one rank */
} pbng_pd_terms;

/* The contact local step's thickness xi: -pd_contact_thickness, else -pd_thickness, else the sheet's. */
static inline double pbng_pd_contact_thickness(const pbng_pd_options *o, double sheet_thickness)
{
  return o->contact.thickness > 0 ? o->contact.thickness : o->thickness > 0 ? o->thickness : sheet_thickness;
}

/* The reading of the options: error messages name the option (collective on PETSC_COMM_WORLD). */
PetscErrorCode pbng_pd_options_check(const pbng_pd_options *o);

/* The rings of the owned vertices of dm's tri3 elements, rest data from the rest positions X; thickness[e]
 * each local element's sheet thickness (for V_i and, with o->thickness 0, the virtual bond). Errors name the
 * vertex: a non-manifold fan (its triangles do not chain into one fan), more than PBNG_PD_MAX_RING
 * neighbours, a degenerate ring. Collective. */
PetscErrorCode pbng_pd_terms_create(const pbng_dmesh *dm, const double *thickness, const pbng_pd_options *o, pbng_pd_terms **out);
PetscErrorCode pbng_pd_terms_destroy(pbng_pd_terms **pd);

/* Ring r's positions in x: its centre's y_i and its neighbours' y_ring[0 .. n) in fan order. */
void pbng_pd_ring_positions(const pbng_pd_terms *pd, int32_t r, const double *x, double y_i[3], double (*y_ring)[3]);

/* Ring r at positions x: returns W_r + E_b,r (+INFINITY for an inverted or degenerate ring), and with grad
 * (n + 1 rows) its exact gradient, the chain through the moving virtual bond included. */
double pbng_pd_ring_energy(const pbng_pd_terms *pd, int32_t r, const double *x, double (*grad)[3]);

/* Ring r's Hessian by central differences of its exact gradient (pbng_pd_ring_energy), the moving normal
 * included, symmetrised; H is 3(n+1) x 3(n+1) as pbng_pd_vertex_hessian's. x is moved and put back (not
 * thread-safe on a shared x). Returns -1 when a ring energy is not finite. */
int pbng_pd_ring_hessian_fd(const pbng_pd_terms *pd, int32_t r, double *x, double *H);

/* Sum of the owned rings' energies (this rank's share), exactly (pbng_exact_sum): NaN/inf propagate. */
void pbng_pd_terms_energy(const pbng_pd_terms *pd, const double *x, void *exact_sum);

/* Every owned ring's energy and gradient at x (ghosts current), summed into pd->grad for every owned node.
 * Collective. */
PetscErrorCode pbng_pd_terms_gradient(pbng_pd_terms *pd, const double *x, int32_t nlocal);

/* Adds ring slot values val[nslots][w] into out[nlocal][w]: every owned node all its slots, of every rank, in
 * increasing global ring centre (bitwise as on one rank); a ghost its own rank's slots. Collective. */
PetscErrorCode pbng_pd_terms_gather(const pbng_pd_terms *pd, int w, const double *val, double *out, int32_t nlocal);

#endif
