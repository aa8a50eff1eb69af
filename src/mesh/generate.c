#include "mesh/generate.h"
#include <math.h>
#include <stdio.h>
#include "core/element.h"

/* The 5-tetrahedron split of a cube with corners numbered by bits (dx, dy, dz) = (1, 2, 4).
 * Even cells: a central tetrahedron on corners {0,3,5,6} and one corner tetrahedron at each of the
 * other corners {1,2,4,7} with its three edge neighbours. Odd cells use the mirror split, so that
 * the face diagonals of neighbouring cells coincide. Every tetrahedron is listed with positive volume. */
static const int split_even[5][4] = {{0, 3, 6, 5}, {1, 0, 5, 3}, {2, 0, 3, 6}, {4, 0, 6, 5}, {7, 3, 5, 6}};
static const int split_odd[5][4] = {{1, 2, 4, 7}, {0, 1, 2, 4}, {3, 1, 7, 2}, {5, 1, 4, 7}, {6, 2, 7, 4}};

/* The 6-tetrahedron ("biased") split: the cube cut into two prisms by the plane through its diagonal
 * 0-7 and the face diagonals 0-3 / 4-7, each prism into three tetrahedra (the Kuhn split: one
 * tetrahedron per order of the axes on the path 0 -> 7). The same in every cell, so conforming. */
static const int split_six[6][4] = {{0, 1, 3, 7}, {0, 1, 5, 7}, {0, 2, 3, 7}, {0, 2, 6, 7}, {0, 4, 5, 7}, {0, 4, 6, 7}};

/* The corner tetrahedra of cell (i, j, k) under the split, each as 4 corner numbers (bits dx, dy, dz)
 * with positive volume; returns how many. */
static int cell_tets(pbng_tet_split split, int64_t i, int64_t j, int64_t k, int tets[6][4])
{
  const int(*table)[4] = split == PBNG_TET_SPLIT_SIX ? split_six : ((i + j + k) % 2 == 0) ? split_even : split_odd;
  const int n = split == PBNG_TET_SPLIT_SIX ? 6 : 5;
  for (int e = 0; e < n; ++e) {
    double X[4][3];
    for (int a = 0; a < 4; ++a) {
      tets[e][a] = table[e][a];
      for (int d = 0; d < 3; ++d) X[a][d] = (table[e][a] >> d) & 1;
    }
    if (pbng_tet_signed_volume(X[0], X[1], X[2], X[3]) < 0) { /* list it positively */
      const int tmp = tets[e][2];
      tets[e][2] = tets[e][3], tets[e][3] = tmp;
    }
  }
  return n;
}

/* Position in the unit cell [0,1]^3 of element node a: hexahedra map their reference cube [-1,1]^3
 * onto the cell; tetrahedra interpolate their corners (cell corners `corner`) with the barycentric
 * coordinates of the reference node. */
static void node_in_cell(const pbng_element_type *t, int a, const int corner[4], double u[3])
{
  const double *r = t->ref_nodes[a];
  if (t->shape == PBNG_SHAPE_HEXAHEDRON) {
    for (int d = 0; d < 3; ++d) u[d] = 0.5 * (r[d] + 1.0);
    return;
  }
  const double lambda[4] = {1.0 - r[0] - r[1] - r[2], r[0], r[1], r[2]};
  for (int d = 0; d < 3; ++d) {
    u[d] = 0.0;
    for (int c = 0; c < 4; ++c) u[d] += lambda[c] * ((corner[c] >> d) & 1);
  }
}

/* Every Lagrange node of order p of a cell's hexahedron or of the tetrahedra of its split lies on the
 * p-times refined grid (its coordinates in the cell are multiples of 1/p): the index of that point. */
static int64_t fine_grid_index(const int64_t m[3], int p, const int64_t cell[3], const double u[3])
{
  int64_t g[3];
  for (int d = 0; d < 3; ++d) g[d] = p * cell[d] + (int64_t)llround(p * u[d]);
  return g[0] + m[0] * (g[1] + m[1] * g[2]);
}

