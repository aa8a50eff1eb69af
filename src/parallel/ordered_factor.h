/* A direct solve that does not depend on the partition: a preconditioner (PCSHELL) that gathers the whole
 * matrix on every rank that owns unknowns of it (all of them, unless the level lies on fewer ranks) in the input's numbering (the nodes by increasing global id, their unknowns in
 * order), factors it there (Cholesky; MUMPS where PETSc has it) and solves, each rank keeping its own
 * unknowns. Every rank factors the same matrix in the same numbering, so the solution is bitwise the
 * same on any number of ranks. PCREDUNDANT, used before, gathers in PETSc's numbering, which follows the
 * partition: the factorisation's ordering, and so its round-off, changed with it (on the muscles' ill-
 * conditioned coarsest level, k = 1e8 bindings, 1e-13 of the arm per cycle). For small coarsest levels. */
#ifndef PBNG_PARALLEL_ORDERED_FACTOR_H
#define PBNG_PARALLEL_ORDERED_FACTOR_H

#include <petscksp.h>
#include <stdint.h>
#include "parallel/reduce.h"

/* Collective. Makes pc this solve for a parallel AIJ matrix of bs unknowns per node, this rank owning
 * the nodes of global ids ids[0..n), PETSc's nodes [first, first + n) (unknowns bs first ..) in that order. The factorisation runs at
 * each PCSetUp (a new matrix state); options of the inner solve take the prefix `<pc's prefix>ordered_`
 * (e.g. -fas_coarse_ordered_pc_factor_mat_solver_type petsc). meter (or NULL; it must outlive pc): the setups' and
 * solves' time and communication are added to it. */
PetscErrorCode pbng_ordered_factor_set(PC pc, int bs, int64_t first, int64_t n, const int64_t *ids, pbng_work_meter *meter);

#endif
