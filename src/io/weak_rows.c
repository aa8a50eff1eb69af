#include "io/weak_rows.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

PetscErrorCode pbng_weak_rows_alloc(int64_t n, pbng_weak_rows *rows)
{
  PetscFunctionBeginUser;
  rows->n = n;
  PetscCall(PetscMalloc5(PBNG_WC_MAX_NODES * n + 1, &rows->nodes, PBNG_WC_MAX_NODES * n + 1, &rows->weights, 9 * n + 1, &rows->stiffness,
                         5 * n + 1, &rows->spring, 3 * n + 1, &rows->target));
  for (int64_t k = 0; k < 3 * n; ++k) rows->target[k] = 0; /* files written before targets existed have none */
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_weak_rows_free(pbng_weak_rows *rows)
{
  PetscFunctionBeginUser;
  PetscCall(PetscFree5(rows->nodes, rows->weights, rows->stiffness, rows->spring, rows->target));
  memset(rows, 0, sizeof(*rows));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_weak_rows_pack(int64_t n, const pbng_weak_constraint *c, const int64_t *node_id, pbng_weak_rows *rows)
{
  PetscFunctionBeginUser;
  PetscCall(pbng_weak_rows_alloc(n, rows));
  for (int64_t k = 0; k < n; ++k) {
    for (int j = 0; j < PBNG_WC_MAX_NODES; ++j) {
      const int used = j < c[k].nnodes;
      rows->nodes[PBNG_WC_MAX_NODES * k + j] = used ? (node_id ? node_id[c[k].node[j]] : c[k].node[j]) : -1;
      rows->weights[PBNG_WC_MAX_NODES * k + j] = used ? c[k].a[j] : 0.0;
    }
    memcpy(&rows->stiffness[9 * k], c[k].K, sizeof(c[k].K));
    const double spring[5] = {c[k].k_n, c[k].k_t, c[k].n[0], c[k].n[1], c[k].n[2]};
    memcpy(&rows->spring[5 * k], spring, sizeof(spring));
    memcpy(&rows->target[3 * k], c[k].target, sizeof(c[k].target));
  }
  PetscFunctionReturn(0);
}

const char *pbng_weak_rows_unpack(const pbng_weak_rows *rows, int64_t nnodes, pbng_weak_constraint *c)
{
  for (int64_t k = 0; k < rows->n; ++k) {
    memset(&c[k], 0, sizeof(c[k]));
    for (int j = 0; j < PBNG_WC_MAX_NODES; ++j) {
      const int64_t node = rows->nodes[PBNG_WC_MAX_NODES * k + j];
      if (node < 0) break;
      if (node >= nnodes) return "a weak constraint references a node outside the part";
      c[k].node[j] = node;
      c[k].a[j] = rows->weights[PBNG_WC_MAX_NODES * k + j];
      c[k].nnodes = j + 1;
    }
    if (c[k].nnodes < 2) return "a weak constraint has fewer than two nodes";
    const double *sp = &rows->spring[5 * k];
    for (int p = 0; p < 5; ++p)
      if (!isfinite(sp[p])) return "a weak constraint has a non-finite stiffness or normal";
    if (sp[0] < 0 || sp[1] < 0) return "a weak constraint has a negative stiffness";
    pbng_weak_constraint_set_stiffness(&c[k], sp[0], sp[1], &sp[2]);
    for (int d = 0; d < 3; ++d) {
      c[k].target[d] = rows->target[3 * k + d];
      if (!isfinite(c[k].target[d])) return "a weak constraint has a non-finite target";
    }
  }
  return NULL;
}
