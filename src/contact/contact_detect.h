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
  int ccd;              /* 1 (-contact_ccd): the detections of pbng_contacts_update use the swept rules
                           (pbng_contact_detect_swept) */
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
  int deep;             /* triangle: 1 when the pair comes from the swept rules (a vertex carried through the triangle
                           since the previous detection, or kept from it: pbng_contact_detect_swept), 0 from the distance rule */
} pbng_contact_record;

/* A vertex paired with a triangle of another body by an earlier detection: its global id and the triangle's key. */
typedef struct {
  int64_t vertex_gid, key;
} pbng_contact_deep_pair;

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

/* Collective. pbng_contact_detect with the swept rules (docs/contact.md#crossings), for a vertex that a step carried
 * deeper than d behind another body's surface, where the distance rule no longer sees it. x_prev[nlocal][3]: the
 * positions of the previous detection (NULL: none); keep[nkeep]: pairs to keep, of this rank's owned vertices
 * (pbng_contact_deep_pair, sorted by vertex gid then key): in a run, the previous detection's triangle records whose
 * vertex was behind the triangle (a vertex carried deeper than d after it was found keeps its triangle); after a
 * restart, the deep records of the detection restored. After the distance rule, a volume
 * vertex v with fewer than PBNG_CONTACT_MAX_TRIANGLES records gets, for a body B other than its own (not a sheet, not
 * one it is bound to) of which it kept no triangle:
 * - kept: each pair (v, T) of keep, T of B, when v is still behind T (s < 0 at the closest point p of T) and not
 *   more beside it than behind it or d (|x_v - p|^2 - s^2 <= max(s^2, d^2));
 * - crossing (with x_prev): the triangle T of B that v passed through from the front to the back first between
 *   x_prev and x (pbng_point_triangle_crossing, all four corners moving linearly), under the same condition at x.
 * Each such record has deep = 1 and is computed at x as the distance rule's are. The result depends on x, x_prev
 * and keep alone, not on the partition. */
PetscErrorCode pbng_contact_detect_swept(pbng_contact_detector *det, const double *x, const double *x_prev, int32_t nkeep,
                                         const pbng_contact_deep_pair *keep, int32_t *n, pbng_contact_record **rec);

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
  int64_t swept_candidates;                    /* pairs whose swept boxes met (the crossing test's) */
  int64_t crossings, kept;                     /* deep records from crossings and kept from the previous detection */
  double seconds;                              /* wall time of the detection */
} pbng_contact_detect_stats;
void pbng_contact_detect_get_stats(const pbng_contact_detector *det, pbng_contact_detect_stats *st);

#endif
