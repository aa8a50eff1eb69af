#include "parallel/transfer.h"
#include <inttypes.h>
#include <math.h>
#include "parallel/locate.h"

enum { TRANSFER_NOT_COVERED = 1, TRANSFER_ONLY_HELD = 2 };

/* A row's entries: the free nodes' values and weights; weights below 1e-14 in size are dropped.
 * renormalise: scale the kept weights to sum to one (positions), else keep them (corrections). */
static int row_entries(const pbng_point_location *l, int renormalise, PetscInt *col, PetscScalar *val)
{
  int n = 0;
  double sum = 0;
  for (int a = 0; a < l->nodes; ++a)
    if (l->value[a] >= 0 && fabs(l->w[a]) > 1e-14) col[n] = (PetscInt)l->value[a], val[n] = l->w[a], sum += l->w[a], ++n;
  if (renormalise) {
    if (sum < 1e-3) return -1;
    for (int k = 0; k < n; ++k) val[k] /= sum;
  }
  return n;
}

/* The first failed row over all ranks (lowest global node id) and where it is: every rank gets the
 * same problem, global node id and position (collective). */
static PetscErrorCode first_failure(MPI_Comm comm, int64_t mine, const double Xmine[3], int mine_kind, int64_t *gid, double X[3], int *kind)
{
  double in[4] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY}, out[4];

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Allreduce(&mine, gid, 1, MPI_INT64_T, MPI_MIN, comm));
  if (*gid != INT64_MAX && mine == *gid) in[0] = Xmine[0], in[1] = Xmine[1], in[2] = Xmine[2], in[3] = mine_kind;
  PetscCallMPI(MPI_Allreduce(in, out, 4, MPI_DOUBLE, MPI_MAX, comm));
  X[0] = out[0], X[1] = out[1], X[2] = out[2], *kind = (int)out[3];
  PetscFunctionReturn(0);
}

/* The matrix rows, width entries each at most (the most weights one location gives: 4 for linear
 * tetrahedra, 8 for hexahedra, 27 for hex27). */
typedef struct {
  int width;
  PetscInt *col;    /* [m][width] */
  PetscScalar *val; /* [m][width] */
  int *n;           /* [m]: entries, or -2 (no element within the radius) / -1 (only prescribed nodes) */
} row_table;

static PetscErrorCode row_table_destroy(row_table *rows)
{
  PetscFunctionBeginUser;
  PetscCall(PetscFree3(rows->col, rows->val, rows->n));
  PetscFunctionReturn(0);
}

/* rows for every owned free node of `rows_mesh`, its rest position located in `cols` by rounds of at
 * most PBNG_LOCATE_CHUNK points per rank (collective). */
static PetscErrorCode locate_rows(const pbng_dmesh *rows_mesh, const pbng_dmesh *cols, const pbng_dof_map *cmap, double radius,
                                  pbng_locate_weights weights, int renormalise, row_table *rows)
{
  const int64_t m = rows_mesh->nfree;
  pbng_locator *locator;
  pbng_point_location *loc;
  int64_t rounds, mine = (m + PBNG_LOCATE_CHUNK - 1) / PBNG_LOCATE_CHUNK;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Allreduce(&mine, &rounds, 1, MPI_INT64_T, MPI_MAX, rows_mesh->comm));
  PetscCall(pbng_locator_create(cols, cmap->node_dof, radius, weights, &locator));
  const int w = rows->width = pbng_locator_width(locator);
  PetscCall(PetscMalloc3((size_t)m * w + 1, &rows->col, (size_t)m * w + 1, &rows->val, m + 1, &rows->n));
  PetscCall(PetscMalloc1(PBNG_LOCATE_CHUNK, &loc));
  for (int64_t k = 0; k < rounds; ++k) {
    const int64_t first = k * PBNG_LOCATE_CHUNK, n = first < m ? (m - first < PBNG_LOCATE_CHUNK ? m - first : PBNG_LOCATE_CHUNK) : 0;
    PetscCall(pbng_locator_find(locator, n, rows_mesh->X + 3 * first, loc));
    for (int64_t i = first; i < first + n; ++i)
      rows->n[i] = loc[i - first].elem < 0 ? -2 : row_entries(&loc[i - first], renormalise, &rows->col[w * i], &rows->val[w * i]);
  }
  PetscCall(PetscFree(loc));
  PetscCall(pbng_locator_destroy(&locator));
  PetscFunctionReturn(0);
}

/* One scalar matrix: a row per owned free node of `rows_mesh` (its rest position located in `cols`,
 * with the weights asked for). */
