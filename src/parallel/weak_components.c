#include "parallel/weak_components.h"
#include "parallel/dist_graph.h"
#include <string.h>

/* The labelling's state on this process: the constraints at each of its nodes (CSR start, item), the labels of its
 * nodes and constraints, and the ids it asks other processes about (each sorted, each once): the nodes of its
 * constraints and the constraints at its nodes. */
typedef struct {
  MPI_Comm comm;
  const pbng_mesh_slice *s;
  const int64_t *node_range;
  int64_t *weak_range;
  int32_t *rows; /* the slice's constraints' nodes, [nweak][PBNG_WC_MAX_NODES] */
  int64_t nnodes, nweak;
  int64_t *start, *item;
  int64_t *node_label, *weak_label;
  PetscInt nasked_nodes, *asked_nodes, nasked_weak, *asked_weak;
  int64_t *answer; /* [max(nasked_nodes, nasked_weak, nnodes)] */
} labelling;

static void answer_int64(void *ctx, int64_t local, void *item) { *(int64_t *)item = ((const int64_t *)ctx)[local]; }
static void answer_int32(void *ctx, int64_t local, void *item) { *(int32_t *)item = ((const int32_t *)ctx)[local]; }

/* ids[*n] (PetscMalloc'd): the n values, sorted, each once. */
static PetscErrorCode unique_ids(int64_t n, const int64_t *values, PetscInt *m, PetscInt **ids)
{
  PetscFunctionBeginUser;
  PetscCheck(n < PETSC_MAX_INT, PETSC_COMM_SELF, PETSC_ERR_SUP, "weak constraints: too many ids to ask of other processes");
  PetscCall(PetscMalloc1(n + 1, ids));
  for (int64_t k = 0; k < n; ++k) (*ids)[k] = (PetscInt)values[k];
  *m = (PetscInt)n;
  PetscCall(PetscSortRemoveDupsInt(m, *ids));
  PetscFunctionReturn(0);
}

static int64_t answer_of(PetscInt n, const PetscInt *ids, const int64_t *answer, int64_t id)
{
  PetscInt at = -1;
  (void)PetscFindInt((PetscInt)id, n, ids, &at); /* found: every id was asked */
  return answer[at];
}

static PetscErrorCode labelling_create(MPI_Comm comm, const pbng_mesh_slice *s, const int64_t *node_range, labelling *L)
{
  int64_t *ids, n = 0;

  PetscFunctionBeginUser;
  memset(L, 0, sizeof(*L));
  L->comm = comm, L->s = s, L->node_range = node_range;
  L->nnodes = s->node_end - s->node_begin, L->nweak = s->weak_end - s->weak_begin;
  PetscCall(pbng_slice_weak_ranges(comm, s, &L->weak_range));
  PetscCall(pbng_mesh_slice_weak_rows(s, &L->rows));
  PetscCall(pbng_rows_by_node(comm, node_range, L->nweak, PBNG_WC_MAX_NODES, L->rows, s->weak_begin, "weak-constraint sets", &L->start, &L->item));
  PetscCall(PetscMalloc2(L->nnodes + 1, &L->node_label, L->nweak + 1, &L->weak_label));
  for (int64_t i = 0; i < L->nnodes; ++i) L->node_label[i] = s->node_begin + i;
  PetscCall(PetscMalloc1(L->nweak * PBNG_WC_MAX_NODES + 1, &ids));
  for (int64_t k = 0; k < L->nweak * PBNG_WC_MAX_NODES; ++k)
    if (L->rows[k] >= 0) ids[n++] = L->rows[k];
  PetscCall(unique_ids(n, ids, &L->nasked_nodes, &L->asked_nodes));
  PetscCall(PetscFree(ids));
  PetscCall(unique_ids(L->start[L->nnodes], L->item, &L->nasked_weak, &L->asked_weak));
  PetscCall(PetscMalloc1(PetscMax(PetscMax(L->nasked_nodes, L->nasked_weak), L->nnodes) + 1, &L->answer));
  PetscFunctionReturn(0);
}

