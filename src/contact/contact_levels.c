/* Contacts carried to coarse levels (contact_levels.h). */
#include "contact/contact_levels.h"
#include <inttypes.h>
#include <string.h>
#include "parallel/transfer.h"
#include "parallel/weak_levels.h"

PetscErrorCode pbng_contact_level_create(const pbng_dmesh *dm, const pbng_halo *halo, const pbng_contact_options *opt, pbng_contact_level *cl)
{
  PetscFunctionBeginUser;
  memset(cl, 0, sizeof(*cl));
  PetscCheck(dm->etype && dm->etype->kind == PBNG_ELEMENT_TET4, dm->comm, PETSC_ERR_SUP,
             "contacts with -multilevel need coarse levels of linear tetrahedra (a carried contact joins two elements' nodes, at most %d); "
             "this level has %s elements: give tetrahedral coarse meshes with -mesh_levels, or use -multilevel 1",
             (int)PBNG_WC_MAX_NODES, pbng_dmesh_kinds_name(dm));
  PetscCheck(dm->nglobal_nodes <= INT64_MAX / dm->size, dm->comm, PETSC_ERR_SUP, "contacts: node ids too large to carry");
  PetscCall(pbng_contacts_create_carried(dm, halo, opt, &cl->set));
  PetscCall(PetscMalloc1(dm->nlocal + 1, &cl->node_value));
  for (int32_t i = 0; i < dm->nlocal; ++i) cl->node_value[i] = dm->global_node[i] * dm->size + pbng_dmesh_node_owner(dm, i);
  PetscCall(pbng_locator_create(dm, cl->node_value, PBNG_TRANSFER_RADIUS, PBNG_LOCATE_CORNERS, &cl->locator));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_contact_level_destroy(pbng_contact_level *cl)
{
  PetscFunctionBeginUser;
  PetscCall(pbng_locator_destroy(&cl->locator));
  PetscCall(PetscFree(cl->node_value));
  PetscCall(pbng_contacts_destroy(&cl->set));
  memset(cl, 0, sizeof(*cl));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_contact_rest_positions(pbng_contacts *fine, double **X)
{
  const pbng_dmesh *dm = fine->dm;

  PetscFunctionBeginUser;
  PetscCall(PetscCalloc1(3 * ((size_t)dm->nlocal + fine->ghost_capacity) + 1, X));
  memcpy(*X, dm->X, sizeof(double) * 3 * (size_t)dm->nlocal);
  PetscCall(pbng_contacts_exchange(fine, -1, *X)); /* the contact ghosts' from their owners */
  PetscFunctionReturn(0);
}

/* Adds coefficient a of node value v to item it (merging a node met twice). */
static PetscErrorCode add_node(pbng_contact_item *it, int size, int64_t v, double a)
{
  const int64_t gid = v / size;

  PetscFunctionBeginUser;
  for (int j = 0; j < it->nnodes; ++j)
    if (it->gid[j] == gid) {
      it->a[j] += a;
      PetscFunctionReturn(0);
    }
  PetscCheck(it->nnodes < PBNG_WC_MAX_NODES, PETSC_COMM_SELF, PETSC_ERR_PLIB, "contacts: a carried contact with more than %d nodes",
             (int)PBNG_WC_MAX_NODES);
  it->gid[it->nnodes] = gid, it->owner[it->nnodes] = (int32_t)(v % size), it->a[it->nnodes] = a;
  ++it->nnodes;
  PetscFunctionReturn(0);
}

/* The coarse item of fine term c (rest points from spring s): its sides' locations with weights s.scale
 * w and -s.scale w, nodes with a zero coefficient left out. Returns 0 in *made when it carries nothing. */
static PetscErrorCode carried_item(const pbng_weak_constraint *c, const int64_t key[3], const pbng_weak_spring *s, const pbng_point_location *side,
                                   int nsides, int size, pbng_contact_item *it, int *made)
{
  PetscFunctionBeginUser;
  memset(it, 0, sizeof(*it));
  *made = 0;
  for (int k = 0; k < nsides; ++k)
    if (side[k].elem < 0) PetscFunctionReturn(0);
  for (int k = 0; k < nsides; ++k)
    for (int a = 0; a < side[k].nodes; ++a)
      if (side[k].w[a] != 0.0) PetscCall(add_node(it, size, side[k].value[a], (k == 0 ? s->scale : -s->scale) * side[k].w[a]));
  int m = 0;
  for (int j = 0; j < it->nnodes; ++j)
    if (it->a[j] != 0.0) it->gid[m] = it->gid[j], it->owner[m] = it->owner[j], it->a[m] = it->a[j], ++m;
  it->nnodes = m;
  if (m == 0) PetscFunctionReturn(0);
  memcpy(it->key, key, sizeof(it->key));
  it->slots = (uint8_t)((1u << m) - 1);
  for (int d = 0; d < 3; ++d) it->normal[d] = c->n[d], it->target[d] = c->target[d];
  *made = 1;
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_contact_level_carry(pbng_contact_level *cl, const pbng_contacts *fine, const double *X, double *x)
{
  const int size = cl->set.dm->size;
  int32_t ncounted = 0, nitems = 0;
  int64_t npoints = 0, dropped = 0;
  double *points;
  pbng_point_location *loc;
  pbng_weak_spring *spring;
  pbng_contact_item *items;

  PetscFunctionBeginUser;
  for (int32_t k = 0; k < fine->n; ++k) ncounted += fine->counted[k];
  PetscCall(PetscMalloc4(6 * (int64_t)ncounted + 1, &points, 2 * (int64_t)ncounted + 1, &loc, ncounted + 1, &spring, ncounted + 1, &items));
  for (int32_t k = 0, q = 0; k < fine->n; ++k) {
    if (!fine->counted[k]) continue;
    pbng_weak_spring_from(&fine->term[k], X, k, &spring[q]);
    const int nsides = fine->key[k][1] == PBNG_CONTACT_OBSTACLE ? 1 : 2;
    for (int side = 0; side < nsides; ++side) memcpy(&points[3 * npoints++], spring[q].p[side], sizeof(double) * 3);
    ++q;
  }
  for (int64_t done = 0, total; ; done += PBNG_LOCATE_CHUNK) { /* collective rounds: every rank until all are done */
    const int64_t n = npoints - done < 0 ? 0 : (npoints - done < PBNG_LOCATE_CHUNK ? npoints - done : PBNG_LOCATE_CHUNK);
    PetscCall(pbng_locator_find(cl->locator, n, points + 3 * done, loc + done));
    const int64_t left = npoints - done - n;
    PetscCallMPI(MPI_Allreduce(&left, &total, 1, MPI_INT64_T, MPI_MAX, cl->set.comm));
    if (total <= 0) break;
  }
  for (int32_t q = 0, p = 0; q < ncounted; ++q) {
    const int32_t k = (int32_t)spring[q].id;
    const int nsides = fine->key[k][1] == PBNG_CONTACT_OBSTACLE ? 1 : 2;
    int made;
    PetscCall(carried_item(&fine->term[k], fine->key[k], &spring[q], &loc[p], nsides, size, &items[nitems], &made));
    nitems += made, dropped += !made, p += nsides;
  }
  PetscCallMPI(MPI_Allreduce(&dropped, &cl->dropped, 1, MPI_INT64_T, MPI_SUM, cl->set.comm));
  PetscCall(pbng_contacts_install(&cl->set, nitems, items, x));
  PetscCall(PetscFree4(points, loc, spring, items));
  PetscFunctionReturn(0);
}
