/* Per-color halo exchange: after the owned nodes of color c moved, each rank sends the new positions
 * of exactly those of its color-c nodes that other ranks hold as ghosts, and receives its color-c
 * ghosts. The plan is built once from the subdomain (dmesh): ghosts are requested from their owners,
 * and both sides order a neighbour's nodes by (color, global id). */
#ifndef PBNG_PARALLEL_HALO_H
#define PBNG_PARALLEL_HALO_H

#include "parallel/dmesh.h"

typedef struct {
  MPI_Comm comm;
  int ncolors, nneighbors;
  int *neighbor;        /* [nneighbors] ranks */
  int32_t *send_start;  /* [ncolors * nneighbors + 1]: entries for (color c, neighbour n) at c * nneighbors + n */
  int32_t *send_node;   /* owned local indices */
  int32_t *recv_start;  /* same layout */
  int32_t *recv_node;   /* ghost local indices */
  double *send_buf, *recv_buf; /* 3 doubles per entry */
  MPI_Request *requests;       /* [2 * nneighbors] */
  int64_t nodes_per_iteration; /* nodes this rank sends per sweep (all colors) */
} pbng_halo;

PetscErrorCode pbng_halo_create(const pbng_dmesh *dm, pbng_halo *h);
/* A plan from lists made elsewhere (the contacts' dynamic halo): ncolors colors, nneighbors ranks
 * neighbor[], and per direction start[ncolors * nneighbors + 1] / node[] laid out as above (both sides
 * order a (color, neighbour) list alike). Takes ownership of the arrays (PetscMalloc'd). */
PetscErrorCode pbng_halo_create_from_lists(MPI_Comm comm, int ncolors, int nneighbors, int *neighbor, int32_t *send_start, int32_t *send_node,
                                           int32_t *recv_start, int32_t *recv_node, pbng_halo *h);
/* A one-color plan from one side's lists: count[r] entries of idx (grouped by rank r; the plan takes idx) that this
 * rank sends to rank r (sending = 1) or wants from it (sending = 0), as indices into the arrays exchanged; the other
 * side learns its lists, in the same order, through an all-to-all. Every rank passes the same `sending`. Collective. */
PetscErrorCode pbng_halo_create_from_one_side(MPI_Comm comm, int sending, const int *count, int32_t *idx, pbng_halo *h);
PetscErrorCode pbng_halo_destroy(pbng_halo *h);

/* Starts / completes the exchange of color c (c = -1: every color) of positions x[nlocal][3]. */
PetscErrorCode pbng_halo_begin(pbng_halo *h, int c, const double *x);
PetscErrorCode pbng_halo_end(pbng_halo *h, int c, double *x);

/* Begin + end. */
PetscErrorCode pbng_halo_exchange(pbng_halo *h, int c, double *x);

/* The reverse direction, every color: each rank sends its ghosts' 3 values back to their owners.
 * PBNG_HALO_ADD: the owner adds every copy's values to its node (v: any per-node vector);
 * PBNG_HALO_ASSIGN: the owner takes the values of the copies marked in touched[nlocal] (at most one
 * per node: constraint solvers move a node from one rank only within a color); PBNG_HALO_MIN / PBNG_HALO_MAX: the owner
 * takes the least / largest of its value and every copy's, per component. */
typedef enum { PBNG_HALO_ADD, PBNG_HALO_ASSIGN, PBNG_HALO_MIN, PBNG_HALO_MAX } pbng_halo_reverse_mode;
PetscErrorCode pbng_halo_reverse(pbng_halo *h, pbng_halo_reverse_mode mode, const uint8_t *touched, double *v);

/* Every ghost of a subdomain and the owned nodes other ranks hold as ghosts, all of them (prescribed
 * nodes too, unlike the halo's per-color lists), for exchanging a value per node (the halo's lists are
 * built from it). Ghosts are ordered by (owner, global id) in the dmesh, so the ghosts owned by rank r
 * are the local nodes nowned + [want_displ[r], want_displ[r + 1]). */
typedef struct {
  MPI_Comm comm;
  int size;
  int32_t nowned;
  int *want_count, *want_displ; /* [size], [size + 1]: this rank's ghosts by owner */
  int *give_count, *give_displ; /* [size], [size + 1]: the owned nodes rank r holds as ghosts */
  int32_t *give_local;          /* [give_displ[size]]: their local indices, in r's ghost order */
} pbng_ghost_plan;

PetscErrorCode pbng_ghost_plan_create(const pbng_dmesh *dm, pbng_ghost_plan *p);
PetscErrorCode pbng_ghost_plan_destroy(pbng_ghost_plan *p);
/* Collective. The owners' values v[nlocal] copied to every ghost copy. */
PetscErrorCode pbng_ghost_plan_forward(const pbng_ghost_plan *p, int64_t *v);
/* Collective. Every owned value replaced by the minimum of it and its ghost copies' values. */
PetscErrorCode pbng_ghost_plan_reverse_min(const pbng_ghost_plan *p, int64_t *v);

/* MPI_Alltoallv of items of `size` bytes (counts and displacements in items). */
PetscErrorCode pbng_alltoallv_items(const void *send, const int *scount, const int *sdispl, void *recv, const int *rcount, const int *rdispl, size_t size,
                                    MPI_Comm comm);
/* Every rank sends count[r] items of `size` bytes to each rank r (send: grouped by destination, in rank order) and
 * receives what each rank sent it: *recv (PetscMalloc'd) grouped by source in rank order, (*rcount)[r] items from
 * rank r starting at item (*rdispl)[r], (*rdispl)[size] in all (rcount, rdispl: PetscMalloc'd). Collective. */
PetscErrorCode pbng_exchange_items(MPI_Comm comm, size_t size, const int *count, const void *send, int **rcount, int **rdispl, void **recv);
/* The same for n items in any order, item k going to rank dest[k]: grouped by destination here (in their order within
 * each), *recv (PetscMalloc'd) the *nrecv items received, grouped by source in rank order. Collective. */
PetscErrorCode pbng_send_items_to(MPI_Comm comm, size_t size, int64_t n, const int *dest, const void *items, int64_t *nrecv, void **recv);
/* MPI_Allgatherv of n items of `size` bytes from every rank: *all (PetscMalloc'd, free with PetscFree) gets
 * every rank's items in rank order, *total of them. */
PetscErrorCode pbng_allgather_items(MPI_Comm comm, size_t size, int n, const void *mine, int *total, void **all);

#endif
