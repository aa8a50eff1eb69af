#include "parallel/slice_sets.h"
#include "parallel/dist_graph.h"
#include "parallel/halo.h"
#include <string.h>

PetscErrorCode pbng_slice_sets_add_members(MPI_Comm comm, pbng_mesh_slice *s, int64_t n, const int64_t *pairs)
{
  int size, *dest;
  int64_t *range, *recv, nrecv;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  PetscCheck(n < INT32_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "%s: too many node set members read by one process", s->source);
  PetscCall(pbng_slice_ranges(comm, s, &range));
  PetscCall(PetscMalloc1(n + 1, &dest)); /* each (set, node) pair to the process whose slice holds the node */
  for (int64_t k = 0; k < n; ++k) dest[k] = pbng_range_owner(range, size, pairs[2 * k + 1]);
  PetscCall(pbng_send_items_to(comm, 2 * sizeof(int64_t), n, dest, pairs, &nrecv, (void **)&recv));
  for (int64_t k = 0; k < nrecv; ++k) {
    const int64_t t = recv[2 * k], i = recv[2 * k + 1] - s->node_begin;
    PetscCheck(t >= 0 && t < s->nsets && i >= 0 && i < s->node_end - s->node_begin, PETSC_COMM_SELF, PETSC_ERR_PLIB,
               "%s: node %" PRId64 " of set %" PRId64 " sent to the wrong process", s->source, recv[2 * k + 1], t);
    s->set_mask[i * s->set_words + t / 64] |= (uint64_t)1 << (t % 64);
  }
  PetscCall(PetscFree(recv));
  PetscCall(PetscFree(dest));
  PetscCall(PetscFree(range));
  PetscFunctionReturn(0);
}

/* A node's membership words, as the process of its slice answers. */
static void answer_sets(void *ctx, int64_t local, void *item)
{
  const pbng_mesh_slice *s = ctx;
  if (s->set_words > 0) memcpy(item, &s->set_mask[local * s->set_words], sizeof(uint64_t) * (size_t)s->set_words);
}

/* Every node of the pieces once, increasing: *ids[*n] (PetscMalloc'd). */
static PetscErrorCode pieces_nodes(int nlocal, const pbng_submesh *sub, PetscInt *n, PetscInt **ids)
{
  PetscInt total = 0;

  PetscFunctionBeginUser;
  for (int k = 0; k < nlocal; ++k) total += sub[k].mesh.nnodes;
  PetscCall(PetscMalloc1(total + 1, ids));
  total = 0;
  for (int k = 0; k < nlocal; ++k)
    for (int64_t l = 0; l < sub[k].mesh.nnodes; ++l) (*ids)[total++] = sub[k].global_node[l];
  PetscCall(PetscSortRemoveDupsInt(&total, *ids));
  *n = total;
  PetscFunctionReturn(0);
}

/* The first set at t or after whose bit is set in a node's membership words w[words], -1 when none. */
static int next_set(const uint64_t *w, int words, int t)
{
  for (int k = t / 64; k < words; ++k) {
    const uint64_t bits = k == t / 64 ? w[k] >> (t % 64) << (t % 64) : w[k];
    if (bits) return 64 * k + __builtin_ctzll(bits);
  }
  return -1;
}

/* The piece's sets from its nodes' membership words (mask[n][words] of the nodes ids[n]): each set's members in
 * increasing local index, every set added (in the slices' order) even without a member. */
static PetscErrorCode add_piece_sets(const pbng_mesh_slice *s, PetscInt n, const PetscInt *ids, const uint64_t *mask, pbng_submesh *sub)
{
  const int64_t nnodes = sub->mesh.nnodes;
  const int words = s->set_words;
  int64_t *start, *at;
  PetscInt *row; /* [nnodes]: the local node's row of ids and mask */
  int32_t *member;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(nnodes + 1, &row));
  PetscCall(PetscCalloc2(s->nsets + 1, &start, s->nsets + 1, &at));
  for (int64_t l = 0; l < nnodes; ++l) {
    PetscCall(PetscFindInt(sub->global_node[l], n, ids, &row[l]));
    PetscCheck(row[l] >= 0, PETSC_COMM_SELF, PETSC_ERR_PLIB, "%s: node %" PRId64 " of a piece was not asked about", s->source, sub->global_node[l]);
    const uint64_t *w = &mask[row[l] * words];
    for (int t = next_set(w, words, 0); t >= 0; t = next_set(w, words, t + 1)) ++start[t + 1];
  }
  for (int t = 0; t < s->nsets; ++t) start[t + 1] += start[t], at[t] = start[t];
  PetscCall(PetscMalloc1(start[s->nsets] + 1, &member));
  for (int64_t l = 0; l < nnodes; ++l) {
    const uint64_t *w = &mask[row[l] * words];
    for (int t = next_set(w, words, 0); t >= 0; t = next_set(w, words, t + 1)) member[at[t]++] = (int32_t)l;
  }
  for (int t = 0; t < s->nsets; ++t) PetscCall(pbng_mesh_add_node_set(&sub->mesh, s->set_name[t], start[t + 1] - start[t], &member[start[t]]));
  PetscCall(PetscFree(member));
  PetscCall(PetscFree2(start, at));
  PetscCall(PetscFree(row));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_submesh_take_slice_sets(MPI_Comm comm, const pbng_mesh_slice *s, const int64_t *range, int nlocal, pbng_submesh *sub)
{
  PetscInt n = 0;
  PetscInt *ids;
  uint64_t *mask;

  PetscFunctionBeginUser;
  if (s->nsets == 0) PetscFunctionReturn(0); /* every slice alike */
  PetscCall(pieces_nodes(nlocal, sub, &n, &ids));
  PetscCall(PetscMalloc1((size_t)n * (size_t)s->set_words + 1, &mask));
  PetscCall(pbng_ask_range_owners(comm, range, n, ids, sizeof(uint64_t) * (size_t)s->set_words, answer_sets, (void *)s, mask));
  for (int k = 0; k < nlocal; ++k) PetscCall(add_piece_sets(s, n, ids, mask, &sub[k]));
  PetscCall(PetscFree(mask));
  PetscCall(PetscFree(ids));
  PetscFunctionReturn(0);
}
