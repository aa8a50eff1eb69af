/* The objects_dropping scene's mesh (generate_objects.h). */
#include "mesh/generate_objects.h"
#include <math.h>
#include <petscmath.h>
#include <stdio.h>
#include <string.h>
#include "mesh/generate_shapes.h"

#define LAYERS (PBNG_OBJECTS_MAX / (PBNG_OBJECTS_PER_ROW * PBNG_OBJECTS_PER_ROW))
#define JITTER 0.04 /* the largest shift of an object from its lattice point, per axis */

/* Uniform in [0, 1) from (object, draw): splitmix64 of the pair, so that every object's numbers are
 * its own and the same on every machine. */
static double object_uniform(int object, int draw)
{
  uint64_t z = 0x9e3779b97f4a7c15ull * (uint64_t)(1 + object) + 0xbf58476d1ce4e5b9ull * (uint64_t)(1 + draw);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  z ^= z >> 31;
  return (double)(z >> 11) / 9007199254740992.0;
}

/* A uniformly distributed rotation from three uniforms (Shoemake's unit quaternion), row-major. */
static void uniform_rotation(double u1, double u2, double u3, double R[9])
{
  const double a = sqrt(1 - u1), b = sqrt(u1);
  const double w = a * sin(2 * PETSC_PI * u2), x = a * cos(2 * PETSC_PI * u2), y = b * sin(2 * PETSC_PI * u3), z = b * cos(2 * PETSC_PI * u3);
  const double r[9] = {1 - 2 * (y * y + z * z), 2 * (x * y - w * z),     2 * (x * z + w * y),
                       2 * (x * y + w * z),     1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
                       2 * (x * z - w * y),     2 * (y * z + w * x),     1 - 2 * (x * x + y * y)};
  for (int k = 0; k < 9; ++k) R[k] = r[k];
}

/* Sizes drawn so that every object fits in a ball of radius 0.55 about its centre (half the box's
 * diagonal, the cylinder's sqrt(r^2 + h^2/4), the torus's R + r), and with the jitter and the spacing
 * 1.3 no two objects and no object and the container touch at rest: gaps of at least 2 (0.65 - 0.55 - 0.04)
 * = 0.12 between objects and 0.06 to the container's walls and floor. */
static void solid_size(pbng_solid_kind kind, int i, double size[3])
{
  const double u0 = object_uniform(i, 0), u1 = object_uniform(i, 1), u2 = object_uniform(i, 2);
  switch (kind) {
  case PBNG_SOLID_BOX: size[0] = 0.40 + 0.22 * u0, size[1] = 0.40 + 0.22 * u1, size[2] = 0.40 + 0.22 * u2; break;
  case PBNG_SOLID_BALL: size[0] = 0.30 + 0.20 * u0; break;
  case PBNG_SOLID_CYLINDER: size[0] = 0.20 + 0.10 * u0, size[1] = 0.50 + 0.30 * u1; break;
  case PBNG_SOLID_TORUS: size[0] = 0.30 + 0.07 * u0, size[1] = 0.13 + 0.04 * u1; break;
  default: break;
  }
}

void pbng_objects_solid(int i, pbng_solid *s)
{
  const int per_layer = PBNG_OBJECTS_PER_ROW * PBNG_OBJECTS_PER_ROW;
  const int lattice[3] = {i % PBNG_OBJECTS_PER_ROW, i / per_layer, (i / PBNG_OBJECTS_PER_ROW) % PBNG_OBJECTS_PER_ROW};

  memset(s, 0, sizeof(*s));
  s->kind = (pbng_solid_kind)((i + i / PBNG_OBJECTS_PER_ROW) % PBNG_SOLID_KIND_COUNT); /* each row shifted: every row and column mixes the kinds */
  solid_size(s->kind, i, s->size);
  uniform_rotation(object_uniform(i, 3), object_uniform(i, 4), object_uniform(i, 5), s->rotation);
  for (int d = 0; d < 3; ++d) s->center[d] = PBNG_OBJECTS_SPACING * (lattice[d] + 0.5) + JITTER * (2 * object_uniform(i, 6 + d) - 1);
}

