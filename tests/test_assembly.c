/* Distributed assembly for the Newton baseline (run on 1 rank by ctest, on 2-4 by
 * test_assembly_ranks.sh): the global unknown numbering (every free node exactly one index, owned
 * ranges contiguous, ghosts carry their owners' indices, held nodes -1), and the assembled stiffness
 * against differences of the distributed forces, exact and PSD-projected, for every generated
 * element kind (quadrature-point element matrices and their block preallocation). */
#include <math.h>
#include <stdio.h>
#include "mesh/boundary.h"
#include "mesh/generate.h"
#include "parallel/dofs.h"
#include "parallel/partition.h"
#include "problem/assembly.h"
#include "test_common.h"

static int checks, failures;

static void check(int ok, const char *what)
{
  ++checks;
  if (!ok && failures++ < 10) printf("FAIL: %s\n", what);
}

/* The Res-N box of the given elements with its x = 0 face clamped, cut over the ranks; released: its
 * x = 1 face a released set (-bcK_release: free nodes on springs) twisting about x until t = 1. */
static PetscErrorCode build(MPI_Comm comm, int res, const pbng_grid_elements *el, int curved, int released, pbng_dmesh *dm, pbng_halo *halo,
                            pbng_bc_list *bcs)
{
  pbng_mesh mesh;
  const double clamp[6] = {0, 0, 0, 0, 1, 1}, end[6] = {1, 0, 0, 1, 1, 1};
  const pbng_motion twist = {.axis = {1, 0, 0}, .center = {1, 0.5, 0.5}, .rotation_rate = 0.3};

  PetscFunctionBeginUser;
  PetscCall(pbng_generate_res_box(res, el, &mesh));
  for (int64_t i = 0; curved && i < mesh.nnodes; ++i) { /* a smooth map: no element stays affine (the general geometry) */
    double *X = &mesh.X[3 * i];
    X[0] += 0.03 * sin(2.0 * X[1]), X[1] += 0.02 * sin(3.0 * X[2]), X[2] += 0.04 * sin(X[0] + X[1]);
  }
  PetscCall(PetscMemzero(bcs, sizeof(*bcs)));
  PetscCall(pbng_bc_add_box(bcs, "clamp", clamp, NULL));
  if (released) {
    PetscCall(pbng_bc_add_box(bcs, "twisted", end, &twist));
    PetscCall(pbng_bc_set_release(bcs, 1, 1.0));
  }
  PetscCall(test_build_subdomain(comm, &mesh, bcs, dm, halo));
  PetscFunctionReturn(0);
}

static PetscErrorCode check_numbering(const pbng_dmesh *dm, const pbng_dof_map *map)
{
  int size;
  int64_t *owner_dof; /* global node -> dof as its owner numbered it (-1 held) */
  int64_t *mine, *all, nall = 0;
  int *counts, *displs, n = 2 * dm->nowned;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(dm->comm, &size));
  PetscCall(PetscMalloc3(size, &counts, size, &displs, 2 * dm->nowned + 1, &mine));
  for (int32_t i = 0; i < dm->nowned; ++i) mine[2 * i] = dm->global_node[i], mine[2 * i + 1] = map->node_dof[i];
  PetscCallMPI(MPI_Allgather(&n, 1, MPI_INT, counts, 1, MPI_INT, dm->comm));
  for (int r = 0; r < size; ++r) displs[r] = (int)nall, nall += counts[r];
  PetscCall(PetscMalloc1(nall + 1, &all));
  PetscCallMPI(MPI_Allgatherv(mine, n, MPI_INT64_T, all, counts, displs, MPI_INT64_T, dm->comm));
  PetscCall(PetscMalloc1(dm->nglobal_nodes, &owner_dof));
  int64_t *seen;
  PetscCall(PetscCalloc1(map->nglobal + 1, &seen));
  for (int64_t k = 0; k < nall; k += 2) {
    owner_dof[all[k]] = all[k + 1];
    if (all[k + 1] >= 0) {
      check(all[k + 1] < map->nglobal, "index in range");
      if (all[k + 1] < map->nglobal) seen[all[k + 1]]++;
    }
  }
  for (int64_t d = 0; d < map->nglobal; ++d) check(seen[d] == 1, "every index used exactly once");
  check(nall / 2 == dm->nglobal_nodes, "every node owned once");
  for (int32_t i = 0; i < dm->nfree; ++i) check(map->node_dof[i] == map->first + i, "owned free nodes contiguous");
  for (int32_t i = dm->nowned; i < dm->nlocal; ++i)
    check(map->node_dof[i] == (dm->node_bc[i] >= 0 ? -1 : owner_dof[dm->global_node[i]]), "ghost carries its owner's index");
  PetscCall(PetscFree(seen));
  PetscCall(PetscFree(owner_dof));
  PetscCall(PetscFree(all));
  PetscCall(PetscFree3(counts, displs, mine));
  PetscFunctionReturn(0);
}

