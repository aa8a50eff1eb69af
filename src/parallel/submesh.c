#include "parallel/submesh.h"
#include <string.h>

static int weak_touches_part(const pbng_weak_constraint *c, const int32_t *part, int p)
{
  for (int j = 0; j < c->nnodes; ++j)
    if (part[c->node[j]] == p) return 1;
  return 0;
}

/* The weak constraints with a node in part p, in local node numbering, with their global indices. */
static PetscErrorCode extract_weak(const pbng_mesh *mesh, const int32_t *part, int p, const int64_t *g2l, pbng_submesh *sub)
{
  int64_t n = 0;

  PetscFunctionBeginUser;
  for (int64_t c = 0; c < mesh->nweak; ++c) n += weak_touches_part(&mesh->weak[c], part, p);
  PetscCall(PetscMalloc1(n + 1, &sub->mesh.weak));
  PetscCall(PetscMalloc1(n + 1, &sub->global_weak));
  sub->mesh.nweak = n;
  sub->nglobal_weak = mesh->nweak;
  n = 0;
  for (int64_t c = 0; c < mesh->nweak; ++c) {
    if (!weak_touches_part(&mesh->weak[c], part, p)) continue;
    sub->mesh.weak[n] = mesh->weak[c];
    for (int j = 0; j < mesh->weak[c].nnodes; ++j) sub->mesh.weak[n].node[j] = g2l[mesh->weak[c].node[j]];
    sub->global_weak[n++] = c;
  }
  PetscFunctionReturn(0);
}

/* Marks the elements of part p (those with a node owned by p) and the nodes they use; owned nodes
 * are numbered first (in global order), then the other nodes (in global order). */
static PetscErrorCode select_part(const pbng_mesh *mesh, const int32_t *part, int p, uint8_t **in_elem, int64_t **g2l,
                                  int64_t *nnodes, int64_t *nowned, int64_t *nelems)
{
  const int nen = mesh->nen;

  PetscFunctionBeginUser;
  PetscCall(PetscCalloc1(mesh->nelems, in_elem));
  PetscCall(PetscMalloc1(mesh->nnodes, g2l));
  *nelems = 0;
  for (int64_t e = 0; e < mesh->nelems; ++e) {
    for (int a = 0, n = pbng_mesh_element_nodes(mesh, e); a < n; ++a) (*in_elem)[e] |= part[mesh->elems[e * nen + a]] == p;
    *nelems += (*in_elem)[e];
  }
  for (int64_t i = 0; i < mesh->nnodes; ++i) (*g2l)[i] = -1;
  *nowned = 0;
  for (int64_t i = 0; i < mesh->nnodes; ++i)
    if (part[i] == p) (*g2l)[i] = (*nowned)++;
  *nnodes = *nowned;
  for (int64_t e = 0; e < mesh->nelems; ++e) /* mark ghosts, then number them in global order */
    if ((*in_elem)[e])
      for (int a = 0, n = pbng_mesh_element_nodes(mesh, e); a < n; ++a)
        if ((*g2l)[mesh->elems[e * nen + a]] == -1) (*g2l)[mesh->elems[e * nen + a]] = -2;
  for (int64_t c = 0; c < mesh->nweak; ++c)
    if (weak_touches_part(&mesh->weak[c], part, p))
      for (int j = 0; j < mesh->weak[c].nnodes; ++j)
        if ((*g2l)[mesh->weak[c].node[j]] == -1) (*g2l)[mesh->weak[c].node[j]] = -2;
  for (int64_t i = 0; i < mesh->nnodes; ++i)
    if ((*g2l)[i] == -2) (*g2l)[i] = (*nnodes)++;
  PetscFunctionReturn(0);
}

static PetscErrorCode restrict_node_sets(const pbng_mesh *mesh, const int64_t *g2l, pbng_mesh *local)
{
  int32_t *members;

  PetscFunctionBeginUser;
  for (int s = 0; s < mesh->nsets; ++s) {
    const pbng_node_set *set = &mesh->sets[s];
    int64_t n = 0;
    PetscCall(PetscMalloc1(set->count + 1, &members));
    for (int64_t k = 0; k < set->count; ++k)
      if (g2l[set->nodes[k]] >= 0) members[n++] = (int32_t)g2l[set->nodes[k]];
    PetscCall(pbng_mesh_add_node_set(local, set->name, n, members));
    PetscCall(PetscFree(members));
  }
  PetscFunctionReturn(0);
}