void pbng_objects_container(double box[6])
{
  const double a = PBNG_OBJECTS_SPACING;
  const double b[6] = {0, 0, 0, PBNG_OBJECTS_PER_ROW * a, (LAYERS + 1) * a, PBNG_OBJECTS_PER_ROW * a};
  for (int k = 0; k < 6; ++k) box[k] = b[k];
}

double pbng_objects_cell_size(double scale) { return 0.2 / scale; }

/* Cells along a length at cell size h: at least 1. */
static int cells_along(double length, double h)
{
  const double c = round(length / h);
  return c < 1 ? 1 : c > 4096 ? 4096 : (int)c;
}

PetscErrorCode pbng_generate_solid(const pbng_solid *s, double h, pbng_mesh *mesh)
{
  const double *z = s->size;

  PetscFunctionBeginUser;
  switch (s->kind) {
  case PBNG_SOLID_BOX: PetscCall(pbng_generate_shape_box(z, cells_along(fmax(z[0], fmax(z[1], z[2])), h), mesh)); break;
  case PBNG_SOLID_BALL: PetscCall(pbng_generate_ball(z[0], cells_along(2 * z[0], h), mesh)); break;
  case PBNG_SOLID_CYLINDER: PetscCall(pbng_generate_cylinder(z[0], z[1], cells_along(2 * z[0], h), mesh)); break;
  case PBNG_SOLID_TORUS: PetscCall(pbng_generate_torus(z[0], z[1], cells_along(2 * z[1], h), mesh)); break;
  default: SETERRQ(PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "object: unknown solid kind %d", (int)s->kind);
  }
  for (int64_t n = 0; n < mesh->nnodes; ++n) { /* x = R X + c: a proper rotation keeps every volume positive */
    double *x = &mesh->X[3 * n];
    const double X[3] = {x[0], x[1], x[2]};
    for (int d = 0; d < 3; ++d) x[d] = s->rotation[3 * d] * X[0] + s->rotation[3 * d + 1] * X[1] + s->rotation[3 * d + 2] * X[2] + s->center[d];
  }
  PetscFunctionReturn(0);
}

/* The node sets of each kind: the nodes [first[i], first[i + 1]) of object i. */
static PetscErrorCode add_kind_sets(int n, const int64_t *first, pbng_mesh *mesh)
{
  static const char *const names[PBNG_SOLID_KIND_COUNT] = {"boxes", "balls", "cylinders", "tori"};
  int32_t *nodes;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(mesh->nnodes + 1, &nodes));
  for (int k = 0; k < PBNG_SOLID_KIND_COUNT; ++k) {
    int64_t count = 0;
    for (int i = 0; i < n; ++i) {
      pbng_solid s;
      pbng_objects_solid(i, &s);
      for (int64_t v = first[i]; s.kind == (pbng_solid_kind)k && v < first[i + 1]; ++v) nodes[count++] = (int32_t)v;
    }
    if (count) PetscCall(pbng_mesh_add_node_set(mesh, names[k], count, nodes));
  }
  PetscCall(PetscFree(nodes));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_generate_objects(int n, double scale, pbng_mesh *mesh)
{
  pbng_mesh *parts;
  int64_t *first;
  char what[64];
  const double h = pbng_objects_cell_size(scale);

  PetscFunctionBeginUser;
  PetscCheck(n >= 1 && n <= PBNG_OBJECTS_MAX, PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "objects: %d objects (need 1..%d)", n, PBNG_OBJECTS_MAX);
  PetscCheck(scale > 0 && isfinite(scale), PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "objects: scale %g (need > 0)", scale);
  PetscCall(PetscCalloc2(n, &parts, n + 1, &first));
  for (int i = 0; i < n; ++i) {
    pbng_solid s;
    pbng_objects_solid(i, &s);
    PetscCall(pbng_generate_solid(&s, h, &parts[i]));
  }
  snprintf(what, sizeof(what), "objects at -scale %g", scale);
  PetscCall(pbng_mesh_join_bodies(n, parts, what, first, mesh));
  PetscCall(add_kind_sets(n, first, mesh));
  PetscCall(PetscFree2(parts, first));
  snprintf(mesh->source, sizeof(mesh->source), "%d objects (scale %g)", n, scale);
  PetscCall(pbng_mesh_validate(mesh, 0));
  PetscFunctionReturn(0);
}
