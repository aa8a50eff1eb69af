#include "solvers/assembly.h"
#include "core/stress_derivative.h"
#include "solvers/psd_projection.h"

/* Distinct free neighbours (itself included) of owned free node i, split into owned and ghost. */
static void count_neighbours(const pbng_problem *pb, const pbng_dof_map *map, int32_t i, int64_t *mark, PetscInt *d, PetscInt *o)
{
  const pbng_dmesh *dm = pb->dm;
  *d = *o = 0;
  for (int32_t k = dm->adj_start[i]; k < dm->adj_start[i + 1]; ++k) {
    const int32_t *t = &dm->elems[4 * (dm->adj[k] >> 2)];
    for (int a = 0; a < 4; ++a) {
      const int32_t j = t[a];
      if (map->node_dof[j] < 0 || mark[j] == i) continue;
      mark[j] = i;
      if (j < dm->nowned) ++*d;
      else ++*o;
    }
  }
}

PetscErrorCode pbng_stiffness_create(const pbng_problem *pb, const pbng_dof_map *map, Mat *K)
{
  const pbng_dmesh *dm = pb->dm;
  PetscInt *dnnz, *onnz;
  int64_t *mark;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc3(dm->nfree + 1, &dnnz, dm->nfree + 1, &onnz, dm->nlocal + 1, &mark));
  for (int32_t j = 0; j < dm->nlocal; ++j) mark[j] = -1;
  for (int32_t i = 0; i < dm->nfree; ++i) count_neighbours(pb, map, i, mark, &dnnz[i], &onnz[i]);
  PetscCall(MatCreate(dm->comm, K));
  PetscCall(MatSetSizes(*K, 3 * dm->nfree, 3 * dm->nfree, 3 * map->nglobal, 3 * map->nglobal));
  PetscCall(MatSetBlockSize(*K, 3));
  PetscCall(MatSetType(*K, MATAIJ));
  PetscCall(MatXAIJSetPreallocation(*K, 3, dnnz, onnz, NULL, NULL));
  PetscCall(MatSetOption(*K, MAT_NEW_NONZERO_ALLOCATION_ERR, PETSC_TRUE));
  PetscCall(PetscFree3(dnnz, onnz, mark));
  PetscFunctionReturn(0);
}

/* The 12x12 element matrix of element e at the current positions. */
static PetscErrorCode element_matrix(const pbng_problem *pb, int32_t e, PetscBool project_psd, double Ke[144])
{
  const pbng_tet_record *rec = &pb->geo.records[e];
  const pbng_tet_shape *sh = &pb->geo.shapes[rec->shape];
  const double *x = pb->x;
  double F[9], D[81];

  PetscFunctionBeginUser;
  pbng_tet_deformation_gradient(&x[3 * rec->node[0]], &x[3 * rec->node[1]], &x[3 * rec->node[2]], &x[3 * rec->node[3]], sh->B, F);
  pbng_stress_derivative(&pb->mat, F, D);
  pbng_tet_stiffness(D, sh->B, sh->V, Ke);
  if (project_psd) PetscCall(pbng_project_psd(12, Ke));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_stiffness_assemble(const pbng_problem *pb, const pbng_dof_map *map, PetscBool project_psd, Mat K)
{
  const pbng_dmesh *dm = pb->dm;

  PetscFunctionBeginUser;
  PetscCall(MatZeroEntries(K));
  for (int32_t e = 0; e < dm->nelems; ++e) {
    const int32_t *t = pb->geo.records[e].node;
    double Ke[144];
    int owned_row = 0;
    for (int a = 0; a < 4; ++a) owned_row |= t[a] < dm->nfree;
    if (!owned_row) continue;
    PetscCall(element_matrix(pb, e, project_psd, Ke));
    for (int a = 0; a < 4; ++a) { /* only rows this rank owns: all their elements are local */
      if (t[a] >= dm->nfree) continue;
      const PetscInt row = (PetscInt)map->node_dof[t[a]];
      for (int b = 0; b < 4; ++b) {
        if (map->node_dof[t[b]] < 0) continue;
        const PetscInt col = (PetscInt)map->node_dof[t[b]];
        PetscScalar block[9];
        for (int i = 0; i < 3; ++i)
          for (int k = 0; k < 3; ++k) block[3 * i + k] = Ke[12 * (3 * a + i) + 3 * b + k];
        PetscCall(MatSetValuesBlocked(K, 1, &row, 1, &col, block, ADD_VALUES));
      }
    }
  }
  if (pb->mode == PBNG_MODE_DYNAMIC)
    for (int32_t i = 0; i < dm->nfree; ++i) {
      const PetscInt row = (PetscInt)map->node_dof[i];
      const double w = pb->mass[i] / (pb->dt * pb->dt);
      const PetscScalar block[9] = {w, 0, 0, 0, w, 0, 0, 0, w};
      PetscCall(MatSetValuesBlocked(K, 1, &row, 1, &row, block, ADD_VALUES));
    }
  PetscCall(MatAssemblyBegin(K, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(K, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}
