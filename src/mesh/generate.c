#include "mesh/generate.h"
#include <math.h>
#include <stdio.h>

/* The 5-tetrahedron split of a cube with corners numbered by bits (dx, dy, dz) = (1, 2, 4).
 * Even cells: a central tetrahedron on corners {0,3,5,6} and one corner tetrahedron at each of the
 * other corners {1,2,4,7} with its three edge neighbours. Odd cells use the mirror split, so that
 * the face diagonals of neighbouring cells coincide. Every tetrahedron is listed with positive volume. */
static const int split_even[5][4] = {{0, 3, 6, 5}, {1, 0, 5, 3}, {2, 0, 3, 6}, {4, 0, 6, 5}, {7, 3, 5, 6}};
static const int split_odd[5][4] = {{1, 2, 4, 7}, {0, 1, 2, 4}, {3, 1, 7, 2}, {5, 1, 4, 7}, {6, 2, 7, 4}};

static void box_vertices(const int64_t n[3], const double lo[3], const double hi[3], double *X)
{
  for (int64_t k = 0; k < n[2]; ++k)
    for (int64_t j = 0; j < n[1]; ++j)
      for (int64_t i = 0; i < n[0]; ++i) {
        const int64_t v = i + n[0] * (j + n[1] * k);
        const int64_t ijk[3] = {i, j, k};
        for (int d = 0; d < 3; ++d) X[3 * v + d] = lo[d] + (hi[d] - lo[d]) * (double)ijk[d] / (double)(n[d] - 1);
      }
}

static void box_cell_tets(const int64_t n[3], int64_t i, int64_t j, int64_t k, int32_t *t)
{
  int32_t corner[8];
  for (int c = 0; c < 8; ++c)
    corner[c] = (int32_t)((i + (c & 1)) + n[0] * ((j + ((c >> 1) & 1)) + n[1] * (k + ((c >> 2) & 1))));
  const int(*split)[4] = ((i + j + k) % 2 == 0) ? split_even : split_odd;
  for (int e = 0; e < 5; ++e)
    for (int a = 0; a < 4; ++a) t[4 * e + a] = corner[split[e][a]];
}

static void box_tets(const int64_t n[3], int32_t *elems)
{
  int64_t cell = 0;
  for (int64_t k = 0; k + 1 < n[2]; ++k)
    for (int64_t j = 0; j + 1 < n[1]; ++j)
      for (int64_t i = 0; i + 1 < n[0]; ++i, ++cell) box_cell_tets(n, i, j, k, &elems[20 * cell]);
}

