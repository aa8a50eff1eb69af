/* Elastoplastic state of the problem (seed position-based-continuous-materials.txt Sec. 4.2; docs/cloth.md
 * "Plasticity in a run"): one plastic strain eps_p per local volume element (every kind; constant over
 * its quadrature points), updated between frames. */
#include "problem/problem.h"
#include "core/mat3.h"

/* E += w (F^T F - I) / 2. */
static void green_strain_add(const double F[9], double w, double E[9])
{
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b) E[3 * a + b] += w * 0.5 * (F[a] * F[b] + F[3 + a] * F[3 + b] + F[6 + a] * F[6 + b] - (a == b ? 1.0 : 0.0));
}

PetscErrorCode pbng_problem_set_plasticity(pbng_problem *pb, const pbng_plasticity *p, double dt)
{
  const char *why = pbng_plasticity_check(p, dt);

  PetscFunctionBeginUser; /* collective */
  PetscCheck(!why, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "%s (-plastic_yield %g, -plastic_creep %g, -plastic_max %g, frame step %g)", why,
             p->yield, p->creep, p->max, dt);
  PetscCheck(pb->mat.kind == PBNG_MATERIAL_STVK, PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP,
             "plasticity (-plastic_*) needs -material stvk: the seed's additive split of the Green strain (got %s)", pbng_material_kind_name(pb->mat.kind));
  int sheets = pb->geo.sheet != NULL, any = 0; /* a rank's elements may be volume elements only */
  PetscCallMPI(MPI_Allreduce(&sheets, &any, 1, MPI_INT, MPI_MAX, pb->dm->comm));
  PetscCheck(!any, PETSC_COMM_WORLD, PETSC_ERR_ARG_INCOMP,
             "plasticity (-plastic_*) is for volume elements: this mesh has sheets (tri3 membranes, bend4 stencils), whose material "
             "(-sheet_*) has no plastic strain (docs/cloth.md#plasticity-in-a-run); use a mesh of volume elements only");
  pb->plasticity = *p;
  PetscCall(PetscCalloc1(6 * (int64_t)pb->dm->nelems + 1, &pb->plastic_strain));
  PetscFunctionReturn(0);
}

void pbng_problem_mean_green_strain(const pbng_problem *pb, int32_t e, double E[9])
{
  const pbng_geometry *geo = &pb->geo;
  const int32_t *t = &pb->dm->elems[(int64_t)geo->nen * e];
  double V = 0.0;
  for (int k = 0; k < 9; ++k) E[k] = 0.0;
  if (!geo->ref) { /* linear tetrahedron: its one point */
    double F[9];
    pbng_tet_deformation_gradient(&pb->x[3 * t[0]], &pb->x[3 * t[1]], &pb->x[3 * t[2]], &pb->x[3 * t[3]], pbng_geometry_shape(geo, e)->B, F);
    green_strain_add(F, 1.0, E);
    return;
  }
  const pbng_element_reference *ref = pbng_geometry_ref(geo, e);
  if (ref->nq == 1) { /* one point (a linear tetrahedron in a mixed mesh): its E exactly */
    double F[9];
    pbng_geometry_qp_F(geo, ref, e, 0, t, pb->x, F);
    green_strain_add(F, 1.0, E);
    return;
  }
  for (int q = 0; q < ref->nq; ++q) {
    double F[9];
    const double Vq = pbng_geometry_qp_volume(geo, ref, e, q);
    pbng_geometry_qp_F(geo, ref, e, q, t, pb->x, F);
    green_strain_add(F, Vq, E);
    V += Vq;
  }
  for (int k = 0; k < 9; ++k) E[k] /= V;
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
  if (!pb->geo.ref) { /* linear tetrahedra: one point, E of its F */
#pragma omp parallel for schedule(static) reduction(+ : mine)
    for (int32_t e = 0; e < dm->nelems; ++e) {
      const pbng_tet_record *rec = &pb->geo.records[e];
      const int32_t *t = rec->node;
      double F[9];
      pbng_tet_deformation_gradient(&pb->x[3 * t[0]], &pb->x[3 * t[1]], &pb->x[3 * t[2]], &pb->x[3 * t[3]], pb->geo.shapes[rec->shape].B, F);
      const int moved = pbng_plastic_update_at(&pb->plasticity, dt, F, &pb->plastic_strain[6 * e]);
      if (e < dm->nowned_elems) mine += moved;
    }
  } else { /* every other kind: the flow at the element's volume-mean Green strain */
#pragma omp parallel for schedule(static) reduction(+ : mine)
    for (int32_t e = 0; e < dm->nelems; ++e) {
      double E[9], ep[9];
      pbng_problem_mean_green_strain(pb, e, E);
      pbng_strain_from_voigt(&pb->plastic_strain[6 * e], ep);
      const int moved = pbng_plastic_update(&pb->plasticity, dt, E, ep);
      pbng_strain_to_voigt(ep, &pb->plastic_strain[6 * e]);
      if (e < dm->nowned_elems) mine += moved;
    }
  }
  PetscCallMPI(MPI_Allreduce(&mine, changed, 1, MPI_INT64_T, MPI_SUM, dm->comm));
  PetscFunctionReturn(0);
}
