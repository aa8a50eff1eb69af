/* The mesh of the muscles scene (issue 41; the PBNG paper's flagship, Sec. 10.2.2, Fig. 1, 2, 10; docs/muscles.md):
 * an upper arm of PBNG_ARM_MUSCLES fusiform muscles packed in a ring around the humerus, and the bones.
 *
 * Frame (metres): the humerus along +y from the elbow (the origin) to the shoulder, the elbow's axis z, anterior +x.
 * At rest the arm is extended: the forearm bone hangs along -y. Each muscle is a spindle: a mapped cylinder grid
 * (generate_shapes.h) whose cross-sections are horizontal disks of radius r(t) = r_tendon + (r_belly - r_tendon) sin(pi t)
 * centred on its axis point c(t) = (R(t) cos a, y_bot + t (y_top - y_bot), R(t) sin a), t in [0, 1] from the elbow
 * (t = 0) to the shoulder, a its angle in the ring. R(t) = max(r(t) / sin(pi / n), r_bone + r(t) + gap): where the
 * bellies are thick, neighbours' disks touch (their centres r_i + r_j apart), so neighbouring muscles touch along
 * their length; towards the tendons they keep `gap` from the bone. The bones are mapped cylinders of radius r_bone:
 * the humerus from just below the elbow to the shoulder, the forearm bone from below the elbow down.
 *
 * The muscles with an anterior angle (cos a > 0) are the flexors: their distal tendons (the layers with t <= the
 * tendon fraction) belong to the forearm and follow its rotation about the elbow's axis; the others' distal tendons,
 * and every proximal tendon, are held with the humerus. Node sets: "upper_arm" (the humerus and the tendons held
 * with it), "forearm" (the forearm bone and the flexors' distal tendons), "bones", "all_muscles", "flexors",
 * "extensors", and "muscleK" (K = 1..n) for each muscle. Each muscle and bone is a separate body (a connected
 * component): the connective tissue between the muscles is made by -bind_distance (contact/bindings.h). */
#ifndef PBNG_MESH_GENERATE_MUSCLES_H
#define PBNG_MESH_GENERATE_MUSCLES_H

#include "mesh/mesh.h"

#define PBNG_ARM_MUSCLES 8 /* in the ring: four flexors (anterior) and four extensors (posterior) */

/* The arm's dimensions (metres). */
typedef struct {
  double bone_radius;   /* humerus and forearm bone */
  double humerus[2];    /* y range of the humerus */
  double forearm[2];    /* y range of the forearm bone at rest */
  double muscle_y[2];   /* y of the muscles' distal and proximal ends */
  double belly_radius;  /* r_belly */
  double tendon_radius; /* r_tendon */
  double bone_gap;      /* the gap kept from the bones towards the tendons */
  double tendon_fraction;
} pbng_arm;

/* The arm of the scene (fixed dimensions; -scale refines the mesh, not the arm). */
void pbng_arm_default(pbng_arm *arm);

/* Cells across a muscle's belly at -scale s (even(round(8 s)), at least 2), its layers along (round(44 s), at least 4),
 * and cells across a bone (even(round(4 s)), at least 4). */
void pbng_arm_cells(double scale, int *muscle_cells, int *muscle_layers, int *bone_cells);

/* The cell size across a muscle's belly at -scale s: 2 r_belly / muscle cells. */
double pbng_arm_cell_size(double scale);

/* The whole arm at -scale s in one mesh of linear tetrahedra (validated), with the node sets above. */
PetscErrorCode pbng_generate_muscles(double scale, pbng_mesh *mesh);

#endif
