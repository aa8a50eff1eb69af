/* The assembled stiffness (negative force Jacobian) of the discrete problem over the free unknowns,
 * for the Newton baseline: a PETSc block-3 AIJ matrix distributed like the subdomains, each row owned
 * by the rank owning its node, exactly preallocated. Element matrices are the exact Hessians
 * (pbng_tet_stiffness), optionally made PSD (pbng_project_psd) either as the 12x12 element matrix or
 * through the 9x9 stress derivative dP/dF (K_e = V G^T D G is PSD when D is: the eigensystem
 * approach of Smith et al. 2019, computed numerically). */
#ifndef PBNG_PROBLEM_ASSEMBLY_H
#define PBNG_PROBLEM_ASSEMBLY_H

#include <petscmat.h>
#include "parallel/dofs.h"
#include "problem/problem.h"

typedef enum {
  PBNG_HESSIAN_EXACT = 0,          /* unmodified element Hessians */
  PBNG_HESSIAN_PSD_ELEMENT = 1,    /* clamp the eigenvalues of the 12x12 element matrix */
  PBNG_HESSIAN_PSD_STRESS = 2,     /* clamp the eigenvalues of the 9x9 dP/dF */
  PBNG_HESSIAN_MODIFIED = 3        /* PBNG's modified Hessian (Eq. 36-37) as a whole element matrix:
                                      K_ab = V (2 mu (g_a . g_b) I + lambda c_a c_b^T), c = cof(F) g,
                                      SPD without an eigendecomposition; its diagonal blocks are PBNG's */
} pbng_hessian_kind;

PetscErrorCode pbng_stiffness_create(const pbng_problem *pb, const pbng_dof_map *map, Mat *K);
/* K <- d^2 E / dx^2 at the current positions (plus m/dt^2 on the diagonal in dynamic mode). */
PetscErrorCode pbng_stiffness_assemble(const pbng_problem *pb, const pbng_dof_map *map, pbng_hessian_kind kind, Mat K);

/* Element e's (3 nen) x (3 nen) matrix (nen its own node count; row 3a+i, column 3b+k) at the current
 * positions: exact, projected or PBNG's modified form. Thread-safe; 0, or the projection's status. */
int pbng_element_matrix(const pbng_problem *pb, int32_t e, pbng_hessian_kind kind, double *Ke);

/* GAMG's near-null space on K: the six rigid-body modes at the rest positions of the free nodes. */
PetscErrorCode pbng_stiffness_set_rigid_body_modes(const pbng_problem *pb, Mat K);

/* The twelve linear displacement fields u = A X + b at the rest positions of the free nodes (the rigid-body modes among
 * them), orthonormalised, as K's near-null space: an aggregation prolongator (a QR factor of them per aggregate) then
 * reproduces every linear field (-multilevel_aggregation). */
PetscErrorCode pbng_stiffness_set_linear_modes(const pbng_problem *pb, Mat K);

#endif
