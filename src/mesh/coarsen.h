/* Coarse tetrahedral meshes made from a fine one, for multilevel runs on a single mesh: a subset of the
 * fine nodes is kept and every other node is collapsed, along one of its edges, into a kept
 * neighbour, as long as the tetrahedra around it stay positive and well shaped.
 *
 * One round: (1) classify the nodes by the boundary (interior; on a smooth surface; on a ridge where
 * boundary faces meet at more than the feature angle; corner; nodes of weak constraints count as
 * corners and are never removed); (2) choose the nodes to keep, corners first, then ridges, surface
 * and interior nodes: a node is kept unless one of its neighbours it could collapse into was kept
 * before it (a node may only collapse into one of at least its class, along a boundary edge if it is
 * on the boundary, along a ridge if it is on one, and into a node of the same boundary condition and
 * of every node set it belongs to, so that shapes, ridges and prescribed regions are preserved);
 * (3) collapse the other nodes, each into its nearest such kept neighbour for which the collapse
 * leaves every changed tetrahedron with positive volume and quality 6 sqrt(2) V / l_max^3 of at least
 * quality_min, every changed boundary face within the feature angle of its former normal, and the
 * link condition satisfied; a node with no such neighbour stays. Rounds repeat until the node count
 * is at most 1/target_ratio of the fine one or a round removes less than 1% of the nodes.
 * Node sets and weak constraints carry over to the kept nodes. Serial (rank 0, pbng-partition). */
#ifndef PBNG_MESH_COARSEN_H
#define PBNG_MESH_COARSEN_H

#include "mesh/mesh.h"

typedef struct {
  double target_ratio;  /* fine nodes / coarse nodes to reach (8: about half the nodes per axis) */
  double quality_min;   /* smallest 6 sqrt(2) V / l_max^3 a collapse may create (1 for a regular tetrahedron) */
  double feature_angle; /* degrees */
} pbng_coarsen_options;

/* The defaults: ratio 8, quality 0.1, 30 degrees. */
pbng_coarsen_options pbng_coarsen_defaults(void);

/* coarse <- fine coarsened. node_bc[fine->nnodes]: the boundary condition of every node (-1: free),
 * or NULL. The coarse mesh's source says what it was made from. Errors: a fine mesh of other than
 * linear tetrahedra. */
PetscErrorCode pbng_mesh_coarsen(const pbng_mesh *fine, const int8_t *node_bc, const pbng_coarsen_options *opt, pbng_mesh *coarse);

/* tet <- linear tetrahedra on the corners of every volume element of fine (any kinds, mixed too): a tetrahedron's
 * corners as they are, any other shape split around a new node at
 * its corners' centroid, one tetrahedron per triangular face and two per quadrilateral face along the diagonal from
 * its lowest-numbered corner, so that neighbours agree (conforming). Nodes: the corners in fine's order, then the
 * centroids; the node sets restricted to the corners (weak constraints are carried to coarse levels by location, not
 * here). Errors: sheet elements. */
PetscErrorCode pbng_mesh_tetrahedralize(const pbng_mesh *fine, pbng_mesh *tet);
/* corner <- every volume element of fine as its linear kind (tet10, tet20 -> tet4, hex27 -> hex8; linear kinds as they
 * are; kinds may mix) on their corner nodes: p-multigrid's first coarse level (the same cells). Nodes and node sets
 * as above. Errors: sheet elements. */
PetscErrorCode pbng_mesh_corners(const pbng_mesh *fine, pbng_mesh *corner);

#endif
