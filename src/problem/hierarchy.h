/* The coarse levels of a multilevel run: each a complete problem (its own mesh, METIS partition,
 * boundary sets, subdomain, halo plan and discrete problem), built by the run (src/app/run_levels.c)
 * and used by the multilevel solver (src/methods/multilevel/multilevel.c), which adds the transfer operators. */
#ifndef PBNG_PROBLEM_HIERARCHY_H
#define PBNG_PROBLEM_HIERARCHY_H

#include "parallel/halo.h"
#include "problem/problem.h"

typedef struct {
  char name[PETSC_MAX_PATH_LEN + 32]; /* for messages and the report, e.g. "level 1 (generated Res-16 box)" */
  char source[32];   /* how its mesh was made: "generated", "file", "coarsened" */
  pbng_dmesh dm;
  pbng_halo halo;
  pbng_problem pb;
} pbng_coarse_level;

typedef struct {
  int nlevels;                /* including the finest */
  char fine_name[PETSC_MAX_PATH_LEN + 32];
  pbng_coarse_level *coarse;  /* [nlevels - 1]; coarse[0] is the coarsest (PETSc's level 0) */
} pbng_hierarchy;

PetscErrorCode pbng_hierarchy_destroy(pbng_hierarchy *h);

#endif
