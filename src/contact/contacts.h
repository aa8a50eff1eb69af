/* Contacts as weak constraints that appear and vanish during a run (issue 17; paper Sec. 4.1, 9.1,
 * 10.2): the dynamic terms of one rank's subdomain, beside the static ones of the dmesh.
 *
 * Each detection (pbng_contacts_update) finds the surface vertices near a surface triangle or an
 * obstacle (contact/contact_detect.h) and makes each such pair a weak constraint (Eq. 18-19)
 *   C = x_v - sum_j w_j x_j   (triangle, closest point p = sum_j w_j x_j at detection)
 *   C = x_v - q               (obstacle, q its closest point at detection)
 * with K = k_n n n^T + k_t (I - n n^T), n the surface normal at detection: the paper's spring
 * (rebuilt at every detection), or unilateral (energy only while n.C < 0). A rank holds every contact
 * with a node it owns; the contact's energy is counted by the owner of its vertex.
 *
 * Nodes of a contact that are not local yet become contact ghosts, local indices
 * [nlocal, nlocal + nghost) after the dmesh's static ghosts; their positions travel with a plan of their
 * own (the dynamic halo). Node colors change incrementally (Sec. 9.1): only the free nodes of new
 * contacts, and those that left their last contact, are recolored, starting from their current color
 * (the static one for the latter), the least free color otherwise — a sequential greedy rule in
 * increasing global id applied once for the whole job (by rank 0), so the colors do not depend on the
 * partition. The sweep then runs per color over a schedule of owned free nodes instead of the dmesh's
 * static color ranges, and every recolored node that other ranks hold as a ghost, and every node held as
 * a contact ghost, is sent with its current color by the dynamic halo. */
#ifndef PBNG_CONTACT_CONTACTS_H
#define PBNG_CONTACT_CONTACTS_H

#include "contact/contact_detect.h"
#include "parallel/halo.h"

typedef struct {
  pbng_contact_detect_options detect; /* -contact_distance (0: half the mean surface edge), -contact_self, -obstacle */
  double k_n, k_t;                    /* -contact_stiffness, -contact_tangential_stiffness */
  int unilateral;                     /* -contact_model unilateral (else the paper's spring) */
} pbng_contact_options;

/* One contact term as it travels between ranks: C = sum_j a_j x_j - target over nodes given by global id
 * and owner. A detection makes (vertex 1, corners with a non-zero weight -w_j) or (vertex 1, target q);
 * a carried set (coarse levels, contact/contact_levels.h) any such combination. */
typedef struct {
  int64_t key[3];                  /* vertex gid, kind, triangle key / obstacle index (one term per key) */
  int64_t gid[PBNG_WC_MAX_NODES];
  int32_t owner[PBNG_WC_MAX_NODES];
  int32_t nnodes;
  uint8_t slots;                   /* which node slots of the key's stencil are in use (a term is new when
                                      its key or its slots are): detection bit 0 the vertex, bit j + 1 corner j */
  double a[PBNG_WC_MAX_NODES];
  double x[PBNG_WC_MAX_NODES][3];  /* the nodes' positions when made (contact ghosts' first values), or 0 */
  double normal[3], target[3];
} pbng_contact_item;

/* What the last update did, summed over the ranks (every rank has the same values). */
typedef struct {
  int64_t contacts, obstacle_contacts; /* contacts in force (counted once) and of them against obstacles */
  int64_t new_contacts;                /* not present at the previous update */
  int64_t new_acting;                  /* of them, those acting at the positions of the update (a vertex behind its surface) */
  double new_depth;                    /* the deepest of those (0: none) */
  int64_t deep, crossings;             /* deep records (pbng_contact_detect_swept) in force; of them, new crossings */
  double deepest;                      /* the largest depth (-gap) of a deep record at its detection (0: none) */
  int64_t recolored;                   /* nodes whose color was chosen again */
  int ncolors;                         /* colors in use */
  double detect_seconds, recolor_seconds, build_seconds; /* slowest rank */
} pbng_contacts_stats;

