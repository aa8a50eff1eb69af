/* Connective tissue (issue 41; the PBNG paper's Sec. 10.2.2, Fig. 1): at rest, weak constraints (Eq. 18-19) binding
 * the surfaces of different bodies where they lie within a distance d of each other. Each surface vertex within d of
 * a surface triangle of another body (a connected component of the elements: pbng_body_labels) is bound to the
 * triangle's closest point, found as the contact detector finds contacts (contact/contact_detect.h: vertex-triangle,
 * barycentric weights, the facing rules, no self-contact), a constraint of zero rest length: C = x_v - sum_a w_a x_a.
 * Bindings are found on the global mesh before it is partitioned (or on its slices, pbng_slice_bind_bodies, with the same
 * result), so they are the same on any number of ranks, and
 * join the mesh's weak constraints (the output's /constraints/weak, the coarse levels, the colorings). A vertex of
 * each facing surface binds to the other, so touching surfaces are bound both ways. */
#ifndef PBNG_CONTACT_BINDINGS_H
#define PBNG_CONTACT_BINDINGS_H

#include <mpi.h>
#include "mesh/mesh.h"
#include "mesh/slice.h"

typedef struct {
  double distance; /* d > 0 */
  double k_n, k_t; /* isotropic K = k I when k_n == k_t, else k_n along the triangle's outward normal, k_t across it */
  const char *apart;        /* "" or NULL: any two bodies may be bound; else comma-separated node set names: no binding
                               joins a node of one of these sets to a node of another (a node in several: the first listed),
                               e.g. parts that their boundary conditions move apart; nodes in none of them bind to anything */
  int snap;                 /* 1: each bound vertex is first moved onto the closest point of the surface it binds to, and
                               only one body of each touching pair binds its vertices (the one of the lower label): the
                               bindings then have zero rest length, the paper's C = x_v - sum_a w_a x_a, which does not
                               resist the pair's turning (a rest offset t, fixed in space, does: k |(R - I) t|) */
} pbng_binding_options;

typedef struct {
  int64_t bound;     /* bindings made */
  int64_t separated; /* vertex-triangle pairs within d left unbound because they join two sets of `apart` */
  double moved;      /* -bind_snap: the longest move of a vertex (at most about d) */
} pbng_binding_stats;

/* Serial (one process, on the whole mesh): appends the bindings to mesh->weak (with snap, first moves the bound vertices
 * and checks the elements: pbng_mesh_validate); what it did in *stats. Errors name the problem (d not positive and
 * finite, a negative stiffness, a set of `apart` that is not a node set of the mesh, an element the moves spoilt). */
PetscErrorCode pbng_mesh_bind_bodies(pbng_mesh *mesh, const pbng_binding_options *o, pbng_binding_stats *stats);

/* Collective, the same for a mesh that no process holds whole (-partitioner ptscotch: mesh/slice.h), without snap (an
 * error: the moves go body after body over the whole mesh): the slices are cut into one piece a rank (PT-Scotch,
 * parallel/distributed_partition.h) only to run the distributed detector on them at rest (its records do not depend on
 * the partition: each is computed by its vertex's owner), the -bind_apart sets of the records' nodes are asked of the
 * slices, and each binding goes to the slice of its vertex, where the bindings are sorted by (vertex, triangle key): the
 * serial list's order. They are appended to the slices' weak constraints (parallel/slice_weak.h); the caller
 * partitions the slices again, now with them. Errors are every process's alike. */
PetscErrorCode pbng_slice_bind_bodies(MPI_Comm comm, pbng_mesh_slice *s, const pbng_binding_options *o, pbng_binding_stats *stats);

#endif