static PetscErrorCode build(const pbng_dmesh *rows_mesh, const pbng_dof_map *rmap, const pbng_dmesh *cols, const pbng_dof_map *cmap, double radius,
                            pbng_locate_weights weights, int renormalise, Mat *A, int64_t *failed_gid, double failed_X[3], int *failed_kind)
{
  const int32_t m = rows_mesh->nfree;
  row_table rows;
  PetscInt *dnz, *onz, ncols_local = cols->nfree;
  const int64_t cfirst = cmap->first;

  PetscFunctionBeginUser;
  *failed_gid = INT64_MAX, *failed_kind = 0;
  failed_X[0] = failed_X[1] = failed_X[2] = 0;
  PetscCall(locate_rows(rows_mesh, cols, cmap, radius, weights, renormalise, &rows));
  PetscCall(PetscCalloc2(m + 1, &dnz, m + 1, &onz));
  for (int32_t i = 0; i < m; ++i) {
    const PetscInt *col = &rows.col[(int64_t)rows.width * i];
    if (rows.n[i] < 0) {
      if (rows_mesh->global_node[i] < *failed_gid) {
        *failed_gid = rows_mesh->global_node[i], *failed_kind = rows.n[i] == -2 ? TRANSFER_NOT_COVERED : TRANSFER_ONLY_HELD;
        for (int k = 0; k < 3; ++k) failed_X[k] = rows_mesh->X[3 * i + k];
      }
      continue;
    }
    for (int k = 0; k < rows.n[i]; ++k) (col[k] >= cfirst && col[k] < cfirst + ncols_local) ? dnz[i]++ : onz[i]++;
  }
  int64_t gid = INT64_MAX;
  double X[3] = {0, 0, 0};
  int kind = 0;
  PetscCall(first_failure(rows_mesh->comm, *failed_gid, failed_X, *failed_kind, &gid, X, &kind));
  *failed_gid = gid, *failed_kind = kind;
  for (int k = 0; k < 3; ++k) failed_X[k] = X[k];
  if (gid == INT64_MAX) {
    PetscCall(MatCreateAIJ(rows_mesh->comm, m, ncols_local, rmap->nglobal, cmap->nglobal, 0, dnz, 0, onz, A));
    PetscCall(MatSetOption(*A, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_TRUE));
    for (int32_t i = 0; i < m; ++i) {
      const PetscInt r = (PetscInt)(rmap->first + i);
      PetscCall(MatSetValues(*A, 1, &r, rows.n[i], &rows.col[(int64_t)rows.width * i], &rows.val[(int64_t)rows.width * i], INSERT_VALUES));
    }
    PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
    PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  }
  PetscCall(PetscFree2(dnz, onz));
  PetscCall(row_table_destroy(&rows));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_transfer_create(const pbng_dmesh *fine, const pbng_dof_map *fmap, const char *fine_name, const pbng_dmesh *coarse,
                                    const pbng_dof_map *cmap, const char *coarse_name, double radius, Mat *P, Mat *Q)
{
  int64_t gid;
  double X[3] = {0, 0, 0};
  int kind = 0;

  PetscFunctionBeginUser;
  *P = *Q = NULL;
  PetscCall(build(fine, fmap, coarse, cmap, radius, PBNG_LOCATE_SHAPE, 0, P, &gid, X, &kind));
  PetscCheck(gid == INT64_MAX, fine->comm, PETSC_ERR_ARG_WRONG,
             "%s does not cover %s: its node %" PRId64 " (0-based) at (%g, %g, %g) lies farther than %g times the nearest element's size from it",
             coarse_name, fine_name, gid, X[0], X[1], X[2], radius);
  PetscCall(build(coarse, cmap, fine, fmap, radius, PBNG_LOCATE_CORNERS, 1, Q, &gid, X, &kind));
  if (gid != INT64_MAX) PetscCall(MatDestroy(P));
  PetscCheck(gid == INT64_MAX || kind != TRANSFER_NOT_COVERED, fine->comm, PETSC_ERR_ARG_WRONG,
             "%s does not cover %s: its free node %" PRId64 " (0-based) at (%g, %g, %g) lies farther than %g times the nearest element's size from it",
             fine_name, coarse_name, gid, X[0], X[1], X[2], radius);
  PetscCheck(gid == INT64_MAX, fine->comm, PETSC_ERR_ARG_WRONG,
             "%s: its free node %" PRId64 " (0-based) at (%g, %g, %g) lies among prescribed nodes of %s only: the two levels' boundary sets disagree there",
             coarse_name, gid, X[0], X[1], X[2], fine_name);
  PetscFunctionReturn(0);
}