typedef struct {
  const pbng_dmesh *dm;
  MPI_Comm comm;                      /* a duplicate of dm->comm (the dynamic halo's messages) */
  pbng_contact_options opt;
  pbng_contact_detector *det;       /* NULL for a carried set */
  int carried;                        /* terms given by pbng_contacts_install (coarse levels), colored afresh each time */
  int version;                        /* incremented by every update that changed the terms */

  /* the contacts touching an owned node, in increasing (vertex gid, kind, key) */
  int32_t n, capacity;
  pbng_weak_constraint *term;         /* node[]: local indices (owned, static ghost, contact ghost) */
  int64_t (*key)[3];                  /* [n]: vertex gid, kind, triangle key / obstacle index */
  uint8_t *counted;                   /* [n]: 1 when its vertex is owned here (energy, output) */
  uint8_t *slots;                     /* [n]: bit j set when the item's node j is one of the term's (zero weights are left out) */
  int32_t *adj_start, *adj;           /* per owned node: term * PBNG_WC_MAX_NODES + slot, in term order */
  int64_t (*previous)[4];             /* key and slots of the previous update's terms (sorted), to tell new contacts */
  int32_t nprevious;

  /* contact ghosts: local indices [nlocal, nlocal + nghost), ordered by (owner, gid) */
  int32_t nghost, ghost_capacity;     /* capacity: the positions array must have room for nlocal + capacity */
  int64_t *ghost_gid;
  int *ghost_owner;
  int32_t *ghost_static_color;
  uint8_t *ghost_held;                /* prescribed (moved by its owner; sent at every full exchange) */

  /* colors: static (dmesh) unless recolored; the recolored nodes of the whole job, replicated */
  int ncolors;
  int32_t *color;                     /* [nlocal + ghost_capacity] current colors of the local nodes */
  int32_t nrecolored;
  int64_t *recolored_gid;             /* [nrecolored] sorted */
  int32_t *recolored_color;

  /* the sweep's schedule: owned free nodes of color c are node[start[c] .. start[c+1]), those other
   * ranks hold as ghosts first (up to split[c]) */
  int32_t *sched_start, *sched_split, *sched_node;
  pbng_halo dyn;                      /* the dynamic halo: colors 0..ncolors-1, then the held contact ghosts */
  int dyn_built;

  /* fixed at creation */
  int64_t (*lookup)[2];               /* [nlocal]: (gid, local index) sorted by gid: the static local nodes */
  int32_t *holder_start, *holder;     /* per owned node: ranks holding it as a static ghost */
  double *x_detect;                   /* [nlocal][3]: the static local nodes' positions at the last detection (checkpoints) */
  double *x_prev;                     /* [nlocal][3]: those of the detection before it (the swept rules' previous positions) */
  int have_detect;                    /* x_detect holds a detection's positions */
  int32_t nkeep;                      /* the last detection's triangle pairs of owned vertices behind their triangle (gap < 0), */
  pbng_contact_deep_pair *keep;       /* sorted by vertex gid, then key: the next detection's kept pairs (pbng_contact_detect_swept) */
  int32_t ndeep;                      /* of them the deep ones (from the swept rules): with the positions of the last detection */
  pbng_contact_deep_pair *deep;       /* they give its records again (checkpoints) */
  double t_detect;                    /* the problem's time then (prescribed nodes' positions; set by the caller) */
  int restoring;                      /* an update that rebuilds a checkpointed set: the colors are the recolored list's */
  pbng_contacts_stats stats;
} pbng_contacts;

/* Collective. The detector over dm's surface and the fixed tables; no contact yet. halo: dm's static
 * halo (which ranks hold which owned nodes). */
PetscErrorCode pbng_contacts_create(const pbng_dmesh *dm, const pbng_halo *halo, const pbng_contact_options *opt, pbng_contacts *ct);
PetscErrorCode pbng_contacts_destroy(pbng_contacts *ct);

/* Collective. A set whose terms are given (pbng_contacts_install), not detected: the contacts of a
 * coarse level of the multilevel solver (contact/contact_levels.h). Any node may become a contact
 * ghost (capacity: the mesh's nodes). */
PetscErrorCode pbng_contacts_create_carried(const pbng_dmesh *dm, const pbng_halo *halo, const pbng_contact_options *opt, pbng_contacts *ct);

/* Collective. A carried set's terms become items[n] (this rank's share, each given by one rank; their
 * nodes' positions need not be known: x's contact ghosts are refreshed from their owners). Colors are
 * chosen afresh from the static ones (Sec. 9.1's rule with every node new), so that they depend on
 * the set alone, not on earlier ones. */