/* f(x) of the owned free nodes (ghosts brought up to date first). */
static PetscErrorCode free_forces(pbng_problem *pb, double *f)
{
  PetscFunctionBeginUser;
  PetscCall(pbng_problem_update_ghosts(pb));
  for (int32_t i = 0; i < pb->dm->nfree; ++i) pbng_node_force(pb, i, pb->x, &f[3 * i], NULL, 0);
  PetscFunctionReturn(0);
}

static double uniform(uint64_t *s)
{
  *s ^= *s << 13, *s ^= *s >> 7, *s ^= *s << 17;
  return (double)(*s >> 11) / 9007199254740992.0 - 0.5;
}

/* The modified element matrices' diagonal blocks are PBNG's node blocks (pbng_node_force's A); for StVK
 * they exceed them by a multiple of I (g.S+ g against max(g.S g, 0)). Quasistatic, no weak constraints:
 * A holds element terms only. */
static PetscErrorCode check_modified_diagonal(const pbng_problem *pb, const pbng_dof_map *map, Mat K)
{
  const pbng_dmesh *dm = pb->dm;
  double worst = 0.0, scale = 0.0, least = 0.0;

  PetscFunctionBeginUser;
  for (int32_t i = 0; i < dm->nfree; ++i) {
    PetscInt rows[3];
    PetscScalar Kii[9];
    double f[3], A[9];
    for (int d = 0; d < 3; ++d) rows[d] = 3 * (PetscInt)map->node_dof[i] + d;
    PetscCall(MatGetValues(K, 3, rows, 3, rows, Kii));
    pbng_node_force(pb, i, pb->x, f, A, 0);
    const double shift = pb->mat.kind == PBNG_MATERIAL_STVK ? (Kii[0] - A[0]) : 0.0; /* the multiple of I */
    least = PetscMin(least, shift);
    for (int k = 0; k < 9; ++k) {
      worst = PetscMax(worst, PetscAbsReal(Kii[k] - A[k] - (k % 4 == 0 ? shift : 0.0)));
      scale = PetscMax(scale, PetscAbsReal(A[k]));
    }
  }
  char what[160];
  snprintf(what, sizeof(what), "%s, %s: modified matrix's diagonal blocks = PBNG's node blocks (+ c I, c >= 0, for StVK) (err %.2e of %.2e)",
           dm->etype->name, pbng_material_kind_name(pb->mat.kind), worst, scale);
  check(worst <= 1e-12 * scale && least >= -1e-12 * scale, what);
  PetscFunctionReturn(0);
}

/* An elastoplastic state: each element's plastic strain a smooth function of its global id (the same
 * on every rank holding a copy), |eps_p| up to ~0.1. */
static PetscErrorCode set_plastic_state(pbng_problem *pb)
{
  const pbng_plasticity p = {.yield = 0.01, .creep = 1.0, .max = 0.5};

  PetscFunctionBeginUser;
  PetscCall(pbng_problem_set_plasticity(pb, &p, 0.1));
  for (int32_t e = 0; e < pb->dm->nelems; ++e)
    for (int c = 0; c < 6; ++c) pb->plastic_strain[6 * e + c] = 0.05 * sin(1.7 * (double)pb->dm->global_elem[e] + 0.9 * c);
  PetscFunctionReturn(0);
}

/* K v = -(f(x + h v) - f(x - h v)) / 2h for the exact stiffness; the projected and modified ones are
 * symmetric PSD. plastic: StVK with a plastic strain and the released set's springs (build). */