PetscErrorCode pbng_generate_box(const int64_t n[3], const double lo[3], const double hi[3], pbng_mesh *mesh)
{
  PetscFunctionBeginUser;
  for (int d = 0; d < 3; ++d) {
    PetscCheck(n[d] >= 2 && n[d] <= 4096, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE,
               "box mesh: %" PRId64 " vertices along axis %d (need 2..4096)", n[d], d);
    PetscCheck(hi[d] > lo[d], PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "box mesh: empty extent along axis %d", d);
  }
  const int64_t nnodes = n[0] * n[1] * n[2];
  const int64_t nelems = 5 * (n[0] - 1) * (n[1] - 1) * (n[2] - 1);
  PetscCall(pbng_mesh_alloc(mesh, PBNG_ELEMENT_TET4, nnodes, nelems));
  box_vertices(n, lo, hi, mesh->X);
  box_tets(n, mesh->elems);
  snprintf(mesh->source, sizeof(mesh->source), "box %" PRId64 "x%" PRId64 "x%" PRId64, n[0], n[1], n[2]);
  PetscCall(pbng_mesh_validate(mesh, 0));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_generate_res_box(int res, pbng_mesh *mesh)
{
  const int64_t n[3] = {res, res, res};
  const double lo[3] = {0, 0, 0}, hi[3] = {1, 1, 1};

  PetscFunctionBeginUser;
  PetscCall(pbng_generate_box(n, lo, hi, mesh));
  snprintf(mesh->source, sizeof(mesh->source), "Res-%d box", res);
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_generate_bar(int res, double length, pbng_mesh *mesh)
{
  const int64_t along = (int64_t)llround(length * (res - 1));
  const int64_t n[3] = {along > 0 ? along + 1 : 2, res, res};
  const double lo[3] = {0, 0, 0}, hi[3] = {length, 1, 1};

  PetscFunctionBeginUser;
  PetscCall(pbng_generate_box(n, lo, hi, mesh));
  snprintf(mesh->source, sizeof(mesh->source), "bar (res %d)", res);
  PetscFunctionReturn(0);
}

/* Binds node (i, res-1, k) of the lower block to node (i, 0, k) of the upper one (offset nlower). */
static PetscErrorCode bind_facing_faces(int res, int64_t nlower, double k, pbng_mesh *mesh)
{
  pbng_weak_constraint *c;
  const double one = 1.0;
  int64_t n = 0;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1((size_t)res * res, &c));
  for (int64_t kz = 0; kz < res; ++kz)
    for (int64_t i = 0; i < res; ++i, ++n) {
      const int64_t lower = i + res * ((res - 1) + res * kz), upper = nlower + i + res * (0 + res * kz);
      const char *err = pbng_weak_constraint_init(1, &lower, &one, 1, &upper, &one, k, k, NULL, &c[n]);
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
  const double h = gap > 0 ? gap : 1.0 / (res - 1);
  const double lo0[3] = {0, 0, 0}, hi0[3] = {1, 1, 1};
  const double lo1[3] = {0, 1 + h, 0}, hi1[3] = {1, 2 + h, 1};
  int32_t *ids;

  PetscFunctionBeginUser;
  PetscCall(pbng_generate_box(n, lo0, hi0, &lower));
  PetscCall(pbng_generate_box(n, lo1, hi1, &upper));
  PetscCall(pbng_mesh_alloc(mesh, PBNG_ELEMENT_TET4, 2 * lower.nnodes, 2 * lower.nelems));
  PetscCall(PetscArraycpy(mesh->X, lower.X, 3 * lower.nnodes));
  PetscCall(PetscArraycpy(mesh->X + 3 * lower.nnodes, upper.X, 3 * upper.nnodes));
  PetscCall(PetscArraycpy(mesh->elems, lower.elems, 4 * lower.nelems));
  for (int64_t k = 0; k < 4 * upper.nelems; ++k)
    mesh->elems[4 * lower.nelems + k] = upper.elems[k] + (int32_t)lower.nnodes;
  PetscCall(PetscMalloc1(lower.nnodes, &ids));
  for (int64_t i = 0; i < lower.nnodes; ++i) ids[i] = (int32_t)i;
  PetscCall(pbng_mesh_add_node_set(mesh, "lower_block", lower.nnodes, ids));
  for (int64_t i = 0; i < lower.nnodes; ++i) ids[i] = (int32_t)(i + lower.nnodes);
  PetscCall(pbng_mesh_add_node_set(mesh, "upper_block", lower.nnodes, ids));
  for (int64_t kz = 0, n = 0; kz < res; ++kz) /* the upper block's top face y = 2 + gap */
    for (int64_t i = 0; i < res; ++i) ids[n++] = (int32_t)(lower.nnodes + i + res * ((res - 1) + res * kz));
  PetscCall(pbng_mesh_add_node_set(mesh, "upper_top", (int64_t)res * res, ids));
  PetscCall(PetscFree(ids));
  if (stiffness > 0) PetscCall(bind_facing_faces(res, lower.nnodes, stiffness, mesh));
  PetscCall(pbng_mesh_destroy(&lower));
  PetscCall(pbng_mesh_destroy(&upper));
  snprintf(mesh->source, sizeof(mesh->source), "stacked blocks (res %d)", res);
  PetscFunctionReturn(0);
}
