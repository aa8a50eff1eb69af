/* The constraint solvers' contacts, projected on every rank alike (contact_projection.h). */
#include "methods/pbd/contact_projection.h"
#include "core/sorted_ids.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

PetscErrorCode pbng_contact_projection_init(pbng_contact_projection *cp)
{
  PetscFunctionBeginUser;
  memset(cp, 0, sizeof(*cp));
  cp->version = -1;
  PetscCall(PetscCalloc1(1, &cp->lambda));
  PetscCall(PetscLogEventRegister("PBDContactGather", PETSC_OBJECT_CLASSID, &cp->ev_gather));
  PetscCall(PetscLogEventRegister("PBDContactProject", PETSC_OBJECT_CLASSID, &cp->ev_project));
  PetscFunctionReturn(0);
}

/* Everything made for one version of the contacts, the multipliers excepted. */
static PetscErrorCode free_nodes(pbng_contact_projection *cp)
{
  PetscFunctionBeginUser;
  PetscCall(PetscFree(cp->key));
  PetscCall(PetscFree(cp->term));
  PetscCall(PetscFree(cp->gid));
  PetscCall(PetscFree(cp->local));
  PetscCall(PetscFree(cp->w));
  PetscCall(PetscFree(cp->x));
  PetscCall(PetscFree(cp->force));
  PetscCall(PetscFree(cp->mine));
  PetscCall(PetscFree(cp->from));
  PetscCall(PetscFree(cp->counts));
  PetscCall(PetscFree(cp->displ));
  PetscCall(PetscFree(cp->send));
  PetscCall(PetscFree(cp->recv));
  cp->n = cp->nnodes = cp->nmine = 0;
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_contact_projection_destroy(pbng_contact_projection *cp)
{
  PetscFunctionBeginUser;
  PetscCall(free_nodes(cp));
  PetscCall(PetscFree(cp->lambda));
  memset(cp, 0, sizeof(*cp));
  cp->version = -1;
  PetscFunctionReturn(0);
}

/* ---- the job's contacts on every rank ------------------------------------------------------------ */

/* A contact as it is gathered: its key and its term with global node ids. */
typedef struct {
  int64_t key[3];
  pbng_weak_constraint term;
} shared_contact;

static int compare_shared(const void *a, const void *b) { return pbng_contact_key_compare(((const shared_contact *)a)->key, ((const shared_contact *)b)->key); }

/* The node index of global node gid, or -1. */
static int32_t node_index(const pbng_contact_projection *cp, int64_t gid) { return (int32_t)pbng_sorted_index(cp->gid, cp->nnodes, gid); }

/* Every contact of the job, each counted once (by its vertex's owner), sorted by key. */
static PetscErrorCode gather_contacts(const pbng_contacts *ct, int *n, shared_contact **all)
{
  shared_contact *mine;
  int nmine = 0;

  PetscFunctionBeginUser;
  PetscCall(PetscCalloc1(ct->n + 1, &mine)); /* zeroed: the padding travels too */
  for (int32_t k = 0; k < ct->n; ++k) {
    if (!ct->counted[k]) continue;
    shared_contact *s = &mine[nmine++];
    memcpy(s->key, ct->key[k], sizeof(s->key));
    s->term = ct->term[k];
    for (int j = 0; j < s->term.nnodes; ++j) s->term.node[j] = pbng_contacts_node_gid(ct, (int32_t)s->term.node[j]);
  }
  PetscCall(pbng_allgather_items(ct->dm->comm, sizeof(shared_contact), nmine, mine, n, (void **)all));
  qsort(*all, (size_t)*n, sizeof(shared_contact), compare_shared);
  PetscCall(PetscFree(mine));
  PetscFunctionReturn(0);
}

/* The new list's multipliers: those of the same key in the old list (both sorted by key), else zero. */
static PetscErrorCode carry_multipliers(pbng_contact_projection *cp, int n, const shared_contact *all)
{
  double *lambda;

  PetscFunctionBeginUser;
  PetscCall(PetscCalloc1(3 * (int64_t)n + 1, &lambda));
  for (int32_t k = 0, o = 0; k < n; ++k) {
    while (o < cp->n && pbng_contact_key_compare(cp->key[o], all[k].key) < 0) ++o;
    if (o < cp->n && pbng_contact_key_compare(cp->key[o], all[k].key) == 0) memcpy(&lambda[3 * (int64_t)k], &cp->lambda[3 * (int64_t)o], 3 * sizeof(double));
  }
  PetscCall(PetscFree(cp->lambda));
  cp->lambda = lambda;
  PetscFunctionReturn(0);
}

/* The nodes of the contacts (sorted global ids), the terms renumbered to them, and this rank's copies. */
static PetscErrorCode list_nodes(pbng_contact_projection *cp, const pbng_contacts *ct, int n, const shared_contact *all)
{
  int64_t *gid, m = 0;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(PBNG_WC_MAX_NODES * (int64_t)n + 1, &gid));
  for (int k = 0; k < n; ++k)
    for (int j = 0; j < all[k].term.nnodes; ++j) gid[m++] = all[k].term.node[j];
  qsort(gid, (size_t)m, sizeof(int64_t), pbng_compare_int64);
  cp->nnodes = 0;
  for (int64_t k = 0; k < m; ++k)
    if (k == 0 || gid[k] != gid[k - 1]) gid[cp->nnodes++] = gid[k];
  cp->gid = gid;
  PetscCall(PetscMalloc1(n + 1, &cp->key));
  PetscCall(PetscMalloc1(n + 1, &cp->term));
  for (int k = 0; k < n; ++k) {
    memcpy(cp->key[k], all[k].key, sizeof(cp->key[k]));
    cp->term[k] = all[k].term;
    for (int j = 0; j < cp->term[k].nnodes; ++j) cp->term[k].node[j] = node_index(cp, cp->term[k].node[j]);
  }
  cp->n = n;
  PetscCall(PetscMalloc1(cp->nnodes + 1, &cp->local));
  for (int32_t k = 0; k < cp->nnodes; ++k) cp->local[k] = -1;
  for (int32_t l = 0; l < ct->dm->nlocal + ct->nghost; ++l) {
    const int32_t k = node_index(cp, pbng_contacts_node_gid(ct, l));
    if (k >= 0) cp->local[k] = l;
  }
  PetscFunctionReturn(0);
}

