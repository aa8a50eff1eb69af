/* Coarse meshes made from a fine one (src/mesh/coarsen.c): on a Res-13 box with a node set on one face
 * and a weak constraint, the node count falls by about the target ratio, every tetrahedron is positive
 * with quality at least quality_min, the volume and the box's faces, edges and corners are kept
 * exactly, the node set keeps exactly the coarse nodes on its face, the constrained nodes are kept
 * (same positions, remapped), prescribed nodes only collapse among themselves, and the result is the
 * same when made twice; on the TetGen tube (curved, thin-walled) the volume changes by under 5 %. The tetrahedra of a
 * file mixing hex8, prism6 and pyramid5 (pbng_mesh_tetrahedralize): positive, conforming, the volume kept. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include "core/element.h"
#include "mesh/coarsen.h"
#include "mesh/generate.h"

static int checks, failures;

static void check(int ok, const char *what)
{
  ++checks;
  if (!ok && failures++ < 20) printf("FAIL: %s\n", what);
}

static double quality(const double *p0, const double *p1, const double *p2, const double *p3)
{
  const double *X[4] = {p0, p1, p2, p3};
  double l = 0;
  for (int a = 0; a < 4; ++a)
    for (int b = a + 1; b < 4; ++b) {
      double d = 0;
      for (int k = 0; k < 3; ++k) d += (X[a][k] - X[b][k]) * (X[a][k] - X[b][k]);
      l = fmax(l, d);
    }
  l = sqrt(l);
  return 6 * sqrt(2.0) * pbng_tet_signed_volume(p0, p1, p2, p3) / (l * l * l);
}

static double volume_and_quality(const pbng_mesh *m, double *qmin)
{
  double V = 0;
  *qmin = INFINITY;
  for (int64_t t = 0; t < m->nelems; ++t) {
    const int32_t *e = &m->elems[4 * t];
    const double *p[4] = {&m->X[3 * e[0]], &m->X[3 * e[1]], &m->X[3 * e[2]], &m->X[3 * e[3]]};
    V += pbng_tet_signed_volume(p[0], p[1], p[2], p[3]);
    *qmin = fmin(*qmin, quality(p[0], p[1], p[2], p[3]));
  }
  return V;
}

static int on_box_boundary(const double *x)
{
  for (int k = 0; k < 3; ++k)
    if (x[k] == 0.0 || x[k] == 1.0) return 1;
  return 0;
}

/* Res-13 box; node set "left" = the x = 0 face, prescribed too; one weak constraint between two
 * interior nodes. */
