/* The muscles scene's mesh (generate_muscles.h). */
#include "mesh/generate_muscles.h"
#include <inttypes.h>
#include <math.h>
#include <petscmath.h>
#include <stdio.h>
#include <string.h>
#include "mesh/generate_shapes.h"

void pbng_arm_default(pbng_arm *arm)
{
  *arm = (pbng_arm){.bone_radius = 0.01,
                    .humerus = {0.06, 0.30},
                    .forearm = {-0.16, -0.02},
                    .muscle_y = {-0.04, 0.27},
                    .belly_radius = 0.02,
                    .tendon_radius = 0.006,
                    .bone_gap = 0.004,
                    .tendon_fraction = 0.05};
}

void pbng_arm_cells(double scale, int *muscle_cells, int *muscle_layers, int *bone_cells)
{
  const long m = lround(8 * scale), l = lround(44 * scale), b = lround(4 * scale);
  *muscle_cells = pbng_shape_even_cells(m < 2 ? 2 : (int)m);
  *muscle_layers = l < 4 ? 4 : (int)l;
  *bone_cells = pbng_shape_even_cells(b < 4 ? 4 : (int)b); /* a coarser bone's corners poke into the muscles between their vertices */
}

double pbng_arm_cell_size(double scale)
{
  pbng_arm arm;
  int cells, layers, bone_cells;
  pbng_arm_default(&arm);
  pbng_arm_cells(scale, &cells, &layers, &bone_cells);
  return 2 * arm.belly_radius / cells;
}

/* One body of the arm as a spindle about a vertical axis: at parameter t in [0, 1] its horizontal cross-section is
 * the disk of radius radius(t) about (R(t) cos a, y0 + t (y1 - y0), R(t) sin a). A bone: constant radius, R = 0. */
typedef struct {
  int muscle;    /* 1: a muscle's profile (generate_muscles.h), 0: a bone's cylinder */
  double angle;  /* a, the muscle's angle in the ring (from +x towards +z) */
  double y[2];   /* y0, y1 */
  double radius; /* a bone's radius */
} spindle;

/* r(t) of a muscle: tendon radius at both ends, the belly's at t = 1/2. */
static double muscle_radius(const pbng_arm *arm, double t) { return arm->tendon_radius + (arm->belly_radius - arm->tendon_radius) * sin(PETSC_PI * t); }

/* R(t): the distance of a muscle's axis from the humerus's: neighbours' disks touch (2 R sin(pi / n) = 2 r) where that
 * keeps the gap from the bone, else the gap. */
static double ring_radius(const pbng_arm *arm, double t)
{
  const double r = muscle_radius(arm, t);
  return fmax(r / sin(PETSC_PI / PBNG_ARM_MUSCLES), arm->bone_radius + r + arm->bone_gap);
}

/* The point of spindle s at parameter t and unit-disk coordinates (u, v): x = c_x + r u, z = c_z - r v (the minus
 * keeps the cylinder grid's orientation: the map's Jacobian determinant is r^2 (y1 - y0) / H > 0). */
static void spindle_point(const pbng_arm *arm, const spindle *s, double t, double u, double v, double X[3])
{
  const double r = s->muscle ? muscle_radius(arm, t) : s->radius, R = s->muscle ? ring_radius(arm, t) : 0;
  X[0] = R * cos(s->angle) + r * u;
  X[1] = s->y[0] + t * (s->y[1] - s->y[0]);
  X[2] = R * sin(s->angle) - r * v;
}

/* Spindle s meshed with `cells` cells across and `layers` along: the unit cylinder grid of that many layers (height
 * H = 2 layers / cells), each node mapped by spindle_point with t = z / H + 1/2. */
static PetscErrorCode generate_spindle(const pbng_arm *arm, const spindle *s, int cells, int layers, pbng_mesh *mesh)
{
  const double H = 2.0 * layers / cells;

  PetscFunctionBeginUser;
  PetscCall(pbng_generate_cylinder(1.0, H, cells, mesh));
  for (int64_t n = 0; n < mesh->nnodes; ++n) {
    double *x = &mesh->X[3 * n];
    const double t = fmin(1.0, fmax(0.0, x[2] / H + 0.5)), u = x[0], v = x[1];
    spindle_point(arm, s, t, u, v, x);
  }
  PetscFunctionReturn(0);
}

/* Muscle k's spindle (k = 0..n-1): angle 2 pi (k + 1/2) / n. */
static spindle muscle_spindle(const pbng_arm *arm, int k)
{
  return (spindle){.muscle = 1, .angle = 2 * PETSC_PI * (k + 0.5) / PBNG_ARM_MUSCLES, .y = {arm->muscle_y[0], arm->muscle_y[1]}};
}

static int is_flexor(const spindle *s) { return cos(s->angle) > 0; }

/* The arm's bodies: the muscles, then the humerus and the forearm bone. */
#define ARM_BODIES (PBNG_ARM_MUSCLES + 2)
#define HUMERUS PBNG_ARM_MUSCLES
#define FOREARM (PBNG_ARM_MUSCLES + 1)

static spindle arm_body(const pbng_arm *arm, int b)
{
  if (b < PBNG_ARM_MUSCLES) return muscle_spindle(arm, b);
  const double *y = b == HUMERUS ? arm->humerus : arm->forearm;
  return (spindle){.muscle = 0, .y = {y[0], y[1]}, .radius = arm->bone_radius};
}