int pbng_grid_elements_per_cell(const pbng_grid_elements *el)
{
  const pbng_element_type *t = pbng_element_type_get(el->kind);
  return t->shape == PBNG_SHAPE_HEXAHEDRON ? 1 : el->split == PBNG_TET_SPLIT_SIX ? 6 : 5;
}

void pbng_grid_fine_dims(const int64_t n[3], const pbng_grid_elements *el, int64_t m[3])
{
  const int p = pbng_element_type_get(el->kind)->order;
  for (int d = 0; d < 3; ++d) m[d] = p * (n[d] - 1) + 1;
}

int pbng_grid_cell_elements(const pbng_grid_elements *el, const int64_t n[3], int64_t cell, int64_t *nodes)
{
  const pbng_element_type *t = pbng_element_type_get(el->kind);
  const int64_t c[3] = {cell % (n[0] - 1), (cell / (n[0] - 1)) % (n[1] - 1), cell / ((n[0] - 1) * (n[1] - 1))};
  int64_t m[3];
  int tets[6][4], count = 1;
  pbng_grid_fine_dims(n, el, m);
  if (t->shape == PBNG_SHAPE_TETRAHEDRON) count = cell_tets(el->split, c[0], c[1], c[2], tets);
  for (int e = 0; e < count; ++e)
    for (int a = 0; a < t->nodes; ++a) {
      double u[3];
      node_in_cell(t, a, tets[e], u);
      nodes[(int64_t)t->nodes * e + a] = fine_grid_index(m, t->order, c, u);
    }
  return count;
}

void pbng_grid_point(const int64_t m[3], const double lo[3], const double hi[3], int64_t g, double X[3])
{
  const int64_t ijk[3] = {g % m[0], (g / m[0]) % m[1], g / (m[0] * m[1])};
  for (int d = 0; d < 3; ++d) X[d] = lo[d] + (hi[d] - lo[d]) * (double)ijk[d] / (double)(m[d] - 1);
}

/* Renumbers the fine-grid nodes the elements use, in grid order (a P2 tetrahedral split leaves
 * some cell centres unused), and writes positions and connectivity. */
