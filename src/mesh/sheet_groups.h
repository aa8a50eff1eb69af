/* Sheet materials per physical group (issue 18; docs/cloth.md#sheet-materials-per-group): which material
 * each tri3 membrane and bend4 stencil of a mesh takes when physical groups (node sets) carry materials
 * of their own (-sheetK_group NAME).
 *
 * The material table of a run with n groups: entry 0 the run's material (-sheet_*), entry 1 + g group g's,
 * then one entry per pair a < b of those n + 1 materials for the bending stencils whose two triangles lie
 * in materials a and b: bending stiffness (k_b[a] + k_b[b]) / 2 (the rest of that entry, unused by a
 * stencil, is a's). A triangle belongs to a group when its three corners are in the group's node set. */
#ifndef PBNG_MESH_SHEET_GROUPS_H
#define PBNG_MESH_SHEET_GROUPS_H

#include "core/sheet_material.h"
#include "mesh/mesh.h"

/* Entries of the table of a run with n groups. */
static inline int pbng_sheet_table_size(int n) { return (n + 1) + (n + 1) * n / 2; }

/* The table (pbng_sheet_table_size(n) entries) from the run's material and the groups'. */
void pbng_sheet_table_build(const pbng_sheet_material *base, int n, const pbng_sheet_material *groups, pbng_sheet_material *table);

/* For every element of mesh (the whole mesh or one rank's piece of it), its entry in the table: a tri3
 * its triangle's material, a bend4 (triangles x0 x1 x2 and x0 x1 x3) its two triangles' material or
 * their pair's entry, other kinds 0. counts[g] (n entries) counts the triangles of group g. Errors: a
 * group name that is no node set of the mesh, a triangle in two groups (naming both and the element: its
 * global id global_elem[e], or e when global_elem is NULL). */
PetscErrorCode pbng_sheet_groups_assign(const pbng_mesh *mesh, int n, const char *const *names, const int64_t *global_elem, uint8_t *material,
                                        int64_t *counts);

#endif
