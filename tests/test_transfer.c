/* Transfer operators between non-nested levels (src/parallel/transfer.c, src/parallel/locate.c), on
 * any number of ranks (ctest runs 1; test_multilevel.sh runs 3): the interpolation P reproduces a
 * linear field exactly at every free fine node, for generated boxes of different resolutions and for
 * an unstructured Gmsh cube against a box; the injection Q does the same at every free coarse node;
 * with a clamped face, prescribed nodes get no row and no column, and rows next to the clamp lose
 * exactly the clamped vertices' weights; a coarse mesh that does not cover the fine one is an error.
 * Other kinds (check_kinds): P reproduces trilinear fields on grid-aligned hex8 coarse levels (fine
 * hex8, hex27, tet4), triquadratic ones on hex27 (the coarse element's own shape functions), and
 * linear ones on bent hex8, curved hex27 and mixed hex8/prism6/pyramid5 coarse levels; Q's rows sum to one (a position stays a position) and reproduce linear fields (trilinear
 * from hexahedral fine levels); the location geometry per kind (check_kind_geometry, check_tri3_geometry);
 * sheets (tri3 + bend4) between generated sheets (check_sheets); the locator's bucket-grid search gives the
 * brute force's answers on graded meshes (check_locator_brute_force). */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "core/locate.h"
#include "mesh/boundary.h"
#include "mesh/coarsen.h"
#include "mesh/generate.h"
#include "mesh/sheet.h"
#include "parallel/locate.h"
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

/* Fields interpolated exactly: u(X) = 0.3 + 1.7 x - 0.6 y + 2.1 z by every kind (isoparametric
 * elements, curved ones too), the trilinear one by hexahedra whose faces are the grid's planes, the
 * triquadratic one by such hex27. */
typedef double (*field)(const double X[3]);
static double linear(const double X[3]) { return 0.3 + 1.7 * X[0] - 0.6 * X[1] + 2.1 * X[2]; }
static double trilinear(const double X[3]) { return linear(X) + 0.8 * X[0] * X[1] - 0.5 * X[1] * X[2] + 0.4 * X[0] * X[2] + 1.1 * X[0] * X[1] * X[2]; }
static double triquadratic(const double X[3]) { return trilinear(X) + 0.9 * X[0] * X[0] - 0.4 * X[1] * X[1] * X[2] + 0.6 * X[0] * X[0] * X[2] * X[2]; }
static const char *field_name(field f) { return f == linear ? "linear" : f == trilinear ? "trilinear" : "triquadratic"; }

static PetscErrorCode field_vec(const level *lv, Mat A, PetscBool left, field u, Vec *v)
{
  PetscScalar *a;

  PetscFunctionBeginUser;
  PetscCall(left ? MatCreateVecs(A, NULL, v) : MatCreateVecs(A, v, NULL));
  PetscCall(VecGetArray(*v, &a));
  for (int32_t i = 0; i < lv->dm.nfree; ++i) a[i] = u(&lv->dm.X[3 * i]);
  PetscCall(VecRestoreArray(*v, &a));
  PetscFunctionReturn(0);
}