static PetscErrorCode check_box(void)
{
  pbng_mesh fine, coarse, again;
  const int res = 13;
  int32_t *left;
  int8_t *bc;
  int64_t nleft = 0;
  const pbng_coarsen_options opt = pbng_coarsen_defaults();
  char msg[160];

  PetscFunctionBeginUser;
  PetscCall(pbng_generate_res_box(res, NULL, &fine));
  PetscCall(PetscMalloc2(fine.nnodes, &left, fine.nnodes, &bc));
  for (int64_t v = 0; v < fine.nnodes; ++v) {
    bc[v] = fine.X[3 * v] == 0.0 ? 0 : -1;
    if (bc[v] == 0) left[nleft++] = (int32_t)v;
  }
  PetscCall(pbng_mesh_add_node_set(&fine, "left", nleft, left));
  const int64_t a = 6 + res * (6 + res * 6), b = 7 + res * (6 + res * 6); /* two interior nodes */
  const double one = 1.0;
  pbng_weak_constraint c;
  check(pbng_weak_constraint_init(1, &a, &one, 1, &b, &one, 10.0, 10.0, NULL, &c) == NULL, "weak constraint made");
  PetscCall(pbng_mesh_add_weak_constraints(&fine, 1, &c));
  PetscCall(pbng_mesh_coarsen(&fine, bc, &opt, &coarse));

  const double ratio = (double)fine.nnodes / coarse.nnodes;
  snprintf(msg, sizeof(msg), "node count falls by about the target ratio 8 (%lld -> %lld, %.2f)", (long long)fine.nnodes, (long long)coarse.nnodes, ratio);
  check(ratio > 5 && ratio < 9, msg);
  double qmin, V = volume_and_quality(&coarse, &qmin);
  snprintf(msg, sizeof(msg), "every tetrahedron positive with quality >= %g (min %.3f)", opt.quality_min, qmin);
  check(qmin >= opt.quality_min, msg);
  snprintf(msg, sizeof(msg), "the volume is kept (%.15f)", V);
  check(fabs(V - 1.0) < 1e-12, msg);
  int corners = 0, face_ok = 1;
  for (int64_t v = 0; v < coarse.nnodes; ++v) {
    const double *x = &coarse.X[3 * v];
    corners += (x[0] == 0 || x[0] == 1) && (x[1] == 0 || x[1] == 1) && (x[2] == 0 || x[2] == 1);
  }
  check(corners == 8, "the 8 corners are kept");
  /* every boundary face of the coarse mesh lies in a face of the box: its three nodes share a coordinate 0 or 1 */
  for (int64_t t = 0; t < coarse.nelems && face_ok; ++t) {
    static const int face[4][3] = {{1, 2, 3}, {0, 3, 2}, {0, 1, 3}, {0, 2, 1}};
    for (int j = 0; j < 4; ++j) {
      const double *p[3];
      for (int i = 0; i < 3; ++i) p[i] = &coarse.X[3 * coarse.elems[4 * t + face[j][i]]];
      int in_plane = 0, boundary = on_box_boundary(p[0]) && on_box_boundary(p[1]) && on_box_boundary(p[2]);
      for (int k = 0; k < 3; ++k) in_plane |= (p[0][k] == p[1][k] && p[1][k] == p[2][k] && (p[0][k] == 0.0 || p[0][k] == 1.0));
      if (boundary && !in_plane) {
        /* three boundary nodes not in one face: allowed only for an interior face; count the tets sharing it */
        int shared = 0;
        for (int64_t u = 0; u < coarse.nelems; ++u) {
          int has = 0;
          for (int i = 0; i < 3; ++i)
            for (int q = 0; q < 4; ++q) has += coarse.elems[4 * u + q] == coarse.elems[4 * t + face[j][i]];
          shared += has == 3;
        }
        face_ok &= shared == 2;
      }
    }
  }
  check(face_ok, "every boundary face lies in a face of the box");
  const pbng_node_set *set = pbng_mesh_find_node_set(&coarse, "left");
  int64_t at_left = 0;
  double lo[2] = {1, 1}, hi[2] = {0, 0};
  for (int64_t v = 0; v < coarse.nnodes; ++v)
    if (coarse.X[3 * v] == 0.0) {
      ++at_left;
      for (int k = 0; k < 2; ++k) lo[k] = fmin(lo[k], coarse.X[3 * v + 1 + k]), hi[k] = fmax(hi[k], coarse.X[3 * v + 1 + k]);
    }
  check(set && set->count == at_left && at_left >= 9, "the node set keeps exactly the coarse nodes on its face");
  check(lo[0] == 0 && lo[1] == 0 && hi[0] == 1 && hi[1] == 1, "the prescribed face is still covered");
  check(coarse.nweak == 1, "the weak constraint is carried over");
  if (coarse.nweak == 1)
    for (int j = 0; j < 2; ++j) {
      const int64_t fv = fine.weak[0].node[j], cv = coarse.weak[0].node[j];
      check(memcmp(&fine.X[3 * fv], &coarse.X[3 * cv], 3 * sizeof(double)) == 0, "a constrained node keeps its position");
    }
  PetscCall(pbng_mesh_coarsen(&fine, bc, &opt, &again));
  check(again.nnodes == coarse.nnodes && again.nelems == coarse.nelems &&
          !memcmp(again.X, coarse.X, sizeof(double) * 3 * coarse.nnodes) && !memcmp(again.elems, coarse.elems, sizeof(int32_t) * 4 * coarse.nelems),
        "coarsening is deterministic");
  PetscCall(pbng_mesh_destroy(&again));
  /* a second level from the first */
  pbng_mesh coarser;
  PetscCall(pbng_mesh_coarsen(&coarse, NULL, &opt, &coarser));
  V = volume_and_quality(&coarser, &qmin);
  snprintf(msg, sizeof(msg), "second level: %lld -> %lld nodes, volume %.15f, quality %.3f", (long long)coarse.nnodes, (long long)coarser.nnodes, V, qmin);
  check(2 * coarser.nnodes < coarse.nnodes && fabs(V - 1) < 1e-12 && qmin >= opt.quality_min, msg);
  PetscCall(pbng_mesh_destroy(&coarser));
  PetscCall(pbng_mesh_destroy(&coarse));
  PetscCall(pbng_mesh_destroy(&fine));
  PetscCall(PetscFree2(left, bc));
  PetscFunctionReturn(0);
}

static int face_order(const void *a, const void *b)
{
  const int32_t *x = a, *y = b;
  for (int k = 0; k < 3; ++k)
    if (x[k] != y[k]) return x[k] < y[k] ? -1 : 1;
  return 0;
}

/* pbng_mesh_tetrahedralize of a file mixing hex8, prism6 and pyramid5 (the unit cube): every tetrahedron positive,
 * the volume kept (1), conforming (each triangle in one tetrahedron on the cube's boundary, else in two), one new
 * node per non-tetrahedral cell, the node sets on the corner nodes; then coarsened, the volume still 1. */
