/* Incremental recoloring for contacts (paper Sec. 9.1): after a detection, the free nodes of new
 * contacts, and the free nodes that left their last contact while off their static color, choose a
 * color again: the current one if no neighbour (through an element, a weak constraint or a contact)
 * has it, else the least color no neighbour has; a node that left takes its static color back when it
 * can. The rule is greedy and sequential in increasing global id, and it runs once for the whole job
 * on rank 0 (each owner sends its nodes' neighbour colors), so that the colors, and therefore the
 * iterates, do not depend on the partition. Every rank keeps the job's recolored nodes (those off
 * their static color). */
#ifndef PBNG_CONTACT_CONTACT_COLORS_H
#define PBNG_CONTACT_CONTACT_COLORS_H

#include "contact/contacts.h"

/* Collective. new_node, left_node: [nowned] flags of the owned free nodes to recolor. Updates
 * ct->color of every static local node, the job's recolored list, ncolors and stats.recolored. */
PetscErrorCode pbng_contact_colors_update(pbng_contacts *ct, const uint8_t *new_node, const uint8_t *left_node);

/* The current color of global node gid whose static color is static_color. */
int32_t pbng_contact_colors_current(const pbng_contacts *ct, int64_t gid, int32_t static_color);

#endif