static PetscErrorCode labelling_destroy(labelling *L)
{
  PetscFunctionBeginUser;
  PetscCall(PetscFree(L->weak_range));
  PetscCall(PetscFree(L->rows));
  PetscCall(PetscFree(L->start));
  PetscCall(PetscFree(L->item));
  PetscCall(PetscFree2(L->node_label, L->weak_label));
  PetscCall(PetscFree(L->asked_nodes));
  PetscCall(PetscFree(L->asked_weak));
  PetscCall(PetscFree(L->answer));
  PetscFunctionReturn(0);
}

/* Each constraint's label: the least of its nodes'. */
static PetscErrorCode label_constraints(labelling *L)
{
  PetscFunctionBeginUser;
  PetscCall(pbng_ask_range_owners(L->comm, L->node_range, L->nasked_nodes, L->asked_nodes, sizeof(int64_t), answer_int64, L->node_label, L->answer));
  for (int64_t c = 0; c < L->nweak; ++c) {
    L->weak_label[c] = INT64_MAX;
    for (int j = 0; j < PBNG_WC_MAX_NODES && L->rows[c * PBNG_WC_MAX_NODES + j] >= 0; ++j)
      L->weak_label[c] = PetscMin(L->weak_label[c], answer_of(L->nasked_nodes, L->asked_nodes, L->answer, L->rows[c * PBNG_WC_MAX_NODES + j]));
  }
  PetscFunctionReturn(0);
}

/* Each node's label lowered to the least of its constraints'; *changed when one was. */
static PetscErrorCode label_nodes(labelling *L, int *changed)
{
  PetscFunctionBeginUser;
  PetscCall(pbng_ask_range_owners(L->comm, L->weak_range, L->nasked_weak, L->asked_weak, sizeof(int64_t), answer_int64, L->weak_label, L->answer));
  for (int64_t i = 0; i < L->nnodes; ++i)
    for (int64_t q = L->start[i]; q < L->start[i + 1]; ++q) {
      const int64_t l = answer_of(L->nasked_weak, L->asked_weak, L->answer, L->item[q]);
      if (l < L->node_label[i]) L->node_label[i] = l, *changed = 1;
    }
  PetscFunctionReturn(0);
}

/* Each node of a constraint told what its label's node answers (values: a per-node array of the answering process;
 * size its items' bytes) into L->answer, by the node's position among the labels asked (*ids[*n], PetscMalloc'd). */
static PetscErrorCode ask_labels(labelling *L, size_t size, pbng_node_answer answer, void *values, PetscInt *n, PetscInt **ids)
{
  int64_t *labels, m = 0;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(L->nnodes + 1, &labels));
  for (int64_t i = 0; i < L->nnodes; ++i)
    if (L->start[i + 1] > L->start[i]) labels[m++] = L->node_label[i];
  PetscCall(unique_ids(m, labels, n, ids));
  PetscCall(PetscFree(labels));
  PetscCall(pbng_ask_range_owners(L->comm, L->node_range, *n, *ids, size, answer, values, L->answer));
  PetscFunctionReturn(0);
}

/* Pointer jumping: each node's label lowered to its label's label; *changed when one was. */
static PetscErrorCode jump(labelling *L, int *changed)
{
  PetscInt n, *ids;

  PetscFunctionBeginUser;
  PetscCall(ask_labels(L, sizeof(int64_t), answer_int64, L->node_label, &n, &ids));
  for (int64_t i = 0; i < L->nnodes; ++i) {
    if (L->start[i + 1] == L->start[i]) continue;
    const int64_t l = answer_of(n, ids, L->answer, L->node_label[i]);
    if (l < L->node_label[i]) L->node_label[i] = l, *changed = 1;
  }
  PetscCall(PetscFree(ids));
  PetscFunctionReturn(0);
}