static PetscErrorCode compact_fine_grid(const int64_t m[3], const double lo[3], const double hi[3], pbng_element_kind kind, int64_t nelems,
                                        const int64_t *nodes, pbng_mesh *mesh)
{
  const int nen = pbng_element_type_get(kind)->nodes;
  const int64_t ngrid = m[0] * m[1] * m[2];
  int64_t *id, nnodes = 0;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(ngrid, &id));
  for (int64_t g = 0; g < ngrid; ++g) id[g] = -1;
  for (int64_t k = 0; k < nen * nelems; ++k) id[nodes[k]] = 0;
  for (int64_t g = 0; g < ngrid; ++g)
    if (id[g] == 0) id[g] = nnodes++;
  PetscCheck(nnodes < INT32_MAX, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "grid mesh: %" PRId64 " nodes (at most 2^31 - 1)", nnodes);
  PetscCall(pbng_mesh_alloc(mesh, kind, nnodes, nelems));
  for (int64_t g = 0; g < ngrid; ++g)
    if (id[g] >= 0) pbng_grid_point(m, lo, hi, g, &mesh->X[3 * id[g]]);
  for (int64_t k = 0; k < nen * nelems; ++k) mesh->elems[k] = (int32_t)id[nodes[k]];
  PetscCall(PetscFree(id));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_generate_grid(const int64_t n[3], const double lo[3], const double hi[3], const pbng_grid_elements *el, pbng_mesh *mesh)
{
  const pbng_element_type *t = pbng_element_type_get(el->kind);
  int64_t m[3], *nodes;

  PetscFunctionBeginUser;
  PetscCheck(t->shape == PBNG_SHAPE_TETRAHEDRON || t->shape == PBNG_SHAPE_HEXAHEDRON, PETSC_COMM_SELF, PETSC_ERR_SUP,
             "grid mesh: %s elements are not generated (tetrahedra and hexahedra are)", t->name);
  for (int d = 0; d < 3; ++d) {
    PetscCheck(n[d] >= 2 && n[d] <= 4096, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE,
               "box mesh: %" PRId64 " vertices along axis %d (need 2..4096)", n[d], d);
    PetscCheck(hi[d] > lo[d], PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "box mesh: empty extent along axis %d", d);
    m[d] = t->order * (n[d] - 1) + 1;
  }
  const int per_cell = pbng_grid_elements_per_cell(el);
  const int64_t ncells = (n[0] - 1) * (n[1] - 1) * (n[2] - 1), nelems = per_cell * ncells;
  PetscCheck(nelems < INT32_MAX && m[0] * m[1] * m[2] < INT32_MAX, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE,
             "box mesh: %" PRId64 " elements on a grid of %" PRId64 " points (at most 2^31 - 1 each)", nelems, m[0] * m[1] * m[2]);
  PetscCall(PetscMalloc1((size_t)nelems * t->nodes, &nodes));
  for (int64_t c = 0, e = 0; c < ncells; ++c) e += pbng_grid_cell_elements(el, n, c, &nodes[(int64_t)t->nodes * e]);
  PetscCall(compact_fine_grid(m, lo, hi, el->kind, nelems, nodes, mesh));
  PetscCall(PetscFree(nodes));
  snprintf(mesh->source, sizeof(mesh->source), "box %" PRId64 "x%" PRId64 "x%" PRId64 " (%s%s)", n[0], n[1], n[2], t->name,
           t->shape == PBNG_SHAPE_TETRAHEDRON ? (el->split == PBNG_TET_SPLIT_SIX ? ", six per cell" : ", five per cell") : "");
  PetscCall(pbng_mesh_validate(mesh, 0));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_generate_box(const int64_t n[3], const double lo[3], const double hi[3], pbng_mesh *mesh)
{
  const pbng_grid_elements tet4 = {PBNG_ELEMENT_TET4, PBNG_TET_SPLIT_FIVE};

  PetscFunctionBeginUser;
  PetscCall(pbng_generate_grid(n, lo, hi, &tet4, mesh));
  snprintf(mesh->source, sizeof(mesh->source), "box %" PRId64 "x%" PRId64 "x%" PRId64, n[0], n[1], n[2]);
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_generate_res_box(int res, const pbng_grid_elements *el, pbng_mesh *mesh)
{
  const int64_t n[3] = {res, res, res};
  const double lo[3] = {0, 0, 0}, hi[3] = {1, 1, 1};
  const pbng_grid_elements tet4 = {PBNG_ELEMENT_TET4, PBNG_TET_SPLIT_FIVE};

  PetscFunctionBeginUser;
  PetscCall(pbng_generate_grid(n, lo, hi, el ? el : &tet4, mesh));
  snprintf(mesh->source, sizeof(mesh->source), "Res-%d box", res);
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_generate_bar(int res, double length, const pbng_grid_elements *el, pbng_mesh *mesh)
{
  const int64_t along = (int64_t)llround(length * (res - 1));
  const int64_t n[3] = {along > 0 ? along + 1 : 2, res, res};
  const double lo[3] = {0, 0, 0}, hi[3] = {length, 1, 1};
  const pbng_grid_elements tet4 = {PBNG_ELEMENT_TET4, PBNG_TET_SPLIT_FIVE};

  PetscFunctionBeginUser;
  PetscCall(pbng_generate_grid(n, lo, hi, el ? el : &tet4, mesh));
  snprintf(mesh->source, sizeof(mesh->source), "bar (res %d)", res);
  PetscFunctionReturn(0);
}

void pbng_stacked_blocks_boxes(int res, double gap, double lo[2][3], double hi[2][3])
{
  const double h = gap > 0 ? gap : 1.0 / (res - 1);
  const double box[2][2][3] = {{{0, 0, 0}, {1, 1, 1}}, {{0, 1 + h, 0}, {1, 2 + h, 1}}};
  for (int b = 0; b < 2; ++b)
    for (int d = 0; d < 3; ++d) lo[b][d] = box[b][0][d], hi[b][d] = box[b][1][d];
}

const char *pbng_stacked_blocks_binding(int res, int64_t n, double k, pbng_weak_constraint *c)
{
  const double one = 1.0;
  const int64_t i = n % res, kz = n / res, nlower = (int64_t)res * res * res;
  const int64_t lower = i + res * ((res - 1) + res * kz), upper = nlower + i + res * (0 + res * kz);
  return pbng_weak_constraint_init(1, &lower, &one, 1, &upper, &one, k, k, NULL, c);
}

int pbng_stacked_blocks_node_in_set(int res, int64_t id, int set)
{
  const int64_t nlower = (int64_t)res * res * res, local = id % nlower;
  const int upper = id >= nlower;
  if (set == 0) return !upper;
  if (set == 1) return upper;
  return upper && (local / res) % res == res - 1; /* the upper block's top face y = 2 + gap */
}

const char *const pbng_stacked_blocks_sets[3] = {"lower_block", "upper_block", "upper_top"};

/* Binds node (i, res-1, k) of the lower block to node (i, 0, k) of the upper one. */
static PetscErrorCode bind_facing_faces(int res, double k, pbng_mesh *mesh)
{
  pbng_weak_constraint *c;
  const int64_t n = (int64_t)res * res;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(n, &c));
  for (int64_t q = 0; q < n; ++q) {
    const char *err = pbng_stacked_blocks_binding(res, q, k, &c[q]);
    PetscCheck(!err, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "stacked blocks: %s", err);
  }
  PetscCall(pbng_mesh_add_weak_constraints(mesh, n, c));
  PetscCall(PetscFree(c));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_generate_stacked_blocks(int res, double gap, double stiffness, pbng_mesh *mesh)
{
  pbng_mesh lower, upper;
  const int64_t n[3] = {res, res, res};
  double lo[2][3], hi[2][3];
  int32_t *ids;

  PetscFunctionBeginUser;
  pbng_stacked_blocks_boxes(res, gap, lo, hi);
  PetscCall(pbng_generate_box(n, lo[0], hi[0], &lower));
  PetscCall(pbng_generate_box(n, lo[1], hi[1], &upper));
  PetscCall(pbng_mesh_alloc(mesh, PBNG_ELEMENT_TET4, 2 * lower.nnodes, 2 * lower.nelems));
  PetscCall(PetscArraycpy(mesh->X, lower.X, 3 * lower.nnodes));
  PetscCall(PetscArraycpy(mesh->X + 3 * lower.nnodes, upper.X, 3 * upper.nnodes));
  PetscCall(PetscArraycpy(mesh->elems, lower.elems, 4 * lower.nelems));
  for (int64_t k = 0; k < 4 * upper.nelems; ++k)
    mesh->elems[4 * lower.nelems + k] = upper.elems[k] + (int32_t)lower.nnodes;
  PetscCall(PetscMalloc1(mesh->nnodes, &ids));
  for (int set = 0; set < 3; ++set) {
    int64_t count = 0;
    for (int64_t i = 0; i < mesh->nnodes; ++i)
      if (pbng_stacked_blocks_node_in_set(res, i, set)) ids[count++] = (int32_t)i;
    PetscCall(pbng_mesh_add_node_set(mesh, pbng_stacked_blocks_sets[set], count, ids));
  }
  PetscCall(PetscFree(ids));
  if (stiffness > 0) PetscCall(bind_facing_faces(res, stiffness, mesh));
  PetscCall(pbng_mesh_destroy(&lower));
  PetscCall(pbng_mesh_destroy(&upper));
  snprintf(mesh->source, sizeof(mesh->source), "stacked blocks (res %d)", res);
  PetscFunctionReturn(0);
}