/* The block and constraint colors of the piece's weak constraints and elements (marked in in_elem). */
static PetscErrorCode extract_constraint_colors(const pbng_mesh *mesh, const pbng_constraint_colors *cc, const uint8_t *in_elem,
                                                pbng_submesh *sub)
{
  PetscFunctionBeginUser;
  if (!cc || !cc->block) PetscFunctionReturn(0);
  sub->cc.nblock_colors = cc->nblock_colors;
  PetscCall(PetscMalloc1(sub->mesh.nweak + 1, &sub->cc.block));
  for (int64_t c = 0; c < sub->mesh.nweak; ++c) sub->cc.block[c] = cc->block[sub->global_weak[c]];
  if (!cc->elem) PetscFunctionReturn(0);
  sub->cc.nelem_colors = cc->nelem_colors, sub->cc.nweak_colors = cc->nweak_colors;
  PetscCall(PetscMalloc1(sub->mesh.nelems, &sub->cc.elem));
  PetscCall(PetscMalloc1(sub->mesh.nweak + 1, &sub->cc.weak));
  for (int64_t e = 0, k = 0; e < mesh->nelems; ++e)
    if (in_elem[e]) sub->cc.elem[k++] = cc->elem[e];
  for (int64_t c = 0; c < sub->mesh.nweak; ++c) sub->cc.weak[c] = cc->weak[sub->global_weak[c]];
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_submesh_extract(const pbng_mesh *mesh, const int32_t *color, int ncolors, const pbng_constraint_colors *cc,
                                    const int32_t *part, int p, pbng_submesh *sub)
{
  const int nen = mesh->nen;
  uint8_t *in_elem;
  int64_t *g2l, nnodes = 0, nowned = 0, nelems = 0, e_local = 0;

  PetscFunctionBeginUser;
  memset(sub, 0, sizeof(*sub));
  PetscCall(select_part(mesh, part, p, &in_elem, &g2l, &nnodes, &nowned, &nelems));
  PetscCheck(nowned > 0 && nelems > 0, PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "%s: part %d is empty", mesh->source, p);
  PetscCall(pbng_mesh_alloc_layout(&sub->mesh, pbng_mesh_layout(mesh), nnodes, nelems, mesh->source));
  PetscCall(PetscStrncpy(sub->mesh.source, mesh->source, sizeof(sub->mesh.source)));
  sub->nglobal_nodes = mesh->nnodes, sub->nglobal_elems = mesh->nelems;
  sub->nowned = (int32_t)nowned, sub->ncolors = ncolors;
  PetscCall(PetscMalloc4(nnodes, &sub->global_node, nelems, &sub->global_elem, nnodes, &sub->owner, nnodes, &sub->color));
  for (int64_t i = 0; i < mesh->nnodes; ++i) {
    const int64_t l = g2l[i];
    if (l < 0) continue;
    sub->global_node[l] = i, sub->owner[l] = part[i], sub->color[l] = color[i];
    for (int d = 0; d < 3; ++d) sub->mesh.X[3 * l + d] = mesh->X[3 * i + d];
  }
  for (int64_t e = 0; e < mesh->nelems; ++e) {
    if (!in_elem[e]) continue;
    sub->global_elem[e_local] = e;
    if (mesh->kind) sub->mesh.kind[e_local] = mesh->kind[e];
    for (int a = 0; a < nen; ++a) sub->mesh.elems[e_local * nen + a] = mesh->elems[e * nen + a] < 0 ? -1 : (int32_t)g2l[mesh->elems[e * nen + a]];
    ++e_local;
  }
  PetscCall(restrict_node_sets(mesh, g2l, &sub->mesh));
  PetscCall(extract_weak(mesh, part, p, g2l, sub));
  PetscCall(extract_constraint_colors(mesh, cc, in_elem, sub));
  PetscCall(PetscFree(in_elem));
  PetscCall(PetscFree(g2l));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_submesh_empty(const pbng_mesh *mesh, int ncolors, const pbng_constraint_colors *cc, pbng_submesh *sub)
{
  PetscFunctionBeginUser;
  memset(sub, 0, sizeof(*sub));
  PetscCall(pbng_mesh_alloc_empty(&sub->mesh, pbng_mesh_layout(mesh), mesh->source));
  PetscCall(PetscStrncpy(sub->mesh.source, mesh->source, sizeof(sub->mesh.source)));
  sub->nglobal_nodes = mesh->nnodes, sub->nglobal_elems = mesh->nelems, sub->nglobal_weak = mesh->nweak, sub->ncolors = ncolors;
  PetscCall(PetscMalloc4(1, &sub->global_node, 1, &sub->global_elem, 1, &sub->owner, 1, &sub->color));
  for (int s = 0; s < mesh->nsets; ++s) PetscCall(pbng_mesh_add_node_set(&sub->mesh, mesh->sets[s].name, 0, sub->owner)); /* named, no member */
  if (cc && cc->block) { /* the colorings' counts, as a piece with constraints would carry them */
    sub->cc.nblock_colors = cc->nblock_colors;
    PetscCall(PetscMalloc1(1, &sub->cc.block));
    if (cc->elem) {
      sub->cc.nelem_colors = cc->nelem_colors, sub->cc.nweak_colors = cc->nweak_colors;
      PetscCall(PetscMalloc1(1, &sub->cc.elem));
      PetscCall(PetscMalloc1(1, &sub->cc.weak));
    }
  }
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_submesh_destroy(pbng_submesh *sub)
{
  PetscFunctionBeginUser;
  PetscCall(pbng_mesh_destroy(&sub->mesh));
  PetscCall(PetscFree4(sub->global_node, sub->global_elem, sub->owner, sub->color));
  PetscCall(PetscFree(sub->global_weak));
  PetscCall(pbng_constraint_colors_destroy(&sub->cc));
  memset(sub, 0, sizeof(*sub));
  PetscFunctionReturn(0);
}

/* Message layout: header int64[15] = nnodes, nelems, nowned, ncolors, nglobal_nodes, nglobal_elems,
 * element layout (pbng_mesh_layout), nsets, nweak, nglobal_weak, has PBD colors, nelem_colors, nweak_colors, has block
 * colors, nblock_colors; then X,
 * elems (and their kinds when kinds mix), global_node, global_elem, owner, color; then per set a name (64 chars), a count and the
 * members; then the weak constraints (as bytes: the ranks of one job share a binary layout) and their
 * global indices; then the constraint colors when present. */
enum { SUB_HEAD = 15 };
enum { SUB_TAG = 7301 };

static PetscErrorCode send_block(MPI_Comm comm, const void *buf, int64_t count, MPI_Datatype type, int dest)
{
  PetscFunctionBeginUser;
  PetscCheck(count < INT32_MAX, comm, PETSC_ERR_SUP, "submesh block of %" PRId64 " entries is too large for one message", count);
  PetscCallMPI(MPI_Send(buf, (int)count, type, dest, SUB_TAG, comm));
  PetscFunctionReturn(0);
}

static PetscErrorCode recv_block(MPI_Comm comm, void *buf, int64_t count, MPI_Datatype type, int source)
{
  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Recv(buf, (int)count, type, source, SUB_TAG, comm, MPI_STATUS_IGNORE));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_submesh_send(MPI_Comm comm, const pbng_submesh *sub, int dest)
{
  const pbng_mesh *m = &sub->mesh;
  const int nen = m->nen;
  const int64_t head[SUB_HEAD] = {m->nnodes, m->nelems, sub->nowned, sub->ncolors, sub->nglobal_nodes, sub->nglobal_elems,
                                  pbng_mesh_layout(m), m->nsets, m->nweak, sub->nglobal_weak, sub->cc.elem != NULL,
                                  sub->cc.nelem_colors, sub->cc.nweak_colors, sub->cc.block != NULL, sub->cc.nblock_colors};

  PetscFunctionBeginUser;
  PetscCall(send_block(comm, head, SUB_HEAD, MPI_INT64_T, dest));
  PetscCall(send_block(comm, m->X, 3 * m->nnodes, MPI_DOUBLE, dest));
  PetscCall(send_block(comm, m->elems, nen * m->nelems, MPI_INT32_T, dest));
  if (m->kind) PetscCall(send_block(comm, m->kind, m->nelems, MPI_UINT8_T, dest));
  PetscCall(send_block(comm, sub->global_node, m->nnodes, MPI_INT64_T, dest));
  PetscCall(send_block(comm, sub->global_elem, m->nelems, MPI_INT64_T, dest));
  PetscCall(send_block(comm, sub->owner, m->nnodes, MPI_INT32_T, dest));
  PetscCall(send_block(comm, sub->color, m->nnodes, MPI_INT32_T, dest));
  for (int s = 0; s < m->nsets; ++s) {
    PetscCall(send_block(comm, m->sets[s].name, sizeof(m->sets[s].name), MPI_CHAR, dest));
    PetscCall(send_block(comm, &m->sets[s].count, 1, MPI_INT64_T, dest));
    PetscCall(send_block(comm, m->sets[s].nodes, m->sets[s].count, MPI_INT32_T, dest));
  }
  PetscCall(send_block(comm, m->weak, (int64_t)sizeof(pbng_weak_constraint) * m->nweak, MPI_BYTE, dest));
  PetscCall(send_block(comm, sub->global_weak, m->nweak, MPI_INT64_T, dest));
  if (sub->cc.block) PetscCall(send_block(comm, sub->cc.block, m->nweak, MPI_INT32_T, dest));
  if (sub->cc.elem) {
    PetscCall(send_block(comm, sub->cc.elem, m->nelems, MPI_INT32_T, dest));
    PetscCall(send_block(comm, sub->cc.weak, m->nweak, MPI_INT32_T, dest));
  }
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_submesh_send_failure(MPI_Comm comm, int dest)
{
  const int64_t head[SUB_HEAD] = {-1};

  PetscFunctionBeginUser;
  PetscCall(send_block(comm, head, SUB_HEAD, MPI_INT64_T, dest));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_submesh_recv(MPI_Comm comm, int source, PetscErrorCode failure_code, pbng_submesh *sub)
{
  int64_t head[SUB_HEAD];
  pbng_mesh *m = &sub->mesh;
  char what[64];

  PetscFunctionBeginUser;
  memset(sub, 0, sizeof(*sub));
  PetscCall(recv_block(comm, head, SUB_HEAD, MPI_INT64_T, source));
  PetscCheck(head[0] >= 0, PETSC_COMM_SELF, failure_code, "rank %d could not send this rank's part of the mesh", source);
  snprintf(what, sizeof(what), "part of a mesh from rank %d", source);
  if (head[0] == 0 && head[1] == 0) PetscCall(pbng_mesh_alloc_empty(m, head[6], what)); /* a rank without a part of a level */
  else PetscCall(pbng_mesh_alloc_layout(m, head[6], head[0], head[1], what));
  PetscCall(PetscStrncpy(m->source, what, sizeof(m->source)));
  sub->nowned = (int32_t)head[2], sub->ncolors = (int)head[3], sub->nglobal_nodes = head[4], sub->nglobal_elems = head[5];
  PetscCall(PetscMalloc4(m->nnodes, &sub->global_node, m->nelems, &sub->global_elem, m->nnodes, &sub->owner, m->nnodes, &sub->color));
  PetscCall(recv_block(comm, m->X, 3 * m->nnodes, MPI_DOUBLE, source));
  PetscCall(recv_block(comm, m->elems, m->nen * m->nelems, MPI_INT32_T, source));
  if (m->kind) PetscCall(recv_block(comm, m->kind, m->nelems, MPI_UINT8_T, source));
  PetscCall(recv_block(comm, sub->global_node, m->nnodes, MPI_INT64_T, source));
  PetscCall(recv_block(comm, sub->global_elem, m->nelems, MPI_INT64_T, source));
  PetscCall(recv_block(comm, sub->owner, m->nnodes, MPI_INT32_T, source));
  PetscCall(recv_block(comm, sub->color, m->nnodes, MPI_INT32_T, source));
  for (int64_t s = 0; s < head[7]; ++s) {
    char name[64];
    int64_t count;
    int32_t *members;
    PetscCall(recv_block(comm, name, sizeof(name), MPI_CHAR, source));
    PetscCall(recv_block(comm, &count, 1, MPI_INT64_T, source));
    PetscCall(PetscMalloc1(count + 1, &members));
    PetscCall(recv_block(comm, members, count, MPI_INT32_T, source));
    PetscCall(pbng_mesh_add_node_set(m, name, count, members));
    PetscCall(PetscFree(members));
  }
  m->nweak = head[8], sub->nglobal_weak = head[9];
  PetscCall(PetscMalloc1(m->nweak + 1, &m->weak));
  PetscCall(PetscMalloc1(m->nweak + 1, &sub->global_weak));
  PetscCall(recv_block(comm, m->weak, (int64_t)sizeof(pbng_weak_constraint) * m->nweak, MPI_BYTE, source));
  PetscCall(recv_block(comm, sub->global_weak, m->nweak, MPI_INT64_T, source));
  if (head[13]) {
    sub->cc.nblock_colors = (int)head[14];
    PetscCall(PetscMalloc1(m->nweak + 1, &sub->cc.block));
    PetscCall(recv_block(comm, sub->cc.block, m->nweak, MPI_INT32_T, source));
  }
  if (head[10]) {
    sub->cc.nelem_colors = (int)head[11], sub->cc.nweak_colors = (int)head[12];
    PetscCall(PetscMalloc1(m->nelems, &sub->cc.elem));
    PetscCall(PetscMalloc1(m->nweak + 1, &sub->cc.weak));
    PetscCall(recv_block(comm, sub->cc.elem, m->nelems, MPI_INT32_T, source));
    PetscCall(recv_block(comm, sub->cc.weak, m->nweak, MPI_INT32_T, source));
  }
  PetscFunctionReturn(0);
}