static PetscErrorCode check_tetrahedralize(const char *data)
{
  pbng_mesh fine, tets, coarse;
  char path[PETSC_MAX_PATH_LEN], msg[200];
  const pbng_coarsen_options opt = pbng_coarsen_defaults();
  double q;

  PetscFunctionBeginUser;
  snprintf(path, sizeof(path), "%s/mixed_box_v41_ascii.msh", data);
  PetscCall(pbng_mesh_read(path, &fine));
  PetscCall(pbng_mesh_tetrahedralize(&fine, &tets));
  const double V = volume_and_quality(&tets, &q);
  snprintf(msg, sizeof(msg), "tetrahedralize: %lld cells -> %lld tetrahedra, %lld nodes (+%lld), volume %.15f, quality %.3f", (long long)fine.nelems,
           (long long)tets.nelems, (long long)tets.nnodes, (long long)(tets.nnodes - fine.nnodes), V, q);
  check(q > 0 && fabs(V - 1) < 1e-12 && tets.nnodes == fine.nnodes + fine.nelems, msg);
  int32_t *faces;
  PetscCall(PetscMalloc1(12 * tets.nelems, &faces));
  for (int64_t t = 0; t < tets.nelems; ++t)
    for (int k = 0; k < 4; ++k) {
      int32_t *f = &faces[3 * (4 * t + k)], n = 0;
      for (int j = 0; j < 4; ++j)
        if (j != k) f[n++] = tets.elems[4 * t + j];
      /* the face's three nodes in increasing order */
      if (f[0] > f[1]) { int32_t x = f[0]; f[0] = f[1]; f[1] = x; }
      if (f[1] > f[2]) { int32_t x = f[1]; f[1] = f[2]; f[2] = x; }
      if (f[0] > f[1]) { int32_t x = f[0]; f[0] = f[1]; f[1] = x; }
    }
  qsort(faces, 4 * tets.nelems, 3 * sizeof(int32_t), face_order);
  int conforming = 1;
  for (int64_t i = 0; i < 4 * tets.nelems;) {
    int64_t j = i + 1;
    while (j < 4 * tets.nelems && !face_order(&faces[3 * i], &faces[3 * j])) ++j;
    int boundary = 0; /* all three on one face of the cube */
    for (int k = 0; k < 3; ++k) {
      const double c = tets.X[3 * faces[3 * i] + k];
      boundary |= (c == 0.0 || c == 1.0) && tets.X[3 * faces[3 * i + 1] + k] == c && tets.X[3 * faces[3 * i + 2] + k] == c;
    }
    conforming &= (j - i) == (boundary ? 1 : 2);
    i = j;
  }
  PetscCall(PetscFree(faces));
  check(conforming, "tetrahedralize: each triangle is in two tetrahedra, or in one on the cube's boundary");
  const pbng_node_set *left = pbng_mesh_find_node_set(&tets, "left"), *fleft = pbng_mesh_find_node_set(&fine, "left");
  check(left && fleft && left->count == fleft->count, "tetrahedralize: the node set left keeps its nodes");
  PetscCall(pbng_mesh_coarsen(&tets, NULL, &opt, &coarse));
  const double Vc = volume_and_quality(&coarse, &q);
  snprintf(msg, sizeof(msg), "tetrahedralized, coarsened: %lld nodes, volume %.15f", (long long)coarse.nnodes, Vc);
  check(coarse.nnodes < fine.nnodes && fabs(Vc - 1) < 1e-12 && q >= opt.quality_min, msg);
  PetscCall(pbng_mesh_destroy(&coarse));
  PetscCall(pbng_mesh_destroy(&tets));
  PetscCall(pbng_mesh_destroy(&fine));
  PetscFunctionReturn(0);
}

static PetscErrorCode check_tube(const char *data)
{
  pbng_mesh fine, coarse;
  char path[PETSC_MAX_PATH_LEN], msg[200];
  const pbng_coarsen_options opt = pbng_coarsen_defaults();
  double qf, qc;

  PetscFunctionBeginUser;
  snprintf(path, sizeof(path), "%s/tube.node", data);
  PetscCall(pbng_mesh_read(path, &fine));
  PetscCall(pbng_mesh_coarsen(&fine, NULL, &opt, &coarse));
  const double Vf = volume_and_quality(&fine, &qf), Vc = volume_and_quality(&coarse, &qc);
  snprintf(msg, sizeof(msg), "tube: %lld -> %lld nodes, volume %.4f -> %.4f, quality %.3f", (long long)fine.nnodes, (long long)coarse.nnodes, Vf, Vc, qc);
  check(4 * coarse.nnodes < fine.nnodes && fabs(Vc / Vf - 1) < 0.05 && qc >= opt.quality_min, msg);
  PetscCall(pbng_mesh_destroy(&coarse));
  PetscCall(pbng_mesh_destroy(&fine));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  const char *data = getenv("PBNG_TEST_DATA");

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(check_box());
  PetscCall(check_tube(data ? data : "tests/data"));
  PetscCall(check_tetrahedralize(data ? data : "tests/data"));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "test_coarsen: %d checks, %d failures\n", checks, failures));
  PetscCall(PetscFinalize());
  return failures ? 1 : 0;
}
