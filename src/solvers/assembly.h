/* The assembled stiffness (negative force Jacobian) of the discrete problem over the free unknowns,
 * for the Newton baseline: a PETSc block-3 AIJ matrix distributed like the subdomains, each row owned
 * by the rank owning its node, exactly preallocated. Element matrices are the exact Hessians
 * (pbng_tet_stiffness), optionally projected to PSD per element (pbng_project_psd). */
#ifndef PBNG_SOLVERS_ASSEMBLY_H
#define PBNG_SOLVERS_ASSEMBLY_H

#include <petscmat.h>
#include "parallel/dofs.h"
#include "solvers/problem.h"

PetscErrorCode pbng_stiffness_create(const pbng_problem *pb, const pbng_dof_map *map, Mat *K);
/* K <- d^2 E / dx^2 at the current positions (plus m/dt^2 on the diagonal in dynamic mode). */
PetscErrorCode pbng_stiffness_assemble(const pbng_problem *pb, const pbng_dof_map *map, PetscBool project_psd, Mat K);

#endif
