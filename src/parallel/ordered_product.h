/* Sparse products that do not depend on the partition: y = A x and y = A^T x for a parallel scalar AIJ
 * matrix A applied to bs components of each node (as MatCreateMAIJ would), every entry of y summed over
 * its terms in increasing order of the global ids (the input's numbering) of the nodes they come from.
 * PETSc's parallel AIJ product sums a row's on-rank columns first and its off-rank ones after, and the
 * transpose product adds other ranks' parts in the order they arrive: with those the multilevel
 * transfers differed by round-off between partitions, which ill-conditioned problems (k = 1e8 bindings)
 * amplified to 1e-8 of a body's size in one cycle. With these the products are bitwise the same on any
 * number of ranks and threads (docs/multilevel.md#determinism). */
#ifndef PBNG_PARALLEL_ORDERED_PRODUCT_H
#define PBNG_PARALLEL_ORDERED_PRODUCT_H

#include <petscmat.h>
#include <stdint.h>
#include "parallel/reduce.h"

/* Collective. A: assembled parallel AIJ (m x n local rows and columns); row_ids[m], col_ids[n]: the
 * global ids of this rank's rows and columns (distinct over all ranks). *shell is (bs m) x (bs n) and
 * supports MatMult, MatMultAdd, MatMultTranspose and MatMultTransposeAdd; A may be destroyed after. */
PetscErrorCode pbng_ordered_product_create(Mat A, int bs, const int64_t *row_ids, const int64_t *col_ids, Mat *shell);
/* Every product of shell from now on adds its time and communication to *meter (which must outlive shell). */
PetscErrorCode pbng_ordered_product_set_meter(Mat shell, pbng_work_meter *meter);

#endif