/* The owned nodes of the list, and from every rank the node indices it sends positions of and their inverse
 * masses: the plan of the per-sweep allgather. */
static PetscErrorCode plan_gather(pbng_contact_projection *cp, const pbng_dmesh *dm, const double *inv_mass)
{
  double *w_mine;
  int size;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(dm->comm, &size));
  PetscCall(PetscMalloc1(cp->nnodes + 1, &cp->mine));
  cp->nmine = 0;
  for (int32_t k = 0; k < cp->nnodes; ++k)
    if (cp->local[k] >= 0 && cp->local[k] < dm->nowned) cp->mine[cp->nmine++] = k;
  PetscCall(PetscMalloc1(cp->nmine + 1, &w_mine));
  for (int32_t m = 0; m < cp->nmine; ++m) w_mine[m] = inv_mass[cp->local[cp->mine[m]]];
  PetscCall(PetscMalloc1(size, &cp->counts));
  PetscCall(PetscMalloc1(size + 1, &cp->displ));
  PetscCallMPI(MPI_Allgather(&cp->nmine, 1, MPI_INT, cp->counts, 1, MPI_INT, dm->comm));
  cp->displ[0] = 0;
  for (int r = 0; r < size; ++r) cp->displ[r + 1] = cp->displ[r] + cp->counts[r];
  PetscCheck(cp->displ[size] == cp->nnodes, dm->comm, PETSC_ERR_PLIB, "contact projection: %d owned copies of %d contact nodes", cp->displ[size],
             (int)cp->nnodes);
  PetscCall(PetscMalloc1(cp->nnodes + 1, &cp->from));
  PetscCall(PetscMalloc1(cp->nnodes + 1, &cp->w));
  PetscCall(PetscMalloc1(3 * (int64_t)cp->nnodes + 1, &cp->x));
  PetscCall(PetscMalloc1(3 * (int64_t)cp->nnodes + 1, &cp->force));
  PetscCall(PetscMalloc1(3 * (int64_t)cp->nnodes + 1, &cp->recv));
  PetscCall(PetscMalloc1(3 * (int64_t)cp->nmine + 1, &cp->send));
  PetscCallMPI(MPI_Allgatherv(cp->mine, cp->nmine, MPI_INT32_T, cp->from, cp->counts, cp->displ, MPI_INT32_T, dm->comm));
  PetscCallMPI(MPI_Allgatherv(w_mine, cp->nmine, MPI_DOUBLE, cp->recv, cp->counts, cp->displ, MPI_DOUBLE, dm->comm));
  for (int32_t k = 0; k < cp->nnodes; ++k) cp->w[cp->from[k]] = cp->recv[k];
  for (int r = 0; r <= size; ++r) cp->displ[r] *= 3; /* from here on in doubles: 3 per node */
  for (int r = 0; r < size; ++r) cp->counts[r] *= 3;
  PetscCall(PetscFree(w_mine));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_contact_projection_sync(pbng_contact_projection *cp, const pbng_problem *pb, const double *inv_mass)
{
  const pbng_contacts *ct = pb->contacts;
  shared_contact *all;
  int n;

  PetscFunctionBeginUser;
  if (!ct || cp->version == ct->version) PetscFunctionReturn(0);
  PetscCall(gather_contacts(ct, &n, &all));
  PetscCall(carry_multipliers(cp, n, all));
  PetscCall(free_nodes(cp));
  PetscCall(list_nodes(cp, ct, n, all));
  PetscCall(plan_gather(cp, pb->dm, inv_mass));
  cp->version = ct->version;
  PetscCall(PetscFree(all));
  PetscFunctionReturn(0);
}

