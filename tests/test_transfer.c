/* Transfer operators between non-nested levels (src/parallel/transfer.c, src/parallel/locate.c), on
 * any number of ranks (ctest runs 1; test_multilevel.sh runs 3): the interpolation P reproduces a
 * linear field exactly at every free fine node, for generated boxes of different resolutions and for
 * an unstructured Gmsh cube against a box; the injection Q does the same at every free coarse node;
 * with a clamped face, prescribed nodes get no row and no column, and rows next to the clamp lose
 * exactly the clamped vertices' weights; a coarse mesh that does not cover the fine one is an error. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "core/locate.h"
#include "mesh/boundary.h"
#include "mesh/generate.h"
#include "parallel/partition.h"
#include "parallel/transfer.h"
#include "test_common.h"

static int checks, failures;

static void check(int ok, const char *what)
{
  ++checks;
  if (!ok && failures++ < 20) printf("FAIL: %s\n", what);
}

typedef struct {
  pbng_dmesh dm;
  pbng_halo halo;
  pbng_dof_map map;
} level;

static PetscErrorCode build(MPI_Comm comm, pbng_mesh *mesh, const pbng_bc_list *bcs, level *lv)
{
  PetscFunctionBeginUser;
  PetscCall(test_build_subdomain(comm, mesh, bcs, &lv->dm, &lv->halo));
  PetscCall(pbng_dof_map_create(&lv->dm, &lv->halo, &lv->map));
  PetscFunctionReturn(0);
}

static PetscErrorCode destroy(level *lv)
{
  PetscFunctionBeginUser;
  PetscCall(pbng_dof_map_destroy(&lv->map));
  PetscCall(pbng_halo_destroy(&lv->halo));
  PetscCall(pbng_dmesh_destroy(&lv->dm));
  PetscFunctionReturn(0);
}

/* A linear field u(X) = 0.3 + 1.7 x - 0.6 y + 2.1 z at the owned free nodes, as a Vec. */
static double linear(const double X[3]) { return 0.3 + 1.7 * X[0] - 0.6 * X[1] + 2.1 * X[2]; }

static PetscErrorCode linear_vec(const level *lv, Mat A, PetscBool left, Vec *v)
{
  PetscScalar *a;

  PetscFunctionBeginUser;
  PetscCall(left ? MatCreateVecs(A, NULL, v) : MatCreateVecs(A, v, NULL));
  PetscCall(VecGetArray(*v, &a));
  for (int32_t i = 0; i < lv->dm.nfree; ++i) a[i] = linear(&lv->dm.X[3 * i]);
  PetscCall(VecRestoreArray(*v, &a));
  PetscFunctionReturn(0);
}

/* max |(A u_from) - u_to| over the rows whose weights sum to one (all rows when no node is held). */
static PetscErrorCode linear_error(Mat A, const level *from, const level *to, double *err, int *rows_checked)
{
  Vec u, Au, want, ones, sums;
  const PetscScalar *au, *w, *s;
  double mine = 0;
  int n = 0;

  PetscFunctionBeginUser;
  PetscCall(linear_vec(from, A, PETSC_FALSE, &u));
  PetscCall(linear_vec(to, A, PETSC_TRUE, &want));
  PetscCall(VecDuplicate(want, &Au));
  PetscCall(VecDuplicate(want, &sums));
  PetscCall(VecDuplicate(u, &ones));
  PetscCall(VecSet(ones, 1.0));
  PetscCall(MatMult(A, u, Au));
  PetscCall(MatMult(A, ones, sums));
  PetscCall(VecGetArrayRead(Au, &au));
  PetscCall(VecGetArrayRead(want, &w));
  PetscCall(VecGetArrayRead(sums, &s));
  for (int32_t i = 0; i < to->dm.nfree; ++i)
    if (fabs(s[i] - 1.0) < 1e-12) mine = fmax(mine, fabs(au[i] - w[i])), ++n;
  PetscCall(VecRestoreArrayRead(Au, &au));
  PetscCall(VecRestoreArrayRead(want, &w));
  PetscCall(VecRestoreArrayRead(sums, &s));
  PetscCallMPI(MPI_Allreduce(&mine, err, 1, MPI_DOUBLE, MPI_MAX, to->dm.comm));
  PetscCallMPI(MPI_Allreduce(&n, rows_checked, 1, MPI_INT, MPI_SUM, to->dm.comm));
  PetscCall(VecDestroy(&u));
  PetscCall(VecDestroy(&Au));
  PetscCall(VecDestroy(&want));
  PetscCall(VecDestroy(&ones));
  PetscCall(VecDestroy(&sums));
  PetscFunctionReturn(0);
}

