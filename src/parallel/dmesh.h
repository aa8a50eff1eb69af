/* The distributed mesh: one rank's subdomain in local numbering
 *     [ owned free nodes, by color | owned held nodes | ghost nodes ]
 * (held: prescribed by a boundary condition, or in no element)
 * with global ids (the input's numbering), the elements and weak constraints the rank needs (those
 * touching an owned node), and for every owned node its incident elements and weak constraints. Within a color, owned nodes are ordered
 * spatially (Morton order of the rest position) and elements are sorted by the Morton order of their
 * centroid, so both follow space, for locality.
 * Built once and used by every solver. */
#ifndef PBNG_PARALLEL_DMESH_H
#define PBNG_PARALLEL_DMESH_H

#include <mpi.h>
#include "mesh/mesh.h"
#include "parallel/coloring.h"
#include "parallel/submesh.h"

typedef struct {
  MPI_Comm comm;
  int rank, size;
  const pbng_element_type *etype; /* the mesh's one kind; NULL when kinds mix (then kind[]) */
  int nen;                /* nodes per element row (core/element.h: rows of mixed kinds are padded with -1) */
  int64_t nglobal_nodes, nglobal_elems;
  int32_t nowned, nlocal; /* ghosts are [nowned, nlocal) */
  int32_t nfree;          /* owned free nodes are [0, nfree) */
  int ncolors;            /* global number of colors */
  int32_t *color_start;   /* [ncolors + 1]: owned free nodes of color c are [color_start[c], color_start[c+1]) */
  int32_t *color_split;   /* [ncolors]: of those, [color_start[c], color_split[c]) are interface nodes (other
                             ranks hold them as ghosts), the rest interior */
  int64_t *global_node;   /* [nlocal] */
  int32_t *color;         /* [nlocal] */
  int8_t *node_bc;        /* [nlocal]: -1 free, else index of the prescribing boundary condition */
  int *ghost_owner;       /* [nlocal - nowned] */
  double *X;              /* [nlocal][3] rest positions */
  int32_t nelems;
  int32_t *elems;         /* [nelems][nen], local node indices */
  uint8_t *kind;          /* [nelems] each element's kind when kinds mix, else NULL */
  int64_t *global_elem;   /* [nelems] */
  int32_t nowned_elems;   /* elements [0, nowned_elems) are written by this rank in output */
  int32_t *adj_start;     /* [nowned + 1] */
  int32_t *adj;           /* nen * local element + local vertex (core/adjacency.h), by increasing global element */
  int64_t nglobal_weak;
  int32_t nweak;          /* weak constraints (Sec. 4.1) with a node owned here; node[] holds local indices */
  pbng_weak_constraint *weak;
  int64_t *global_weak;   /* [nweak] */
  int32_t nowned_weak;    /* constraints [0, nowned_weak) are counted by this rank (their node[0] is owned) */
  int32_t *wadj_start;    /* [nowned + 1] */
  int32_t *wadj;          /* PBNG_WC_MAX_NODES * constraint + its node slot, by increasing global constraint */
  int nblock_colors;      /* PBNG's weak-constraint blocks (pbng_color_weak_blocks), when the piece had them: */
  int32_t *block_color;   /* [nweak] or NULL */
  int nelem_colors, nweak_colors; /* PBD/XPBD constraint colors (Sec. 9), when the piece had them: */
  int32_t *elem_color;    /* [nelems] or NULL */
  int32_t *weak_color;    /* [nweak] or NULL */
} pbng_dmesh;

/* Builds this rank's subdomain from its piece of the mesh (owned nodes, their elements, ghosts) and
 * the boundary-condition index of every local node (-1: free). */
PetscErrorCode pbng_dmesh_create(MPI_Comm comm, const pbng_submesh *sub, const int8_t *node_bc, pbng_dmesh *dm);
PetscErrorCode pbng_dmesh_destroy(pbng_dmesh *dm);

/* Local element e's type (its own when kinds mix). */
static inline const pbng_element_type *pbng_dmesh_element_type(const pbng_dmesh *dm, int32_t e)
{
  return pbng_row_type(dm->etype, dm->kind, e);
}
/* The rank owning local node i. */
static inline int pbng_dmesh_node_owner(const pbng_dmesh *dm, int32_t i) { return i < dm->nowned ? dm->rank : dm->ghost_owner[i - dm->nowned]; }
/* A message's name for the subdomain's kinds: the kind, or "mixed element kinds". */
static inline const char *pbng_dmesh_kinds_name(const pbng_dmesh *dm) { return dm->etype ? dm->etype->name : "mixed element kinds"; }

#endif
