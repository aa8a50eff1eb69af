/* Weak constraints as table rows, the form they take in HDF5 files (partitioned meshes and results,
 * /constraints/weak/ in docs/output.md): per constraint a row of PBNG_WC_MAX_NODES node indices (-1
 * after the last node), a row of as many signed weights a_j = w0_j - w1_j (0 after the last), the
 * 9 entries of K_c (row-major), the spring parameters k_n, k_t, n (5 values; K_c follows from them), and the
 * target t (3 values: C = sum_j a_j x_j - t, the rest offset of a binding, -bind_distance; else 0). */
#ifndef PBNG_IO_WEAK_ROWS_H
#define PBNG_IO_WEAK_ROWS_H

#include <petscsys.h>
#include "core/weak_constraint.h"

typedef struct {
  int64_t n;
  int64_t *nodes;    /* [n][PBNG_WC_MAX_NODES] */
  double *weights;   /* [n][PBNG_WC_MAX_NODES] */
  double *stiffness; /* [n][9] */
  double *spring;    /* [n][5]: k_n, k_t, n_x, n_y, n_z */
  double *target;    /* [n][3]: the rest offset t (C = sum_j a_j x_j - t; 0 for a spring of zero rest length) */
} pbng_weak_rows;

PetscErrorCode pbng_weak_rows_alloc(int64_t n, pbng_weak_rows *rows);
PetscErrorCode pbng_weak_rows_free(pbng_weak_rows *rows);

/* Rows of n constraints; node indices mapped through node_id (e.g. local -> global) when given. */
PetscErrorCode pbng_weak_rows_pack(int64_t n, const pbng_weak_constraint *c, const int64_t *node_id, pbng_weak_rows *rows);

/* Constraints from rows (nodes, weights, spring; K_c is rebuilt from the spring), node indices
 * checked against 0..nnodes-1; NULL or a message naming the problem. */
const char *pbng_weak_rows_unpack(const pbng_weak_rows *rows, int64_t nnodes, pbng_weak_constraint *c);

#endif
