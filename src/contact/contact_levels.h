/* Contacts carried to the coarse levels of multilevel PBNG (docs/contact.md#multilevel), like the static
 * weak constraints (parallel/weak_levels.h): a fine contact C = x_v - sum_j w_j x_j - target is, for a
 * linear field y, s (y(p0) - y(p1)) - target with p0 = X_v and p1 = sum_j w_j X_j its sides' rest
 * points (s = 1); on a coarser mesh of the same bodies it becomes the term between p0 and p1
 * interpolated in the elements containing them (up to 4 + 4 nodes of tetrahedra), with the fine
 * contact's normal, stiffness, model and key. An obstacle contact x_v - q becomes y(p0) - q. Without
 * them the coarse levels do not see the contacts and their corrections push the surfaces into each
 * other (measured: a bar sagging onto a plane stalled at 1e-1 after 200 cycles). Each coarse level
 * holds its carried contacts as a pbng_contacts set of its own (contact ghosts, colors chosen afresh
 * from the static ones at every carry, schedule, dynamic halo), rebuilt from the fine set whenever a
 * detection changed it; FAS's tau correction keeps the fine solution the fixed point whatever the
 * coarse terms are. */
#ifndef PBNG_CONTACT_CONTACT_LEVELS_H
#define PBNG_CONTACT_CONTACT_LEVELS_H

#include "contact/contacts.h"
#include "parallel/locate.h"

typedef struct {
  pbng_contacts set;     /* the level's contacts (pbng_contacts_create_carried) */
  pbng_locator *locator; /* the level's elements at rest, corner weights */
  int64_t *node_value;   /* [nlocal] global id * ranks + owner of each local node (what a location returns) */
  int64_t dropped;       /* contacts of the last carry left out (a side farther than the search radius from the
                            level's mesh, or sides interpolating alike), over the job */
} pbng_contact_level;

/* Collective. dm: the coarse level's subdomain (linear tetrahedra: a term holds at most
 * PBNG_WC_MAX_NODES nodes), halo its static halo, opt the fine set's options (model, stiffness). */
PetscErrorCode pbng_contact_level_create(const pbng_dmesh *dm, const pbng_halo *halo, const pbng_contact_options *opt, pbng_contact_level *cl);
PetscErrorCode pbng_contact_level_destroy(pbng_contact_level *cl);

/* Collective. Rest positions of the fine set's local nodes and contact ghosts ([nlocal + ghost_capacity][3],
 * allocated here), the ghosts' from their owners. */
PetscErrorCode pbng_contact_rest_positions(pbng_contacts *fine, double **X);

/* Collective. Carries the fine set's terms (each by the rank counting it; X from
 * pbng_contact_rest_positions) to the level; x: the level's positions (contact ghosts refreshed). */
PetscErrorCode pbng_contact_level_carry(pbng_contact_level *cl, const pbng_contacts *fine, const double *X, double *x);

#endif