static PetscErrorCode check_pair(MPI_Comm comm, const char *what, pbng_mesh *fine_mesh, pbng_mesh *coarse_mesh, const pbng_bc_list *bcs,
                                 int expect_all_rows)
{
  level fine, coarse;
  Mat P, Q;
  double err;
  int rows;
  char msg[256];

  PetscFunctionBeginUser;
  PetscCall(build(comm, fine_mesh, bcs, &fine));
  PetscCall(build(comm, coarse_mesh, bcs, &coarse));
  PetscCall(pbng_transfer_create(&fine.dm, &fine.map, "fine", &coarse.dm, &coarse.map, "coarse", PBNG_TRANSFER_RADIUS, &P, &Q));
  PetscCall(linear_error(P, &coarse, &fine, &err, &rows));
  snprintf(msg, sizeof(msg), "%s: interpolation reproduces a linear field (error %.3e on %d rows of %d)", what, err, rows, (int)fine.map.nglobal);
  check(err < 1e-12 && rows > 0 && (!expect_all_rows || rows == fine.map.nglobal), msg);
  PetscCall(linear_error(Q, &fine, &coarse, &err, &rows));
  snprintf(msg, sizeof(msg), "%s: injection reproduces a linear field (error %.3e on %d rows of %d)", what, err, rows, (int)coarse.map.nglobal);
  check(err < 1e-12 && rows > 0 && (!expect_all_rows || rows == coarse.map.nglobal), msg);
  PetscInt M, N;
  PetscCall(MatGetSize(P, &M, &N));
  check(M == fine.map.nglobal && N == coarse.map.nglobal, "P: one row per free fine node, one column per free coarse node");
  PetscCall(MatDestroy(&P));
  PetscCall(MatDestroy(&Q));
  PetscCall(destroy(&fine));
  PetscCall(destroy(&coarse));
  PetscFunctionReturn(0);
}

/* With x = 0 clamped: a fine row whose coarse element has clamped vertices sums to exactly the free
 * vertices' barycentric weights (checked against the geometry), so the clamped nodes contribute no
 * correction; the clamped nodes themselves have neither rows nor columns (sizes above). */
static PetscErrorCode check_clamped_rows(MPI_Comm comm, const pbng_bc_list *bcs)
{
  pbng_mesh fm, cm;
  level fine, coarse;
  Mat P, Q;
  int deficient = 0, total;

  PetscFunctionBeginUser;
  PetscCall(pbng_generate_res_box(9, NULL, &fm));
  PetscCall(pbng_generate_res_box(5, NULL, &cm));
  PetscCall(build(comm, &fm, bcs, &fine));
  PetscCall(build(comm, &cm, bcs, &coarse));
  PetscCall(pbng_transfer_create(&fine.dm, &fine.map, "fine", &coarse.dm, &coarse.map, "coarse", PBNG_TRANSFER_RADIUS, &P, &Q));
  for (int32_t i = 0; i < fine.dm.nfree; ++i) {
    const PetscInt row = (PetscInt)(fine.map.first + i);
    PetscInt ncols;
    const PetscScalar *vals;
    double sum = 0;
    PetscCall(MatGetRow(P, row, &ncols, NULL, &vals));
    for (PetscInt k = 0; k < ncols; ++k) sum += vals[k];
    PetscCall(MatRestoreRow(P, row, &ncols, NULL, &vals));
    /* coarse spacing 1/4: the free coarse vertices around x carry weight min(1, 4x) of the linear hat
     * from x = 0 (the clamped plane) */
    const double x = fine.dm.X[3 * i], expect = fmin(1.0, 4.0 * x);
    check(fabs(sum - expect) < 1e-12, "clamped: a row's weights sum to the free vertices' share");
    deficient += sum < 1 - 1e-12;
  }
  PetscCallMPI(MPI_Allreduce(&deficient, &total, 1, MPI_INT, MPI_SUM, comm));
  check(total == 81, "clamped: exactly the fine nodes with 0 < x < 1/4 (one plane of 9 x 9) lose weight");
  PetscCall(MatDestroy(&P));
  PetscCall(MatDestroy(&Q));
  PetscCall(destroy(&fine));
  PetscCall(destroy(&coarse));
  PetscFunctionReturn(0);
}