static PetscErrorCode check_stiffness(pbng_dmesh *dm, pbng_halo *halo, const pbng_bc_list *bcs, const pbng_dof_map *map,
                                      pbng_material_kind kind, int plastic)
{
  pbng_problem pb;
  pbng_material mat;
  const double g[3] = {0, -9.8, 0}, h = 1e-6;
  uint64_t seed = 12345 + 77 * (uint64_t)dm->rank + (uint64_t)kind;
  double *fp, *fm, *v, *x0;
  Mat K;
  Vec vv, Kv;
  char what[160];

  PetscFunctionBeginUser;
  pbng_material_init(&mat, kind, 1e4, 0.3);
  PetscCall(pbng_problem_create(dm, bcs, &mat, NULL, 10.0, g, PBNG_MODE_QUASISTATIC, 0.033, &pb));
  pb.halo = halo;
  if (plastic) {
    PetscCall(set_plastic_state(&pb));
    PetscCall(pbng_problem_set_handles(&pb, 1.0, 1e3));
    pbng_problem_set_time(&pb, 0.5); /* the released set holds */
  }
  for (int32_t i = 0; i < dm->nfree; ++i)
    for (int d = 0; d < 3; ++d) pb.x[3 * i + d] += 0.05 * uniform(&seed);
  PetscCall(pbng_problem_update_ghosts(&pb));
  PetscCall(pbng_stiffness_create(&pb, map, &K));
  PetscCall(pbng_stiffness_assemble(&pb, map, PBNG_HESSIAN_EXACT, K));
  PetscCall(MatCreateVecs(K, &vv, &Kv));
  PetscCall(PetscMalloc4(3 * dm->nfree + 1, &fp, 3 * dm->nfree + 1, &fm, 3 * dm->nfree + 1, &v, 3 * dm->nlocal + 1, &x0));
  for (int32_t k = 0; k < 3 * dm->nfree; ++k) v[k] = uniform(&seed);
  {
    PetscScalar *a;
    PetscCall(VecGetArray(vv, &a));
    for (int32_t k = 0; k < 3 * dm->nfree; ++k) a[k] = v[k];
    PetscCall(VecRestoreArray(vv, &a));
  }
  PetscCall(MatMult(K, vv, Kv));
  for (int32_t k = 0; k < 3 * dm->nlocal; ++k) x0[k] = pb.x[k];
  for (int32_t k = 0; k < 3 * dm->nfree; ++k) pb.x[k] = x0[k] + h * v[k];
  PetscCall(free_forces(&pb, fp));
  for (int32_t k = 0; k < 3 * dm->nfree; ++k) pb.x[k] = x0[k] - h * v[k];
  PetscCall(free_forces(&pb, fm));
  {
    const PetscScalar *a;
    double err = 0.0, scale = 0.0;
    PetscCall(VecGetArrayRead(Kv, &a));
    for (int32_t k = 0; k < 3 * dm->nfree; ++k) {
      const double fd = -(fp[k] - fm[k]) / (2 * h);
      err = PetscMax(err, PetscAbsReal(fd - a[k]));
      scale = PetscMax(scale, PetscAbsReal(a[k]));
    }
    PetscCall(VecRestoreArrayRead(Kv, &a));
    snprintf(what, sizeof(what), "%s, %s%s: K v against force differences (err %.2e of %.2e)", dm->etype->name, pbng_material_kind_name(kind),
             plastic ? " (plastic, released set)" : "", err, scale);
    check(err <= 1e-5 * scale && scale > 0, what);
  }
  for (pbng_hessian_kind projected = PBNG_HESSIAN_PSD_ELEMENT; projected <= PBNG_HESSIAN_MODIFIED; ++projected) {
    const char *how = projected == PBNG_HESSIAN_PSD_ELEMENT ? "element-projected" : (projected == PBNG_HESSIAN_PSD_STRESS ? "stress-projected" : "modified");
    PetscCall(pbng_stiffness_assemble(&pb, map, projected, K));
    PetscBool symmetric;
    PetscCall(MatIsSymmetric(K, 1e-9, &symmetric));
    snprintf(what, sizeof(what), "%s, %s stiffness symmetric", dm->etype->name, how);
    check(symmetric, what);
    PetscScalar vKv;
    PetscCall(MatMult(K, vv, Kv));
    PetscCall(VecDot(vv, Kv, &vKv));
    snprintf(what, sizeof(what), "%s, %s, %s stiffness: v^T K v >= 0", dm->etype->name, pbng_material_kind_name(kind), how);
    check(vKv >= 0, what);
    if (projected == PBNG_HESSIAN_MODIFIED) PetscCall(check_modified_diagonal(&pb, map, K));
  }
  PetscCall(PetscFree4(fp, fm, v, x0));
  PetscCall(VecDestroy(&vv));
  PetscCall(VecDestroy(&Kv));
  PetscCall(MatDestroy(&K));
  PetscCall(pbng_problem_destroy(&pb));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  pbng_dmesh dm;
  pbng_halo halo;
  pbng_bc_list bcs;
  pbng_dof_map map;
  int rank, all_failures;

  const struct {
    int res;
    pbng_grid_elements el;
    int curved;
  } grids[] = {{7, {PBNG_ELEMENT_TET4, PBNG_TET_SPLIT_FIVE}, 0},  {4, {PBNG_ELEMENT_TET10, PBNG_TET_SPLIT_FIVE}, 0},
               {3, {PBNG_ELEMENT_TET20, PBNG_TET_SPLIT_SIX}, 0},  {5, {PBNG_ELEMENT_HEX8, PBNG_TET_SPLIT_FIVE}, 0},
               {3, {PBNG_ELEMENT_HEX27, PBNG_TET_SPLIT_FIVE}, 0}, {4, {PBNG_ELEMENT_TET10, PBNG_TET_SPLIT_SIX}, 1},
               {3, {PBNG_ELEMENT_HEX27, PBNG_TET_SPLIT_FIVE}, 1}};

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  for (size_t g = 0; g < sizeof(grids) / sizeof(grids[0]); ++g) {
    PetscCall(build(PETSC_COMM_WORLD, grids[g].res, &grids[g].el, grids[g].curved, 0, &dm, &halo, &bcs));
    PetscCall(pbng_dof_map_create(&dm, &halo, &map));
    PetscCall(check_numbering(&dm, &map));
    for (int k = 0; k < PBNG_MATERIAL_COUNT; ++k) PetscCall(check_stiffness(&dm, &halo, &bcs, &map, (pbng_material_kind)k, 0));
    PetscCall(pbng_dof_map_destroy(&map));
    PetscCall(pbng_halo_destroy(&halo));
    PetscCall(pbng_dmesh_destroy(&dm));
  }
  /* elastoplastic StVK with a released set: linear tetrahedra, and the quadrature kinds (one eps_p per
   * element at every quadrature point) */
  const struct {
    int res;
    pbng_grid_elements el;
  } plastic_grids[] = {{6, {PBNG_ELEMENT_TET4, PBNG_TET_SPLIT_FIVE}},
                       {4, {PBNG_ELEMENT_TET10, PBNG_TET_SPLIT_FIVE}},
                       {5, {PBNG_ELEMENT_HEX8, PBNG_TET_SPLIT_FIVE}},
                       {3, {PBNG_ELEMENT_HEX27, PBNG_TET_SPLIT_FIVE}}};
  for (size_t g = 0; g < sizeof(plastic_grids) / sizeof(plastic_grids[0]); ++g) {
    PetscCall(build(PETSC_COMM_WORLD, plastic_grids[g].res, &plastic_grids[g].el, 0, 1, &dm, &halo, &bcs));
    PetscCall(pbng_dof_map_create(&dm, &halo, &map));
    PetscCall(check_stiffness(&dm, &halo, &bcs, &map, PBNG_MATERIAL_STVK, 1));
    PetscCall(pbng_dof_map_destroy(&map));
    PetscCall(pbng_halo_destroy(&halo));
    PetscCall(pbng_dmesh_destroy(&dm));
  }
  PetscCallMPI(MPI_Allreduce(&failures, &all_failures, 1, MPI_INT, MPI_SUM, PETSC_COMM_WORLD));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  if (rank == 0) printf("test_assembly: %d checks on rank 0, %d failed on all ranks\n", checks, all_failures);
  PetscCall(PetscFinalize());
  return all_failures != 0;
}