/* Node lists of the arm's sets as they are filled. */
enum { SET_UPPER_ARM, SET_FOREARM, SET_BONES, SET_MUSCLES, SET_FLEXORS, SET_EXTENSORS, SET_COUNT };
static const char *const set_names[SET_COUNT] = {"upper_arm", "forearm", "bones", "all_muscles", "flexors", "extensors"};

typedef struct {
  int32_t *nodes[SET_COUNT];
  int64_t count[SET_COUNT];
} arm_sets;

/* Where node v (at parameter t of body b) belongs. */
static void classify_node(const pbng_arm *arm, int b, const spindle *s, double t, int layers, int32_t v, arm_sets *sets)
{
  const double tendon = fmax(arm->tendon_fraction, 1.0 / layers) + 1e-9; /* at least the end layer and the next */
  if (b >= PBNG_ARM_MUSCLES) {
    const int set = b == HUMERUS ? SET_UPPER_ARM : SET_FOREARM;
    sets->nodes[set][sets->count[set]++] = v;
    sets->nodes[SET_BONES][sets->count[SET_BONES]++] = v;
    return;
  }
  sets->nodes[SET_MUSCLES][sets->count[SET_MUSCLES]++] = v;
  const int group = is_flexor(s) ? SET_FLEXORS : SET_EXTENSORS;
  sets->nodes[group][sets->count[group]++] = v;
  if (t >= 1 - tendon) sets->nodes[SET_UPPER_ARM][sets->count[SET_UPPER_ARM]++] = v;
  else if (t <= tendon) {
    const int held = is_flexor(s) ? SET_FOREARM : SET_UPPER_ARM;
    sets->nodes[held][sets->count[held]++] = v;
  }
}

/* The sets of the assembled mesh: the six above and one per muscle ([first[k], first[k + 1]) its nodes). */
static PetscErrorCode add_arm_sets(const pbng_arm *arm, const int64_t *first, const int *layers, pbng_mesh *mesh)
{
  arm_sets sets;

  PetscFunctionBeginUser;
  memset(&sets, 0, sizeof(sets));
  for (int k = 0; k < SET_COUNT; ++k) PetscCall(PetscMalloc1(mesh->nnodes + 1, &sets.nodes[k]));
  for (int b = 0; b < ARM_BODIES; ++b) {
    const spindle s = arm_body(arm, b);
    for (int64_t v = first[b]; v < first[b + 1]; ++v) {
      const double t = (mesh->X[3 * v + 1] - s.y[0]) / (s.y[1] - s.y[0]);
      classify_node(arm, b, &s, t, layers[b], (int32_t)v, &sets);
    }
  }
  for (int k = 0; k < SET_COUNT; ++k) PetscCall(pbng_mesh_add_node_set(mesh, set_names[k], sets.count[k], sets.nodes[k]));
  for (int b = 0; b < PBNG_ARM_MUSCLES; ++b) {
    char name[32];
    snprintf(name, sizeof(name), "muscle%d", b + 1);
    for (int64_t v = first[b]; v < first[b + 1]; ++v) sets.nodes[0][v - first[b]] = (int32_t)v;
    PetscCall(pbng_mesh_add_node_set(mesh, name, first[b + 1] - first[b], sets.nodes[0]));
  }
  for (int k = 0; k < SET_COUNT; ++k) PetscCall(PetscFree(sets.nodes[k]));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_generate_muscles(double scale, pbng_mesh *mesh)
{
  pbng_arm arm;
  pbng_mesh parts[ARM_BODIES];
  int64_t first[ARM_BODIES + 1];
  int cells, layers, bone_cells, body_layers[ARM_BODIES];
  char what[64];

  PetscFunctionBeginUser;
  PetscCheck(scale > 0 && isfinite(scale), PETSC_COMM_SELF, PETSC_ERR_ARG_OUTOFRANGE, "muscles: scale %g (need > 0)", scale);
  pbng_arm_default(&arm);
  pbng_arm_cells(scale, &cells, &layers, &bone_cells);
  memset(parts, 0, sizeof(parts));
  for (int b = 0; b < ARM_BODIES; ++b) {
    const spindle s = arm_body(&arm, b);
    const double bone_h = 2 * arm.bone_radius / bone_cells; /* a bone's layers about as thick as its cells are wide */
    const long bl = lround((s.y[1] - s.y[0]) / bone_h);
    body_layers[b] = b < PBNG_ARM_MUSCLES ? layers : (bl < 2 ? 2 : (int)bl);
    PetscCall(generate_spindle(&arm, &s, b < PBNG_ARM_MUSCLES ? cells : bone_cells, body_layers[b], &parts[b]));
  }
  snprintf(what, sizeof(what), "muscles at -scale %g", scale);
  PetscCall(pbng_mesh_join_bodies(ARM_BODIES, parts, what, first, mesh));
  PetscCall(add_arm_sets(&arm, first, body_layers, mesh));
  snprintf(mesh->source, sizeof(mesh->source), "upper arm of %d muscles and 2 bones (scale %g: %d cells across a belly, %d layers)", PBNG_ARM_MUSCLES,
           scale, cells, layers);
  PetscCall(pbng_mesh_validate(mesh, 0));
  PetscFunctionReturn(0);
}