/* Each node of a constraint given its label's part (answered before any is changed: a label's node keeps its own). */
static PetscErrorCode take_label_parts(labelling *L, int32_t *part)
{
  PetscInt n, *ids;

  PetscFunctionBeginUser;
  PetscCall(ask_labels(L, sizeof(int32_t), answer_int32, part, &n, &ids));
  const int32_t *parts = (const int32_t *)L->answer;
  for (int64_t i = 0; i < L->nnodes; ++i) {
    if (L->start[i + 1] == L->start[i]) continue;
    PetscInt at = -1;
    (void)PetscFindInt((PetscInt)L->node_label[i], n, ids, &at); /* found: every label was asked */
    part[i] = parts[at];
  }
  PetscCall(PetscFree(ids));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_keep_weak_constraints_together(MPI_Comm comm, const pbng_mesh_slice *s, const int64_t *node_range, int32_t *part,
                                                   int64_t *group, int *rounds)
{
  labelling L;

  PetscFunctionBeginUser;
  *rounds = 0;
  for (int64_t i = 0; i < s->node_end - s->node_begin; ++i) group[i] = s->node_begin + i;
  if (s->nglobal_weak == 0) PetscFunctionReturn(0); /* every slice alike */
  PetscCall(labelling_create(comm, s, node_range, &L));
  for (int changed = 1; changed; ++*rounds) {
    changed = 0;
    PetscCall(label_constraints(&L));
    PetscCall(label_nodes(&L, &changed));
    PetscCall(jump(&L, &changed));
    PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &changed, 1, MPI_INT, MPI_MAX, comm));
  }
  PetscCall(take_label_parts(&L, part));
  memcpy(group, L.node_label, sizeof(int64_t) * (size_t)L.nnodes);
  PetscCall(labelling_destroy(&L));
  PetscFunctionReturn(0);
}

/* The least and the highest group id in part q, every process's nodes counted. */
static PetscErrorCode part_group_range(MPI_Comm comm, int64_t nnodes, const int64_t *group, const int32_t *part, int q, int64_t range[2])
{
  PetscFunctionBeginUser;
  range[0] = -INT64_MAX, range[1] = -1; /* range[0] holds the negated least id: one MAX reduction for both */
  for (int64_t i = 0; i < nnodes; ++i)
    if (part[i] == q) range[0] = PetscMax(range[0], -group[i]), range[1] = PetscMax(range[1], group[i]);
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, range, 2, MPI_INT64_T, MPI_MAX, comm));
  range[0] = -range[0];
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_fill_empty_parts(MPI_Comm comm, int64_t nnodes, const int64_t *group, int nparts, int32_t *part)
{
  int64_t *count;
  int8_t *tried;

  PetscFunctionBeginUser;
  PetscCall(PetscCalloc2(nparts, &count, nparts, &tried));
  for (int64_t i = 0; i < nnodes; ++i) ++count[part[i]];
  PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, count, nparts, MPI_INT64_T, MPI_SUM, comm));
  for (int p = 0; p < nparts; ++p) {
    if (count[p]) continue;
    memset(tried, 0, (size_t)nparts);
    for (;;) { /* the fullest part not tried that holds two groups or more gives its last one */
      int q = -1;
      for (int k = 0; k < nparts; ++k)
        if (!tried[k] && count[k] > 0 && (q < 0 || count[k] > count[q])) q = k;
      PetscCheck(q >= 0, comm, PETSC_ERR_ARG_OUTOFRANGE, "part %d is empty and no part holds two groups of nodes tied by weak constraints to give it one", p);
      int64_t range[2], moved = 0;
      PetscCall(part_group_range(comm, nnodes, group, part, q, range));
      tried[q] = 1;
      if (range[0] == range[1]) continue; /* q is one group */
      for (int64_t i = 0; i < nnodes; ++i)
        if (group[i] == range[1]) part[i] = p, ++moved;
      PetscCallMPI(MPI_Allreduce(MPI_IN_PLACE, &moved, 1, MPI_INT64_T, MPI_SUM, comm));
      count[q] -= moved, count[p] += moved;
      break;
    }
  }
  PetscCall(PetscFree2(count, tried));
  PetscFunctionReturn(0);
}
