/* The serial (global) mesh as generated or read: rest positions, element connectivity in the input's
 * numbering, and named node sets (Gmsh physical groups). Partitioning turns it into per-rank
 * subdomains (parallel/). Node indices are int32 (meshes up to 2^31-1 nodes). */
#ifndef PBNG_MESH_MESH_H
#define PBNG_MESH_MESH_H

#include <petscsys.h>
#include <stdint.h>
#include "core/element.h"
#include "core/weak_constraint.h"

typedef struct {
  char name[64];
  int64_t count;
  int32_t *nodes; /* sorted, unique */
} pbng_node_set;

typedef struct {
  int64_t nnodes, nelems;
  double *X;                     /* [nnodes][3] rest positions */
  int32_t *elems;                /* [nelems][nen], 0-based (element rows, core/element.h) */
  int nen;                       /* nodes per row: etype->nodes, or the most of the kinds that mix */
  const pbng_element_type *etype; /* the mesh's one kind; NULL when kinds mix */
  uint8_t *kind;                 /* kinds mix: [nelems] each element's kind; else NULL */
  int nsets;
  pbng_node_set *sets;           /* named node sets */
  int64_t nweak;                 /* weak constraints (Sec. 4.1), node indices in this mesh's numbering */
  pbng_weak_constraint *weak;
  char source[PETSC_MAX_PATH_LEN]; /* file name or scene description, for messages */
} pbng_mesh;

/* Allocates X and elems for the given sizes (zeroed sets). */
PetscErrorCode pbng_mesh_alloc(pbng_mesh *mesh, pbng_element_kind kind, int64_t nnodes, int64_t nelems);
/* The same for a mesh mixing kinds: rows of nen nodes and a kind per element (unset). */
PetscErrorCode pbng_mesh_alloc_mixed(pbng_mesh *mesh, int nen, int64_t nnodes, int64_t nelems);
PetscErrorCode pbng_mesh_destroy(pbng_mesh *mesh);

/* Element e's type (its own when kinds mix). */
static inline const pbng_element_type *pbng_mesh_element_type(const pbng_mesh *mesh, int64_t e)
{
  return pbng_row_type(mesh->etype, mesh->kind, e);
}
/* Element e's node count (its row less the padding). */
static inline int pbng_mesh_element_nodes(const pbng_mesh *mesh, int64_t e)
{
  return pbng_row_nodes(&mesh->elems[(size_t)mesh->nen * (size_t)e], mesh->nen);
}
/* The element layout as one integer (to send or store): the kind, or -nen when kinds mix. */
static inline int64_t pbng_mesh_layout(const pbng_mesh *mesh) { return mesh->etype ? (int64_t)mesh->etype->kind : -(int64_t)mesh->nen; }
/* pbng_mesh_alloc or pbng_mesh_alloc_mixed by such a layout; an unknown one is an error naming `what`. */
PetscErrorCode pbng_mesh_alloc_layout(pbng_mesh *mesh, int64_t layout, int64_t nnodes, int64_t nelems, const char *what);
/* A mesh of that layout with no node and no element (a rank's empty piece of a level on fewer ranks). */
PetscErrorCode pbng_mesh_alloc_empty(pbng_mesh *mesh, int64_t layout, const char *what);
/* Its elements counted by kind: counts[PBNG_ELEMENT_KIND_COUNT]. */
void pbng_mesh_count_kinds(const pbng_mesh *mesh, int64_t *counts);
/* The mesh's kinds as a label ("hex8", "mixed hex8+prism6+pyramid5"). */
void pbng_mesh_kinds_label(const pbng_mesh *mesh, char *buf, size_t len);

/* Adds a named node set (copies, sorts and deduplicates the nodes). */
PetscErrorCode pbng_mesh_add_node_set(pbng_mesh *mesh, const char *name, int64_t count, const int32_t *nodes);
/* The set with this name, or NULL. */
const pbng_node_set *pbng_mesh_find_node_set(const pbng_mesh *mesh, const char *name);

/* Appends n weak constraints (copied). */
PetscErrorCode pbng_mesh_add_weak_constraints(pbng_mesh *mesh, int64_t n, const pbng_weak_constraint *c);

/* A linear tetrahedron's signed rest volume from its corners X[4]; *degenerate is 1 when |V| <= 1e-12 h^3 (h its
 * longest edge) or h = 0: pbng_mesh_validate's test, shared with the parallel slices' (parallel/slice_check.h). */
double pbng_tet4_rest_volume(const double (*X)[3], int *degenerate);

/* Checks every coordinate is finite and every node index in range, and rejects duplicate elements
 * (two elements of one kind on the same node set). Linear tetrahedra: rejects degenerate ones
 * (|V| <= 1e-12 * h^3, h the element's longest edge) and ones inverted against the others (mixed
 * orientation); re-orients a mesh whose tetrahedra all have negative volume (the opposite node-order
 * convention). Sheet kinds (tri3, bend4) beside them do not change that: a mesh whose only volume kind
 * is tet4 has its tetrahedra checked so. Every other kind: rejects an element whose det J is not above
 * 1e-12 d^3 at some quadrature point (inverted or degenerate; the element layer's check, the one
 * pbng_element_precompute applies), and re-orients nothing; the sheet kinds by the element layer's
 * check (pbng_element_sheet_first_degenerate: a triangle with coincident or collinear corners). In a
 * mesh mixing volume kinds every element is checked by its own kind that way (its linear tetrahedra
 * too: no re-orientation). Errors name mesh->source and the element (0-based index, and record_offset
 * + index as the file record). */
PetscErrorCode pbng_mesh_validate(pbng_mesh *mesh, int64_t record_offset);
/* The same checks, errors naming element e's file record as record[e] (a reader whose records are not
 * numbered like the elements, e.g. Gmsh element tags with boundary faces left out between them). */
PetscErrorCode pbng_mesh_validate_records(pbng_mesh *mesh, const int64_t *record);

/* Reads a mesh by file extension: .msh (Gmsh 2.2 / 4.1, ASCII or binary; any volume element kinds, mixed or not,
 * and sheet triangles: a file without volume elements, or a physical group named "sheet...", docs/cloth.md)
 * or .node/.ele (TetGen, 4- or 10-node tetrahedra). Validates it (pbng_mesh_validate). */
PetscErrorCode pbng_mesh_read(const char *path, pbng_mesh *mesh);
PetscErrorCode pbng_mesh_read_gmsh(const char *path, pbng_mesh *mesh);
PetscErrorCode pbng_mesh_read_tetgen(const char *path, pbng_mesh *mesh);

/* Appends the weak constraints of a weak-constraint file (docs/weak_constraints.md) to the mesh;
 * node indices are checked against it. Errors name the file and line. */
PetscErrorCode pbng_mesh_read_weak_constraints(const char *path, pbng_mesh *mesh);
/* The same file a line at a time, for readers of shares of it (io/weak_file_shares.h): a line's data (its comment cut
 * off in place), or NULL for a blank or comment line; the first data line checked as the header; any other data line
 * (lineno: its 1-based line number in path) parsed into c, node indices checked against nnodes. Each returns 1, or 0
 * with the message the whole-file reader gives in msg[len]. pbng_weak_file_not_weak: the message for a file whose
 * first data line is not the header (or that has none). */
char *pbng_weak_line_data(char *line);
int pbng_weak_line_header(const char *path, long lineno, char *data, char *msg, size_t len);
int pbng_weak_line_constraint(const char *path, long lineno, char *data, int64_t nnodes, pbng_weak_constraint *c, char *msg, size_t len);
void pbng_weak_file_not_weak(const char *path, char *msg, size_t len);

#endif
