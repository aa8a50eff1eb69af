/* Contact detection (issue 17; paper Sec. 4.1, 10.2): which surface vertices of the distributed mesh
 * lie within the contact distance of a surface triangle (of another body, or of the same body away from
 * the vertex: self-contact) or of an analytic obstacle, with the closest point, its barycentric weights
 * and the normal. Collective; the result does not depend on the partition (each record is computed by
 * the owner of its vertex from positions that are the same on every partition).
 *
 * The surface: the corner nodes of the boundary faces of the volume mesh (faces of one element only;
 * quadrilateral faces as two triangles; high-order faces by their corners) and the sheets' triangles,
 * each as two sides (contact/surface.h). Each rank holds the
 * triangles whose lowest-global-id corner it owns, so every triangle is held once. Each detection
 * brings the triangles of other ranks that lie within the contact distance of this rank's surface
 * vertices (the surface halo, with their current corner positions). */
#ifndef PBNG_CONTACT_CONTACT_DETECT_H
#define PBNG_CONTACT_CONTACT_DETECT_H

#include "core/contact_geometry.h"
#include "parallel/dmesh.h"
#include "contact/surface.h"

/* The bodies a node can be bound to that the detector keeps (a node bound to more: the first ones, by constraint order). */
#define PBNG_CONTACT_BOUND_BODIES 2

typedef struct {
  double distance;      /* d (-contact_distance, > 0): a vertex within d of a triangle (either side) or closer than d to an obstacle */
  double sheet_offset;  /* h (-contact_thickness, 0 <= h < d): a vertex in contact with a sheet is kept h from it */
  int self;             /* 1: also pairs within one body (then triangles with a corner that shares an element
                           with the vertex are excluded) */
  int nobstacles;
  pbng_obstacle obstacle[PBNG_MAX_OBSTACLES];
} pbng_contact_detect_options;

typedef enum { PBNG_CONTACT_TRIANGLE = 0, PBNG_CONTACT_OBSTACLE = 1 } pbng_contact_kind;

#define PBNG_CONTACT_NEAREST 8       /* accepted triangles of a vertex among which its records are chosen */
#define PBNG_CONTACT_MAX_TRIANGLES 4 /* triangle records of one vertex at most */

typedef struct {
  pbng_contact_kind kind;
  int32_t vertex;       /* local index of the (owned) surface vertex */
  int64_t vertex_gid;   /* its global id */
  int64_t key;          /* triangle: its partition-independent id; obstacle: its index in the options */
  int64_t tri_gid[3];   /* triangle: global ids of its corners (outward order) */
  int32_t tri_owner[3]; /* triangle: their owner ranks */
  double tri_x[3][3];   /* triangle: the corners' positions at detection */
  double w[3];          /* triangle: barycentric weights of the closest point (non-negative, sum 1) */
  double point[3];      /* the closest point on the triangle / the obstacle's surface */
  double normal[3];     /* unit: the triangle's outward normal / the obstacle's normal into its allowed side */
  double offset;        /* a sheet side: the contact's offset h (the vertex is kept h in front of it); else 0 */
  double gap;           /* signed distance (x_vertex - point) . normal - offset: negative when penetrating */
} pbng_contact_record;

typedef struct pbng_contact_detector pbng_contact_detector;

/* Collective. The surface of dm (built once, from the topology alone) and its bodies (connected
 * components of the element graph), for the options given (copied; d > 0, at most
 * PBNG_MAX_OBSTACLES obstacles). dm is kept by reference and must outlive the detector. */
PetscErrorCode pbng_contact_detector_create(const pbng_dmesh *dm, const pbng_contact_detect_options *opt, pbng_contact_detector **det);
PetscErrorCode pbng_contact_detector_destroy(pbng_contact_detector **det);

/* Collective. Contacts of this rank's owned surface vertices at positions x[nlocal][3] (owned and
 * ghost nodes current): per vertex at most PBNG_CONTACT_MAX_TRIANGLES triangles and at most one record
 * per obstacle closer than d. Records sorted by (vertex_gid, kind, key); *rec is allocated
 * (PetscMalloc1) and owned by the caller.
 * The rules (docs/contact.md#detection): a vertex v pairs with a triangle not containing it, of
 * another body, or of its own body with `self` when no corner of the triangle shares an element with
 * v. With p the closest point, n the triangle's unit outward normal (a degenerate triangle pairs with
 * nothing), delta = |x_v - p| and s = (x_v - p).n, the pair is accepted when delta <= d and n_v.n < 0
 * (the surfaces face each other; n_v the angle-weighted sum of the normals of v's boundary-face
 * triangles), or, for a triangle of another body, s < 0 (v behind it), or, for a vertex of sheets alone
 * (no n_v: a point), s >= 0. A sheet side pairs with the vertices on its side (s > 0), of its own body
 * only if they face it or are points; its record's gap is s - h (-contact_thickness). Of the PBNG_CONTACT_NEAREST closest accepted
 * (by delta, ties by the lower key) v keeps the closest and each next one that it is behind (s < 0; a
 * sheet side: s < h) and
 * that forms a valley (pbng_triangles_form_valley) with every one kept before it. An obstacle gives a
 * record when phi(x_v) < d (any depth). */
PetscErrorCode pbng_contact_detect(pbng_contact_detector *det, const double *x, int32_t *n, pbng_contact_record **rec);

/* [nlocal]: 1 for the local nodes that are surface vertices, else 0 (valid while det lives). */
const uint8_t *pbng_contact_surface_nodes(const pbng_contact_detector *det);
/* The detector's surface: triangles, owned surface vertices, bodies (valid while det lives). */
const pbng_surface *pbng_contact_detector_surface(const pbng_contact_detector *det);

/* Figures of the last detection on this rank (for reports). */
typedef struct {
  int64_t surface_vertices, surface_triangles; /* held by this rank */
  int64_t halo_triangles;                      /* received from other ranks */
  int64_t candidates;                          /* vertex-triangle pairs the broad phase passed on (inside the
                                                  triangle's box grown by d: docs/contact.md#detection) */
  double seconds;                              /* wall time of the detection */
} pbng_contact_detect_stats;
void pbng_contact_detect_get_stats(const pbng_contact_detector *det, pbng_contact_detect_stats *st);

#endif
