/* Elastoplastic state of the problem (seed position-based-continuous-materials.txt Sec. 4.2; docs/cloth.md
 * "Plasticity"): one plastic strain eps_p per local linear tetrahedron, updated between frames. */
#include "solvers/problem.h"
#include "core/mat3.h"

PetscErrorCode pbng_problem_set_plasticity(pbng_problem *pb, const pbng_plasticity *p, double dt)
{
  const char *why = pbng_plasticity_check(p, dt);

  PetscFunctionBeginUser;
  PetscCheck(!why, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "%s (-plastic_yield %g, -plastic_creep %g, -plastic_max %g, frame step %g)", why,
             p->yield, p->creep, p->max, dt);
  PetscCheck(pb->mat.kind == PBNG_MATERIAL_STVK, PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP,
             "plasticity (-plastic_*) needs -material stvk: the seed's additive split of the Green strain (got %s)", pbng_material_kind_name(pb->mat.kind));
  PetscCheck(!pb->geo.ref, PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP,
             "plasticity (-plastic_*) is implemented for meshes of linear tetrahedra only (one plastic strain per element)");
  pb->plasticity = *p;
  PetscCall(PetscCalloc1(6 * (int64_t)pb->dm->nelems + 1, &pb->plastic_strain));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_problem_plastic_update(pbng_problem *pb, double dt, int64_t *changed)
{
  const pbng_dmesh *dm = pb->dm;
  int64_t mine = 0;

  PetscFunctionBeginUser;
  if (!pb->plastic_strain) {
    *changed = 0;
    PetscFunctionReturn(0);
  }
#pragma omp parallel for schedule(static) reduction(+ : mine)
  for (int32_t e = 0; e < dm->nelems; ++e) {
    const pbng_tet_record *rec = &pb->geo.records[e];
    const int32_t *t = rec->node;
    double F[9];
    pbng_tet_deformation_gradient(&pb->x[3 * t[0]], &pb->x[3 * t[1]], &pb->x[3 * t[2]], &pb->x[3 * t[3]], pb->geo.shapes[rec->shape].B, F);
    const int moved = pbng_plastic_update_at(&pb->plasticity, dt, F, &pb->plastic_strain[6 * e]);
    if (e < dm->nowned_elems) mine += moved;
  }
  PetscCallMPI(MPI_Allreduce(&mine, changed, 1, MPI_INT64_T, MPI_SUM, dm->comm));
  PetscFunctionReturn(0);
}
