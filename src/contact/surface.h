/* The boundary surface of a distributed mesh, for contact detection (docs/contact.md#detection).
 *
 * A boundary face is a face (identified by its set of corner nodes) that belongs to exactly one
 * element of the whole mesh. Every element containing a face with an owned corner touches an owned
 * node, so it is local: a rank decides alone about every face with one of its owned nodes as a corner.
 * Faces are triangulated by their corners (high-order faces by their corners alone): a triangle as it
 * is, a quadrilateral into two triangles along the diagonal through its lowest-global-id corner, each
 * in the face's outward corner order. Each triangle has a partition-independent key
 * (global element * PBNG_MAX_FACES + face) * 2 + sub-triangle, and is held by the owner of its
 * lowest-global-id corner (which is also the face's). Sheets (tri3 elements, issue 18) are two-sided
 * surfaces: each sheet triangle gives two surface triangles, its own corner order (sub-triangle 0) and the
 * reversed one (sub-triangle 1), key (global element * PBNG_MAX_FACES) * 2 + side, marked `sheet`: each
 * side's outward normal points away from the other side. Surface vertices are the boundary faces' and the
 * sheet triangles' corners.
 * Bodies are the connected components of the element graph (elements sharing a node), labelled by their
 * smallest global node id: a union-find over the local elements, then labels propagated to the minimum
 * over the ghost copies until no rank changes one. */
#ifndef PBNG_CONTACT_SURFACE_H
#define PBNG_CONTACT_SURFACE_H

#include "parallel/dmesh.h"

typedef struct {
  int64_t key;     /* (global element * PBNG_MAX_FACES + face) * 2 + sub-triangle */
  int32_t node[3]; /* local node indices, outward order */
  int32_t sheet;   /* 1: one side of a sheet triangle (two-sided: docs/contact.md#sheets), 0: a boundary face's */
} pbng_surface_triangle;

typedef struct {
  int32_t ntri, nheld;         /* the boundary triangles with an owned corner; [0, nheld) are held here (lowest-gid
                                  corner owned), the rest only touch an owned node; each part by increasing key */
  pbng_surface_triangle *tri;  /* [ntri] */
  uint8_t *is_vertex;          /* [nlocal]: 1 for surface vertices (owned and ghost nodes) */
  int32_t nvert;               /* owned surface vertices */
  int32_t *vert;               /* [nvert] their local indices, by increasing global id */
  int32_t *vtri_start, *vtri;  /* [nvert + 1]: each one's triangles (indices into tri), by increasing key */
  int32_t *nbr_start;          /* [nvert + 1] */
  int64_t *nbr;                /* global ids of the nodes sharing an element with each one (itself included), increasing */
  int64_t *body;               /* [nlocal]: the body of every local node (smallest global node id of its component) */
  int64_t nbodies;             /* bodies in the whole mesh */
  int body_rounds;             /* rounds of the label propagation */
} pbng_surface;

/* Collective. The bodies alone (the one body labelling of the contact code: the surface's, and the barrier contact
 * step's, contact/pd_contact.c): body[nlocal] each local node's label, the smallest global node id of its connected
 * component of the element graph; *nbodies over the whole mesh; *rounds of the label propagation. */
PetscErrorCode pbng_body_labels(const pbng_dmesh *dm, int64_t *body, int64_t *nbodies, int *rounds);

/* Collective. The surface of dm (its topology only: positions are not used). */
PetscErrorCode pbng_surface_create(const pbng_dmesh *dm, pbng_surface *s);
PetscErrorCode pbng_surface_destroy(pbng_surface *s);

#endif
