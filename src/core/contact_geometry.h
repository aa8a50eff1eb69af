/* Geometry of contacts (issue 17): the closest point of a triangle to a point, triangle normals, the
 * angle-weighted vertex normal, and analytic obstacles (planes, solid boxes, box containers, spheres)
 * with their signed distance, closest point and normal. Pure functions, no allocation, no MPI.
 * The rules built on them: docs/contact.md#detection. */
#ifndef PBNG_CORE_CONTACT_GEOMETRY_H
#define PBNG_CORE_CONTACT_GEOMETRY_H

#define PBNG_MAX_OBSTACLES 16

/* The closest point p of triangle (a, b, c) to x and its barycentric weights w (p = w0 a + w1 b + w2 c,
 * w >= 0, sum 1); returns |x - p|^2. Degenerate triangles (zero area) are handled (closest point of
 * their edges). Well-shaped triangles take Ericson's region tests (Real-Time Collision Detection,
 * 5.1.5); slivers (twice the area below 1e-3 times the longest edge squared), degenerate triangles and
 * any case where the region tests give a weight that is not in [0, 1] take the nearest of the three
 * edges' closest points and the plane projection (when it falls inside). */
double pbng_point_triangle_closest(const double x[3], const double a[3], const double b[3], const double c[3], double w[3], double p[3]);

/* Unit normal of (a, b, c) by the right-hand rule, (b - a) x (c - a) / |.|; returns |(b - a) x (c - a)|
 * (twice the area; 0 for a degenerate triangle, n then zero). */
double pbng_triangle_normal(const double a[3], const double b[3], const double c[3], double n[3]);

/* Adds to nv the contribution of one surface triangle to the angle-weighted normal of its corner v:
 * the triangle given as (v, a, b), its corners in outward order starting at v; adds theta * n, theta
 * the triangle's angle at v and n its unit normal (nothing for a degenerate triangle). Summing over
 * the triangles around v in a fixed order gives the vertex normal (not normalised). */
void pbng_vertex_normal_add(const double v[3], const double a[3], const double b[3], double nv[3]);

/* Whether two triangles t and u (corners in outward order; n_t, n_u their unit normals) form a valley of
 * the free space: each one's centroid lies in front of the other's plane by more than PBNG_VALLEY_SLOPE
 * times the distance between the centroids (a concave crease between neighbours, or two surfaces facing
 * each other). A vertex near such a pair must stay in front of both planes: the free space there is the
 * intersection of their front half-spaces (at a ridge it is the union, and one plane suffices). Flat
 * neighbours (slope below PBNG_VALLEY_SLOPE, ~3 degrees) are no valley: one plane holds a vertex there. */
#define PBNG_VALLEY_SLOPE 0.05
int pbng_triangles_form_valley(const double t[3][3], const double n_t[3], const double u[3][3], const double n_u[3]);

typedef enum {
  PBNG_OBSTACLE_PLANE = 0, /* "plane:px,py,pz,nx,ny,nz": the half-space on n's side of the plane through p is allowed */
  PBNG_OBSTACLE_BOX,       /* "box:lx,ly,lz,hx,hy,hz": a solid box; its outside is allowed */
  PBNG_OBSTACLE_CONTAINER, /* "container:lx,ly,lz,hx,hy,hz": an inside-out box; its inside is allowed */
  PBNG_OBSTACLE_SPHERE,    /* "sphere:cx,cy,cz,r": a solid ball; its outside is allowed */
  PBNG_OBSTACLE_KIND_COUNT
} pbng_obstacle_kind;

typedef struct {
  pbng_obstacle_kind kind;
  double p[6]; /* plane: point, unit normal; box/container: lo, hi; sphere: centre, radius */
} pbng_obstacle;

/* Parses one obstacle specification (the forms above; spaces around the kind and the numbers
 * allowed; the plane's normal is normalised). Returns NULL, or a message naming the problem (unknown
 * kind, wrong number of values, which value is not a number or not finite, a zero normal, the axis on
 * which lo is not below hi, radius not positive); *o is then unchanged. */
const char *pbng_obstacle_parse(const char *spec, pbng_obstacle *o);

/* Signed distance of x to the obstacle's surface, positive on the allowed side; q the closest point
 * of the surface and n the unit normal there pointing into the allowed side (x = q + phi n where the
 * closest point is unique). Where it is not: a point inside a box or container takes the nearest face
 * (ties: the first of -x, +x, -y, +y, -z, +z), on the box's surface phi = 0 with that face's normal,
 * and the centre of a sphere takes n = +z. */
double pbng_obstacle_closest(const pbng_obstacle *o, const double x[3], double q[3], double n[3]);

#endif