/* max |(A u_from) - u_to| over the rows whose weights sum to one (all rows when no node is held). */
static PetscErrorCode field_error(Mat A, const level *from, const level *to, field f, double *err, int *rows_checked)
{
  Vec u, Au, want, ones, sums;
  const PetscScalar *au, *w, *s;
  double mine = 0;
  int n = 0;

  PetscFunctionBeginUser;
  PetscCall(field_vec(from, A, PETSC_FALSE, f, &u));
  PetscCall(field_vec(to, A, PETSC_TRUE, f, &want));
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

/* P reproduces the field p_field at every free fine node, Q the field q_field at every free coarse
 * node, on the rows whose weights sum to one: all of them when expect_all_rows (no clamp: Q of a
 * position field is a position, and so is P's). */
static PetscErrorCode check_fields(MPI_Comm comm, const char *what, pbng_mesh *fine_mesh, pbng_mesh *coarse_mesh, const pbng_bc_list *bcs,
                                   int expect_all_rows, field p_field, field q_field)
{
  level fine, coarse;
  Mat P, Q;
  double err;
  int rows;
  char msg[256];
  const char *pname = field_name(p_field), *qname = field_name(q_field);

  PetscFunctionBeginUser;
  PetscCall(build(comm, fine_mesh, bcs, &fine));
  PetscCall(build(comm, coarse_mesh, bcs, &coarse));
  PetscCall(pbng_transfer_create(&fine.dm, &fine.map, "fine", &coarse.dm, &coarse.map, "coarse", PBNG_TRANSFER_RADIUS, &P, &Q));
  PetscCall(field_error(P, &coarse, &fine, p_field, &err, &rows));
  snprintf(msg, sizeof(msg), "%s: interpolation reproduces a %s field (error %.3e on %d rows of %d with weights summing to 1)", what, pname, err, rows,
           (int)fine.map.nglobal);
  check(err < 1e-12 && rows > 0 && (!expect_all_rows || rows == fine.map.nglobal), msg);
  PetscCall(field_error(Q, &fine, &coarse, q_field, &err, &rows));
  snprintf(msg, sizeof(msg), "%s: injection reproduces a %s field (error %.3e on %d rows of %d with weights summing to 1)", what, qname, err, rows,
           (int)coarse.map.nglobal);
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

static PetscErrorCode check_pair(MPI_Comm comm, const char *what, pbng_mesh *fine_mesh, pbng_mesh *coarse_mesh, const pbng_bc_list *bcs,
                                 int expect_all_rows)
{
  PetscFunctionBeginUser;
  PetscCall(check_fields(comm, what, fine_mesh, coarse_mesh, bcs, expect_all_rows, linear, linear));
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
}

/* Every element kind's location: reference coordinates of a point of a non-affine hexahedron (Newton),
 * containment inside and outside, the weights of a point outside, a pyramid's apex (its basis is
 * singular there: the node's weight 1), a prism's point, longest edges. */
static void check_kind_geometry(void)
{
  const pbng_element_type *hex = pbng_element_type_get(PBNG_ELEMENT_HEX8), *pyr = pbng_element_type_get(PBNG_ELEMENT_PYRAMID5),
                          *prism = pbng_element_type_get(PBNG_ELEMENT_PRISM6);
  double X[8][3], N[27], dN[27][3], q[3], r[3], w[27];
  for (int a = 0; a < 8; ++a) { /* the reference cube bent: x gains 0.15 y z, z gains 0.1 x y (trilinear, not affine) */
    const double *c = hex->ref_nodes[a];
    X[a][0] = c[0] + 0.15 * c[1] * c[2], X[a][1] = c[1], X[a][2] = c[2] + 0.1 * c[0] * c[1];
  }
  const double r0[3] = {0.3, -0.5, 0.7}, rout[3] = {1.3, 0.2, -0.1};
  pbng_element_shape(hex, r0, N, dN);
  for (int k = 0; k < 3; ++k) q[k] = 0;
  for (int a = 0; a < 8; ++a)
    for (int k = 0; k < 3; ++k) q[k] += N[a] * X[a][k];
  check(pbng_element_reference_coordinates(hex, (const double(*)[3])X, q, r) == 0 && fabs(r[0] - r0[0]) < 1e-13 && fabs(r[1] - r0[1]) < 1e-13 &&
          fabs(r[2] - r0[2]) < 1e-13,
        "hex8: Newton finds a point's reference coordinates in a non-affine hexahedron");
  check(pbng_element_contains_point(hex, (const double(*)[3])X, q), "hex8: contains its point");
  double err = 0;
  check(pbng_element_point_weights(hex, (const double(*)[3])X, q, w) == 0.0, "hex8: distance 0 inside");
  for (int a = 0; a < 8; ++a) err = fmax(err, fabs(w[a] - N[a]));
  check(err < 1e-13, "hex8: the weights inside are the shape functions at the point");
  pbng_element_shape(hex, rout, N, dN);
  for (int k = 0; k < 3; ++k) q[k] = 0;
  for (int a = 0; a < 8; ++a)
    for (int k = 0; k < 3; ++k) q[k] += N[a] * X[a][k];
  check(!pbng_element_contains_point(hex, (const double(*)[3])X, q), "hex8: does not contain a point outside");
  const double d = pbng_element_point_weights(hex, (const double(*)[3])X, q, w);
  double sum = 0, x0 = 0;
  for (int a = 0; a < 8; ++a) sum += w[a], x0 += w[a] * X[a][0];
  check(d > 0.2 && d < 0.4 && fabs(sum - 1) < 1e-13 && fabs(x0 - q[0]) > 0.1, "hex8: a point 0.3 reference units outside: its distance, the closest point's weights");
  check(fabs(pbng_element_longest_edge(hex, (const double(*)[3])hex->ref_nodes) - 2.0) < 1e-15, "hex8: longest edge of the reference cube");
  double P[5][3];
  for (int a = 0; a < 5; ++a)
    for (int k = 0; k < 3; ++k) P[a][k] = 0.5 * pyr->ref_nodes[a][k] + (k == 2 ? 1.0 : 0.0);
  check(pbng_element_point_weights(pyr, (const double(*)[3])P, P[4], w) == 0.0 && w[4] == 1.0 && w[0] == 0.0 && w[3] == 0.0,
        "pyramid5: the apex has the apex's weight 1");
  check(pbng_element_contains_point(pyr, (const double(*)[3])P, P[4]), "pyramid5: contains its apex");
  const double below_apex[3] = {0.05, -0.02, 1.4};
  check(pbng_element_point_weights(pyr, (const double(*)[3])P, below_apex, w) == 0.0 && fabs(w[0] + w[1] + w[2] + w[3] + w[4] - 1) < 1e-13 &&
          fabs(w[4] - 0.8) < 1e-13,
        "pyramid5: a point below the apex: N_4 = its reference height");
  const double in_prism[3] = {0.2, 0.3, 0.5};
  check(pbng_element_point_weights(prism, (const double(*)[3])prism->ref_nodes, in_prism, w) == 0.0 && fabs(w[0] - 0.5 * 0.25) < 1e-14 &&
          fabs(w[4] - 0.2 * 0.75) < 1e-14,
        "prism6: a point's weights are the triangle's barycentric times the axis' hat functions");
}

/* tri3 location (sheets): a tilted triangle's weights are the barycentric coordinates of the point's
 * projection onto its plane and its distance the 3-D distance to the closed triangle: inside (on and
 * off the plane), outside in the plane (extrapolated), far outside (the closest point's weights). */
static void check_tri3_geometry(void)
{
  const pbng_element_type *tri = pbng_element_type_get(PBNG_ELEMENT_TRI3);
  const double n[3] = {1.0 / 3, 2.0 / 3, 2.0 / 3}; /* the unit normal of the plane x + 2y + 2z = 3 */
  const double X[3][3] = {{3, 0, 0}, {1, 1, 0}, {1, 0, 1}}; /* in that plane: normal (X1 - X0) x (X2 - X0) ~ n */
  const double wi[3] = {0.2, 0.5, 0.3}, wo[3] = {-0.25, 0.75, 0.5}, wf[3] = {-2, 1.5, 1.5};
  double p[3], q[3], w[3], dz;

  for (int k = 0; k < 3; ++k) p[k] = wi[0] * X[0][k] + wi[1] * X[1][k] + wi[2] * X[2][k], q[k] = p[k] + 0.1 * n[k];
  check(pbng_element_point_weights(tri, X, p, w) == 0.0 && fabs(w[0] - 0.2) < 1e-15 && fabs(w[1] - 0.5) < 1e-15 && fabs(w[2] - 0.3) < 1e-15,
        "tri3: barycentric coordinates of a point of the triangle, distance 0");
  check(pbng_element_contains_point(tri, X, p), "tri3: contains its point");
  dz = pbng_element_point_weights(tri, X, q, w);
  check(fabs(dz - 0.1) < 1e-15 && fabs(w[0] - 0.2) < 1e-15 && fabs(w[1] - 0.5) < 1e-15, "tri3: a point off the plane gets its projection's weights and its normal distance");
  check(!pbng_element_contains_point(tri, X, q), "tri3: does not contain a point off its plane");
  for (int k = 0; k < 3; ++k) p[k] = wo[0] * X[0][k] + wo[1] * X[1][k] + wo[2] * X[2][k];
  dz = pbng_element_point_weights(tri, X, p, w);
  check(dz > 0 && fabs(w[0] + 0.25) < 1e-15 && fabs(w[1] - 0.75) < 1e-15 && fabs(w[2] - 0.5) < 1e-15, "tri3: just outside, extrapolated weights");
  for (int k = 0; k < 3; ++k) p[k] = wf[0] * X[0][k] + wf[1] * X[1][k] + wf[2] * X[2][k]; /* beyond edge X1 X2: closest point its midpoint */
  dz = pbng_element_point_weights(tri, X, p, w);
  check(fabs(dz - sqrt(18.0)) < 1e-13 && fabs(w[0]) < 1e-15 && fabs(w[1] - 0.5) < 1e-15 && fabs(w[2] - 0.5) < 1e-15,
        "tri3: far outside, the closest point's weights and distance");
  check(fabs(pbng_element_longest_edge(tri, X) - sqrt(5.0)) < 1e-15, "tri3: longest edge");
  const double D[3][3] = {{0, 0, 0}, {1, 1, 1}, {2, 2, 2}};
  check(pbng_element_point_weights(tri, D, p, w) < 0, "tri3: a degenerate triangle gives no answer");
}

/* A square sheet of res x res vertices in a tilted plane, with its bending stencils (tri3 + bend4). */
static PetscErrorCode tilted_sheet(int res, pbng_mesh *mesh)
{
  const double o[3] = {0.1, -0.2, 0.3}, eu[3] = {0.6, 0.8, 0}, ev[3] = {0, 0.6, 0.8};
  pbng_sheet sheet;

  PetscFunctionBeginUser;
  PetscCall(pbng_sheet_grid(res, res, 1.0, 1.5, o, eu, ev, &sheet));
  PetscCall(pbng_mesh_from_sheet(&sheet, 1, mesh));
  PetscCall(pbng_sheet_destroy(&sheet));
  PetscFunctionReturn(0);
}

/* The most entries in a row of A on this rank (all ranks: the maximum). */
static PetscErrorCode max_row_entries(Mat A, int *most)
{
  PetscInt lo, hi, n;
  int mine = 0;

  PetscFunctionBeginUser;
  PetscCall(MatGetOwnershipRange(A, &lo, &hi));
  for (PetscInt r = lo; r < hi; ++r) {
    PetscCall(MatGetRow(A, r, &n, NULL, NULL));
    mine = n > mine ? (int)n : mine;
    PetscCall(MatRestoreRow(A, r, &n, NULL, NULL));
  }
  PetscCallMPI(MPI_Allreduce(&mine, most, 1, MPI_INT, MPI_MAX, PetscObjectComm((PetscObject)A)));
  PetscFunctionReturn(0);
}

/* Sheets (tri3 + bend4 meshes): P and Q reproduce linear fields between nested (9 / 5) and non-nested
 * (8 / 5) generated sheets in a tilted plane, and every row interpolates a triangle's 3 corners at most
 * (the bend4 stencils are never located in). */
static PetscErrorCode check_sheets(MPI_Comm comm, const pbng_bc_list *none)
{
  const int pairs[2][2] = {{9, 5}, {8, 5}};
  pbng_mesh fm, cm;
  level fine, coarse;
  Mat P, Q;
  int most;

  PetscFunctionBeginUser;
  for (int k = 0; k < 2; ++k) {
    char what[64];
    snprintf(what, sizeof(what), "sheet %d / sheet %d", pairs[k][0], pairs[k][1]);
    PetscCall(tilted_sheet(pairs[k][0], &fm));
    PetscCall(tilted_sheet(pairs[k][1], &cm));
    PetscCall(check_fields(comm, what, &fm, &cm, none, 1, linear, linear));
  }
  PetscCall(tilted_sheet(5, &cm)); /* serially: the locator's rows are 3 wide, and a point beyond the sheet's edge is in a triangle */
  pbng_locator *locator;
  pbng_point_location loc;
  const double beyond[3] = {cm.X[0] - 0.01, cm.X[1], cm.X[2] - 0.01};
  PetscCall(pbng_locator_create_serial(&cm, PBNG_TRANSFER_RADIUS, PBNG_LOCATE_SHAPE, &locator));
  check(pbng_locator_width(locator) == 3, "sheets: the locator's rows are a triangle's 3 weights (bend4 stencils are no candidates)");
  PetscCall(pbng_locator_find(locator, 1, beyond, &loc));
  check(loc.elem >= 0 && loc.nodes == 3 && cm.kind[loc.elem] == PBNG_ELEMENT_TRI3, "sheets: a point beyond the edge is located in a triangle");
  PetscCall(pbng_locator_destroy(&locator));
  PetscCall(pbng_mesh_destroy(&cm));
  PetscCall(tilted_sheet(8, &fm));
  PetscCall(tilted_sheet(5, &cm));
  PetscCall(build(comm, &fm, none, &fine));
  PetscCall(build(comm, &cm, none, &coarse));
  PetscCall(pbng_transfer_create(&fine.dm, &fine.map, "fine", &coarse.dm, &coarse.map, "coarse", PBNG_TRANSFER_RADIUS, &P, &Q));
  PetscCall(max_row_entries(P, &most));
  check(most == 3, "sheets: P's rows interpolate a triangle's 3 corners (no bend4 stencil located in)");
  PetscCall(max_row_entries(Q, &most));
  check(most == 3, "sheets: Q's rows too");
  PetscCall(MatDestroy(&P));
  PetscCall(MatDestroy(&Q));
  PetscCall(destroy(&fine));
  PetscCall(destroy(&coarse));
  PetscFunctionReturn(0);
}

/* The unit box of a kind, res nodes per axis along each cell's edges (pbng_generate_res_box). */
static PetscErrorCode kind_box(pbng_element_kind kind, int res, pbng_mesh *mesh)
{
  const pbng_grid_elements el = {kind, PBNG_TET_SPLIT_FIVE};

  PetscFunctionBeginUser;
  PetscCall(pbng_generate_res_box(res, &el, mesh));
  PetscFunctionReturn(0);
}

/* Moves every node inside the unit cube by a smooth map that keeps its faces (sin(pi x) sin(pi y)
 * sin(pi z) times a fixed direction): hexahedra become non-affine, quadratic ones curved. */
static void bend_interior(pbng_mesh *mesh)
{
  for (int64_t i = 0; i < mesh->nnodes; ++i) {
    double *X = &mesh->X[3 * i];
    const double s = 0.04 * sin(PETSC_PI * X[0]) * sin(PETSC_PI * X[1]) * sin(PETSC_PI * X[2]);
    X[0] += s, X[1] -= 0.7 * s, X[2] += 0.5 * s;
  }
}

/* The transfers of non-tetrahedral levels: P is exact for the coarse field of hexahedra (trilinear on
 * grid-aligned ones, linear on bent and curved ones, and on prisms and pyramids); Q of positions is a
 * position (partition of unity), exact for linear fields (trilinear from hex8 and hex27 fine levels:
 * the fine element's corners). */
static PetscErrorCode check_kinds(MPI_Comm comm, const pbng_bc_list *none, const char *data)
{
  pbng_mesh fm, cm;
  char path[PETSC_MAX_PATH_LEN];

  PetscFunctionBeginUser;
  PetscCall(kind_box(PBNG_ELEMENT_HEX8, 8, &fm));
  PetscCall(kind_box(PBNG_ELEMENT_HEX8, 5, &cm));
  PetscCall(check_fields(comm, "hex8 Res-8 / hex8 Res-5", &fm, &cm, none, 1, trilinear, trilinear));
  PetscCall(kind_box(PBNG_ELEMENT_HEX27, 4, &fm));
  PetscCall(kind_box(PBNG_ELEMENT_HEX8, 4, &cm));
  PetscCall(check_fields(comm, "hex27 / hex8 of the same cells", &fm, &cm, none, 1, trilinear, trilinear));
  PetscCall(pbng_generate_res_box(9, NULL, &fm));
  PetscCall(kind_box(PBNG_ELEMENT_HEX8, 4, &cm));
  PetscCall(check_fields(comm, "tet4 Res-9 / hex8 Res-4", &fm, &cm, none, 1, trilinear, linear));
  PetscCall(pbng_generate_res_box(9, NULL, &fm));
  PetscCall(kind_box(PBNG_ELEMENT_HEX8, 5, &cm));
  bend_interior(&cm);
  PetscCall(check_fields(comm, "tet4 Res-9 / bent hex8 Res-5", &fm, &cm, none, 1, linear, linear));
  PetscCall(kind_box(PBNG_ELEMENT_HEX8, 7, &fm));
  PetscCall(kind_box(PBNG_ELEMENT_HEX27, 3, &cm));
  PetscCall(check_fields(comm, "hex8 Res-7 / hex27 Res-3", &fm, &cm, none, 1, triquadratic, trilinear));
  PetscCall(kind_box(PBNG_ELEMENT_HEX8, 7, &fm));
  PetscCall(kind_box(PBNG_ELEMENT_HEX27, 3, &cm));
  bend_interior(&cm);
  PetscCall(check_fields(comm, "hex8 Res-7 / curved hex27 Res-3", &fm, &cm, none, 1, linear, linear));
  snprintf(path, sizeof(path), "%s/mixed_box_v22_ascii.msh", data);
  PetscCall(kind_box(PBNG_ELEMENT_HEX8, 9, &fm)); /* nodes at the pyramids' apexes too */
  PetscCall(pbng_mesh_read(path, &cm));
  PetscCall(check_fields(comm, "hex8 Res-9 / mixed hex8+prism6+pyramid5", &fm, &cm, none, 1, linear, linear));
  PetscCall(pbng_mesh_read(path, &fm));
  PetscCall(kind_box(PBNG_ELEMENT_HEX8, 3, &cm));
  PetscCall(check_fields(comm, "mixed hex8+prism6+pyramid5 / hex8 Res-3", &fm, &cm, none, 1, trilinear, linear));
  PetscFunctionReturn(0);
}

/* Graded and flattened: x -> (e^{3x} - 1) / (e^3 - 1) (cells 20x longer at one end than at the other), y -> 0.2 y
 * (an axis map keeps every grid element valid). */
static void grade(pbng_mesh *mesh)
{
  for (int64_t i = 0; i < mesh->nnodes; ++i) {
    double *X = &mesh->X[3 * i];
    X[0] = expm1(3 * X[0]) / expm1(3.0), X[1] *= 0.2;
  }
}

/* Without the elements whose centroid lies in the slab 0.3 < x < 0.5: a gap across the mesh, where a point's
 * cell is empty and its nearest elements lie some cells away on either side (the ring search's case). The nodes
 * keep their numbers; m->kind is NULL (one kind). */
static void cut_slab(pbng_mesh *m)
{
  const int nen = m->nen;
  int64_t kept = 0;
  for (int64_t e = 0; e < m->nelems; ++e) {
    double x = 0;
    for (int a = 0; a < nen; ++a) x += m->X[3 * (int64_t)m->elems[nen * e + a]] / nen;
    if (x > 0.3 && x < 0.5) continue;
    memmove(&m->elems[nen * kept++], &m->elems[nen * e], sizeof(int32_t) * nen);
  }
  m->nelems = kept;
}

/* The locator's answer for q by brute force over every element (parallel/locate.h's rule): the element of lowest
 * id at distance 0 (containing q, or with q on its boundary by its weights), else the nearest within the radius
 * times its longest edge, ties by the lower id. */
static void brute_force_location(const pbng_mesh *m, double radius, double hmax, const double q[3], int64_t *elem, double *distance)
{
  const pbng_element_type *t = m->etype;
  double X[PBNG_MAX_ELEMENT_NODES][3], w[PBNG_MAX_ELEMENT_NODES], lo[3], hi[3];

  *elem = -1, *distance = INFINITY;
  for (int pass = 0; pass < 2 && *elem < 0; ++pass) /* 0: containing elements; 1: the nearest */
    for (int64_t e = 0; e < m->nelems; ++e) {
      for (int a = 0; a < t->nodes; ++a) memcpy(X[a], &m->X[3 * (int64_t)m->elems[t->nodes * e + a]], sizeof(X[a]));
      int in = 1;
      for (int k = 0; k < 3; ++k) {
        lo[k] = hi[k] = X[0][k];
        for (int a = 1; a < t->nodes; ++a) lo[k] = fmin(lo[k], X[a][k]), hi[k] = fmax(hi[k], X[a][k]);
        in = in && q[k] >= lo[k] - 1e-12 * hmax && q[k] <= hi[k] + 1e-12 * hmax;
      }
      if (pass == 0 && !in) continue;
      double d = pbng_element_point_weights(t, (const double(*)[3])X, q, w);
      if (d < 0 || d > radius * pbng_element_longest_edge(t, (const double(*)[3])X)) continue;
      if (pass == 0) {
        if (d > 0 && pbng_element_contains_point(t, (const double(*)[3])X, q)) d = 0;
        if (d > 0) continue;
        *elem = e, *distance = 0;
        break;
      }
      if (d < *distance) *elem = e, *distance = d;
    }
}

/* The bucket grid's answers equal the brute force's on graded, flattened meshes (cells 20x apart in size, so
 * that the search must reach across cells of every size) with a gap cut across them: the nodes themselves (in several elements: the lowest
 * id wins), points inside and points outside up to beyond the radius; tet4 (order 1: the ring search stops
 * at the best distance) and curved tet10 and hex27 (order 2: the whole window). */
static void check_locator_brute_force(void)
{
  const struct {
    pbng_element_kind kind;
    int res, bent;
  } cases[3] = {{PBNG_ELEMENT_TET4, 6, 0}, {PBNG_ELEMENT_TET10, 3, 1}, {PBNG_ELEMENT_HEX27, 3, 1}};
  for (int c = 0; c < 3; ++c) {
    pbng_mesh m;
    pbng_locator *L;
    uint64_t seed = 12345;
    int wrong = 0, inside = 0, outside = 0, n = 0;
    double hmax = 0, X[PBNG_MAX_ELEMENT_NODES][3];
    if (kind_box(cases[c].kind, cases[c].res, &m)) return;
    if (cases[c].bent) bend_interior(&m);
    grade(&m);
    cut_slab(&m);
    for (int64_t e = 0; e < m.nelems; ++e) {
      for (int a = 0; a < m.etype->nodes; ++a) memcpy(X[a], &m.X[3 * (int64_t)m.elems[m.etype->nodes * e + a]], sizeof(X[a]));
      hmax = fmax(hmax, pbng_element_longest_edge(m.etype, (const double(*)[3])X));
    }
    if (pbng_locator_create_serial(&m, PBNG_TRANSFER_RADIUS, PBNG_LOCATE_SHAPE, &L)) return;
    const int npoints = (int)m.nnodes + (m.etype->order == 1 ? 1500 : 120); /* order 2: a location costs Newton steps */
    for (int i = 0; i < npoints; ++i, ++n) {
      double q[3];
      pbng_point_location loc;
      if (i < m.nnodes) memcpy(q, &m.X[3 * i], sizeof(q));
      else
        for (int k = 0; k < 3; ++k) {
          seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
          const double u = (double)(seed >> 11) / 9007199254740992.0; /* [0, 1) */
          q[k] = (k == 1 ? 0.2 : 1.0) * (-0.25 + 1.5 * u);
        }
      int64_t elem;
      double distance;
      brute_force_location(&m, PBNG_TRANSFER_RADIUS, hmax, q, &elem, &distance);
      if (pbng_locator_find(L, 1, q, &loc)) return;
      wrong += loc.elem != elem || (elem >= 0 && loc.distance != distance);
      inside += elem >= 0 && distance == 0, outside += elem >= 0 && distance > 0;
    }
    char what[160];
    snprintf(what, sizeof(what), "locator = brute force on a graded %s box: %d of %d points differ (%d inside, %d outside within the radius)",
             m.etype->name, wrong, n, inside, outside);
    check(wrong == 0 && inside > 50 && outside > 50, what);
    if (getenv("PBNG_TEST_VERBOSE")) printf("%s\n", what);
    pbng_locator_destroy(&L);
    pbng_mesh_destroy(&m);
  }
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
  check_kind_geometry();
  check_tri3_geometry();
  check_locator_brute_force();
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
  /* a file mixing hex8, prism6 and pyramid5 over its own tetrahedra coarsened (-multilevel auto's first coarse level) */
  snprintf(path, sizeof(path), "%s/mixed_box_v41_ascii.msh", data ? data : "tests/data");
  PetscCall(pbng_mesh_read(path, &fm));
  {
    pbng_mesh tets;
    const pbng_coarsen_options opt = pbng_coarsen_defaults();
    PetscCall(pbng_mesh_tetrahedralize(&fm, &tets));
    PetscCall(pbng_mesh_coarsen(&tets, NULL, &opt, &cm));
    PetscCall(pbng_mesh_destroy(&tets));
  }
  PetscCall(check_pair(comm, "mixed-kind file / its tetrahedra coarsened", &fm, &cm, &none, 1));
  PetscCall(pbng_generate_res_box(8, NULL, &fm));
  PetscCall(pbng_generate_res_box(5, NULL, &cm));
  PetscCall(check_pair(comm, "Res-8 / Res-5 clamped", &fm, &cm, &clamp, 0));
  PetscCall(check_clamped_rows(comm, &clamp));
  PetscCall(check_not_covered(comm, &none));
  PetscCall(check_kinds(comm, &none, data ? data : "tests/data"));
  PetscCall(check_sheets(comm, &none));
  int all;
  MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, comm);
  PetscCall(PetscPrintf(comm, "test_transfer: %d checks, %d failures\n", checks, all));
  PetscCall(PetscFinalize());
  return all ? 1 : 0;
}