PetscErrorCode pbng_contacts_install(pbng_contacts *ct, int32_t n, const pbng_contact_item *items, double *x);

/* Collective. Detects at positions x ([nlocal + ghost_capacity][3], owned and static ghosts current) and
 * rebuilds the terms, contact ghosts (their positions written into x), colors, schedule and dynamic
 * halo. */
PetscErrorCode pbng_contacts_update(pbng_contacts *ct, double *x);

/* Collective. Rebuilds the set a checkpoint describes: ct->x_detect's owned part (read), the job's
 * recolored nodes (gid, color) pairs [n] and the job's deep pairs deep[ndeep] (pbng_contacts_gather_deep); x: the
 * current positions (contact ghosts written). The same detection at the same positions with the same colors and deep
 * pairs gives the same terms, ghosts, schedule and halo as the run that wrote the checkpoint had. halo: the static
 * one (x_detect's ghosts). */
PetscErrorCode pbng_contacts_restore(pbng_contacts *ct, pbng_halo *halo, const int64_t *recolored, int32_t n, int32_t ndeep,
                                     const pbng_contact_deep_pair *deep, double *x);

/* What a detection carries over from the ones before it: the last update's keys (a spring contact once made is kept
 * while its vertex stays within the distance), the swept rules' positions and kept pairs. Saved before a trial
 * detection (a frame started from a guess, -quasistatic_guess secant) and put back when the trial is declined, so that
 * the next detection is the one that would have run without the trial. */
typedef struct {
  int64_t (*previous)[4];
  int32_t nprevious, nkeep;
  pbng_contact_deep_pair *keep;
  double *x_detect;
  int have_detect;
} pbng_contacts_history;

/* Not collective. A copy of ct's history into *h (allocated; pbng_contacts_history_free). */
PetscErrorCode pbng_contacts_history_save(const pbng_contacts *ct, pbng_contacts_history *h);
/* Not collective. ct's history set back to *h (the terms stay: the caller detects next). */
PetscErrorCode pbng_contacts_history_restore(pbng_contacts *ct, const pbng_contacts_history *h);
PetscErrorCode pbng_contacts_history_free(pbng_contacts_history *h);

/* Collective. The deep pairs of the last detection over the whole job (every rank's), sorted: *all allocated
 * (PetscMalloc1), *n of them. */
PetscErrorCode pbng_contacts_gather_deep(const pbng_contacts *ct, int32_t *n, pbng_contact_deep_pair **all);

/* Whether the sweep must follow the contacts' schedule and colors (some node was recolored, or some
 * contact exists anywhere). */
static inline int pbng_contacts_active(const pbng_contacts *ct) { return ct && ct->dyn_built; }

/* Ghost positions of the dynamic halo: color c (begin/end, as pbng_halo) or every one (c = -1). */
PetscErrorCode pbng_contacts_exchange_begin(pbng_contacts *ct, int c, const double *x);
PetscErrorCode pbng_contacts_exchange_end(pbng_contacts *ct, int c, double *x);
PetscErrorCode pbng_contacts_exchange(pbng_contacts *ct, int c, double *x);

/* The order of contact keys (vertex gid, kind, triangle key / obstacle index): <0, 0, >0. */
static inline int pbng_contact_key_compare(const int64_t a[3], const int64_t b[3])
{
  for (int k = 0; k < 3; ++k)
    if (a[k] != b[k]) return (a[k] > b[k]) - (a[k] < b[k]);
  return 0;
}

/* The global id of local node l (owned, static ghost or contact ghost). */
static inline int64_t pbng_contacts_node_gid(const pbng_contacts *ct, int32_t l)
{
  return l < ct->dm->nlocal ? ct->dm->global_node[l] : ct->ghost_gid[l - ct->dm->nlocal];
}

/* The static local index (owned or static ghost) of global node gid, or -1. */
int32_t pbng_contacts_static_local(const pbng_contacts *ct, int64_t gid);

/* Per local node (owned, static ghost and contact ghost: [nlocal + nghost]): 1 when it is a node of a
 * contact this rank holds. */
void pbng_contacts_mark_nodes(const pbng_contacts *ct, uint8_t *in_contact);

#endif