void pbng_contact_projection_reset(pbng_contact_projection *cp) { memset(cp->lambda, 0, sizeof(double) * 3 * (size_t)cp->n); }

/* ---- the sweep ------------------------------------------------------------------------------------- */

/* Every contact node's position from its owner into cp->x (the same array on every rank). */
static PetscErrorCode gather_positions(pbng_contact_projection *cp, const pbng_problem *pb)
{
  PetscFunctionBeginUser;
  PetscCall(PetscLogEventBegin(cp->ev_gather, 0, 0, 0, 0));
  for (int32_t m = 0; m < cp->nmine; ++m)
    for (int d = 0; d < 3; ++d) cp->send[3 * m + d] = pb->x[3 * (int64_t)cp->local[cp->mine[m]] + d];
  PetscCallMPI(MPI_Allgatherv(cp->send, 3 * cp->nmine, MPI_DOUBLE, cp->recv, cp->counts, cp->displ, MPI_DOUBLE, pb->dm->comm));
  for (int32_t k = 0; k < cp->nnodes; ++k)
    for (int d = 0; d < 3; ++d) cp->x[3 * (int64_t)cp->from[k] + d] = cp->recv[3 * (int64_t)k + d];
  PetscCall(PetscLogEventEnd(cp->ev_gather, 0, 0, 0, 0));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_contact_projection_sweep(pbng_contact_projection *cp, const pbng_projection *proj, pbng_problem *pb)
{
  PetscFunctionBeginUser;
  if (cp->n == 0) PetscFunctionReturn(0); /* every rank alike: the list is the job's */
  PetscCall(gather_positions(cp, pb));
  PetscCall(PetscLogEventBegin(cp->ev_project, 0, 0, 0, 0));
  for (int32_t c = 0; c < cp->n; ++c) pbng_project_weak(proj, &cp->term[c], cp->w, &cp->lambda[3 * (int64_t)c], cp->x); /* Eq. 26-28, by key */
  for (int32_t k = 0; k < cp->nnodes; ++k) /* every copy, owned or ghost, takes the same result */
    if (cp->local[k] >= 0)
      for (int d = 0; d < 3; ++d) pb->x[3 * (int64_t)cp->local[k] + d] = cp->x[3 * (int64_t)k + d];
  PetscCall(PetscLogEventEnd(cp->ev_project, 0, 0, 0, 0));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_contact_projection_residual(pbng_contact_projection *cp, const pbng_projection *proj, const pbng_problem *pb, double *h2,
                                                int64_t *nh, double *force)
{
  const int32_t nowned = pb->dm->nowned;

  PetscFunctionBeginUser;
  *nh = 0;
  if (cp->n == 0) PetscFunctionReturn(0);
  PetscCall(gather_positions(cp, pb));
  memset(cp->force, 0, sizeof(double) * 3 * (size_t)cp->nnodes);
  for (int32_t c = 0; c < cp->n; ++c) {
    const double h = pbng_weak_constraint_residual(proj, &cp->term[c], &cp->lambda[3 * (int64_t)c], cp->x, cp->force);
    const int32_t v = cp->local[cp->term[c].node[0]]; /* the vertex: counted by its owner */
    if (v >= 0 && v < nowned) h2[(*nh)++] = h;
  }
  for (int32_t k = 0; k < cp->nnodes; ++k)
    if (cp->local[k] >= 0 && cp->local[k] < nowned)
      for (int d = 0; d < 3; ++d) force[3 * (int64_t)cp->local[k] + d] += cp->force[3 * (int64_t)k + d];
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_contact_projection_state(pbng_contact_projection *cp, const pbng_problem *pb, const double *inv_mass, const char *prefix,
                                             pbng_state_field *fields, int *n)
{
  char name[40];

  PetscFunctionBeginUser;
  PetscCall(pbng_contact_projection_sync(cp, pb, inv_mass));
  snprintf(name, sizeof(name), "%s_lambda_contact", prefix);
  const int64_t m = 3 * (int64_t)cp->n;
  PetscCheck(m < INT32_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "checkpoint: %d contacts are too many for one field", (int)cp->n);
  pbng_state_add(fields, n, name, PBNG_FIELD_SCALARS, (int)(m ? m : 1), m ? m : 1, m ? m : 1, cp->lambda); /* one 0 when there is none */
  PetscFunctionReturn(0);
}