/* A coarse mesh covering only half the fine one: an error naming the problem, on every rank. */
static PetscErrorCode check_not_covered(MPI_Comm comm, const pbng_bc_list *bcs)
{
  pbng_mesh fm, cm;
  level fine, coarse;
  Mat P = NULL, Q = NULL;
  const int64_t n[3] = {4, 4, 4};
  const double lo[3] = {0, 0, 0}, hi[3] = {0.5, 1, 1};
  PetscErrorCode ierr;

  PetscFunctionBeginUser;
  PetscCall(pbng_generate_res_box(6, NULL, &fm));
  PetscCall(pbng_generate_box(n, lo, hi, &cm));
  PetscCall(build(comm, &fm, bcs, &fine));
  PetscCall(build(comm, &cm, bcs, &coarse));
  PetscCall(PetscPushErrorHandler(PetscReturnErrorHandler, NULL));
  ierr = pbng_transfer_create(&fine.dm, &fine.map, "the fine level", &coarse.dm, &coarse.map, "the half box", PBNG_TRANSFER_RADIUS, &P, &Q);
  PetscCall(PetscPopErrorHandler());
  check(ierr == PETSC_ERR_ARG_WRONG, "a coarse mesh covering half the fine one is an error");
  check(P == NULL && Q == NULL, "no matrices after the error");
  PetscCall(destroy(&fine));
  PetscCall(destroy(&coarse));
  PetscFunctionReturn(0);
}

/* Point location geometry: barycentric coordinates and distances of a few points. */
static void check_geometry(void)
{
  const double a[3] = {0, 0, 0}, b[3] = {1, 0, 0}, c[3] = {0, 1, 0}, d[3] = {0, 0, 1};
  const double *X[4] = {a, b, c, d};
  const double inside[3] = {0.1, 0.2, 0.3}, outside[3] = {-1, 0.25, 0.25}, far[3] = {1, 1, 1};
  double w[4], wc[4];
  check(pbng_tet_barycentric(X, inside, w) == 0 && fabs(w[0] - 0.4) < 1e-15 && fabs(w[3] - 0.3) < 1e-15, "barycentric coordinates inside");
  check(pbng_point_tet_distance(X, inside, wc) == 0.0, "distance 0 inside");
  check(fabs(pbng_point_tet_distance(X, outside, wc) - 1.0) < 1e-15 && fabs(wc[0] - 0.5) < 1e-15, "distance to a face, closest-point weights");
  check(fabs(pbng_point_tet_distance(X, far, wc) - sqrt(3.0) * 2.0 / 3.0) < 1e-15, "distance to the slanted face");
  check(fabs(pbng_tet_longest_edge(X) - sqrt(2.0)) < 1e-15, "longest edge");
}

int main(int argc, char **argv)
{
  MPI_Comm comm;
  pbng_bc_list none = {0}, clamp = {0};
  const double x0[6] = {0, 0, 0, 0, 1, 1};
  pbng_mesh fm, cm;
  char path[PETSC_MAX_PATH_LEN];
  const char *data = getenv("PBNG_TEST_DATA");

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  comm = PETSC_COMM_WORLD;
  check_geometry();
  PetscCall(pbng_bc_add_box(&clamp, "clamp", x0, NULL));
  /* nested (Res-9 / Res-5), non-nested (Res-8 / Res-5), unstructured against structured */
  PetscCall(pbng_generate_res_box(9, NULL, &fm));
  PetscCall(pbng_generate_res_box(5, NULL, &cm));
  PetscCall(check_pair(comm, "Res-9 / Res-5", &fm, &cm, &none, 1));
  PetscCall(pbng_generate_res_box(8, NULL, &fm));
  PetscCall(pbng_generate_res_box(5, NULL, &cm));
  PetscCall(check_pair(comm, "Res-8 / Res-5", &fm, &cm, &none, 1));
  snprintf(path, sizeof(path), "%s/cube_fine_v41.msh", data ? data : "tests/data");
  PetscCall(pbng_mesh_read(path, &fm));
  PetscCall(pbng_generate_res_box(4, NULL, &cm));
  PetscCall(check_pair(comm, "Gmsh cube / Res-4", &fm, &cm, &none, 1));
  snprintf(path, sizeof(path), "%s/cube_v41_ascii.msh", data ? data : "tests/data");
  PetscCall(pbng_generate_res_box(11, NULL, &fm));
  PetscCall(pbng_mesh_read(path, &cm));
  PetscCall(check_pair(comm, "Res-11 / Gmsh cube", &fm, &cm, &none, 1));
  PetscCall(pbng_generate_res_box(8, NULL, &fm));
  PetscCall(pbng_generate_res_box(5, NULL, &cm));
  PetscCall(check_pair(comm, "Res-8 / Res-5 clamped", &fm, &cm, &clamp, 0));
  PetscCall(check_clamped_rows(comm, &clamp));
  PetscCall(check_not_covered(comm, &none));
  int all;
  MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, comm);
  PetscCall(PetscPrintf(comm, "test_transfer: %d checks, %d failures\n", checks, all));
  PetscCall(PetscFinalize());
  return all ? 1 : 0;
}
