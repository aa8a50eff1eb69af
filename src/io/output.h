/* HDF5 result file + XDMF companion (ParaView opens the .xdmf as a time series).
 * Layout (docs/output.md):
 *   /mesh/rest_positions float64 [N,3]   /mesh/tetrahedra int64 [M,4] (0-based, positive volume)
 *   other element kinds: /mesh/elements int64 [M,nodes] in Gmsh's node order, and where XDMF's order
 *   or cell type differs, /mesh/xdmf_cells (XDMF's order; tet20: [27 M, 4] linear sub-tetrahedra)
 *   kinds mixed (root element "mixed"): /mesh/elements int64 [M,n] (n the widest kind's nodes, rows
 *   padded with -1), /mesh/element_types int32 [M] (Gmsh type ids), /mesh/xdmf_cells int64 [L]
 *   (XDMF's Mixed topology: each cell's XDMF type id, then its nodes in XDMF's order; tet20 as its 27
 *   linear sub-tetrahedra, hex27 as its 8 octant hexahedra, which ParaView 5.11 reads there)
 *   sheets (issue 18): tri3 rows (Gmsh type 2, XDMF Triangle / Mixed id 4) and bend4 stencil rows (type id
 *   -1, no XDMF cell), with root attributes sheet_membrane_C [3,3], sheet_thickness, sheet_bending_stiffness,
 *   sheet_weft [3], sheet_density; with -sheet_model peridynamic also sheet_model "peridynamic", pd_material,
 *   pd_s0, pd_s1, pd_kb, pd_thickness, pd_contact (0/1) and with it pd_contact_thickness, pd_contact_dhat and
 *   pd_obstacles [n, 7] (pbng_obstacle_kind, its 6 parameters); with -sheet_model cloth6 the root element "cloth6"
 *   (/mesh/elements [M, 6]: a triangle, then the vertex across each edge or the corner itself on a free edge; XDMF:
 *   the triangle), sheet_model "cloth6" and sheet_cloth6 [5] (k_weft, k_warp, k_shear, beta, k_bend)
 *   /mesh/fixed_nodes int64 [K]          /mesh/color int32 [N]        /mesh/partition int32 [N]
 *   /mesh/node_loads float64 [N,3] (a point load, -load_box: each node's share)
 *   /mesh/handle_stiffness float64 [N] (released boundary sets, -bcK_release T: the spring stiffness k_i tying
 *                                     node i to its motion x_D(X, t) while t <= T; 0 for other nodes)
 *   /constraints/weak/{nodes int64 [W,8], weights float64 [W,8], stiffness float64 [W,9]} (io/weak_rows.h)
 *   /frames/NNNNNN/positions float64 [N,3], attributes time, iterations, residual,
 *                                          relative_residual, seconds, energy
 *   /frames/NNNNNN/plastic_strain float64 [M,6] (plasticity, -plastic_yield ...; volume kinds): the plastic
 *                                 strain eps_p (Voigt xx, yy, zz, yz, xz, xy) per element that the frame's
 *                                 equilibrium was solved with (updated at the start of each frame from the
 *                                 previous frame's positions, seed Sec. 4.2); XDMF cell attribute (full Tensor)
 *   /frames/NNNNNN/handle_targets float64 [N,3] (released boundary sets): x_D(X, t) of their nodes (zeros
 *                                 elsewhere) in the frames where the handles act (t <= T), absent afterwards
 *                                 (its presence is the signal); XDMF node attribute of those frames
 *   root attributes: format ("pbng-1"), element (kind name), material, youngs_modulus, poisson_ratio, density, gravity[3],
 *                    solver, command_line, mode, frames_written
 * The file is written as "<path>.partial" and renamed to <path> by pbng_output_close(.., success=1);
 * the XDMF is written the same way. An interrupted run never leaves a truncated file under the
 * requested names and never touches an earlier result there.
 * Every function is collective over the communicator given to pbng_output_open: each rank passes
 * the rows it owns (any number, possibly zero) with their global row indices. */
#ifndef PBNG_IO_OUTPUT_H
#define PBNG_IO_OUTPUT_H

#include <petscsys.h>
#include <stdint.h>
#include "core/element.h"
#include "core/contact_geometry.h"
#include "core/sheet_material.h"

typedef struct pbng_output pbng_output;

/* The peridynamic membranes' parameters as the root attributes sheet_model, pd_* record them (docs/output.md),
 * every default resolved by the caller. */
typedef struct {
  const char *material;      /* "neohookean" | "stretching" (pd_material) */
  double s0, s1, k_b, thickness; /* pd_s0, pd_s1, pd_kb, pd_thickness */
  int contact;               /* pd_contact: the contact local step is on */
  double contact_thickness, contact_dhat, contact_rest_exclusion; /* xi, dhat, the rest exclusion in effect */
  double contact_eps, contact_kappa; /* eps of Eq. 51, the barrier's weight in the frame's energy (-pd_contact_kappa) */
  int nobstacles;
  const pbng_obstacle *obstacle; /* [nobstacles] (pd_obstacles rows: kind, 6 parameters) */
} pbng_output_pd;

typedef struct {
  const char *material;      /* "corotated" | "neohookean" | "stable_neohookean" */
  double youngs_modulus, poisson_ratio, density;
  double gravity[3];
  const char *solver;        /* "pbng" */
  const char *mode;          /* "quasistatic" | "dynamic" */
  const char *command_line;
  const pbng_element_type *element; /* the mesh's element kind; NULL: linear tetrahedra, or kinds mixed (mixed_nen) */
  int mixed_nen;             /* kinds mix: nodes per element row (the widest kind's); 0 for one kind */
  const int64_t *kind_count; /* kinds mix: [PBNG_ELEMENT_KIND_COUNT] global elements of each kind */
  const char *format;        /* root attribute format: NULL for "pbng-1" (a result) */
  PetscBool no_xdmf;         /* no XDMF companion (checkpoint files) */
  int frames;                /* frames of node positions a result will hold (0: not a result, no file-size check) */
  const pbng_sheet_material *sheet; /* the sheet terms' material when the mesh has tri3/bend4 elements, else NULL */
  const pbng_output_pd *pd;  /* -sheet_model peridynamic: its parameters (root attributes sheet_model, pd_*), else NULL */
  int frame_node_doubles;    /* doubles per node and frame in frame fields (handle_targets: 3), for the file-size check */
  int frame_cell_doubles;    /* doubles per element and frame in frame fields (plastic_strain: 6), for the file-size check */
} pbng_output_info;

typedef struct {
  double time;
  int iterations;
  double residual, relative_residual, seconds, energy;
  int converged; /* 1: reached the run's tolerance, 0: stopped at its cap (or time budget) before it, -1: no tolerance (fixed iterations) */
} pbng_frame_info;

/* Creates "<path>.partial" (fails cleanly, naming the path, when it cannot be created, or when the
 * process's file-size limit (ulimit -f) is below the data the file will hold) and writes the root
 * attributes. nnodes/nelems are the global counts. */
PetscErrorCode pbng_output_open(MPI_Comm comm, const char *path, const pbng_output_info *info,
                                int64_t nnodes, int64_t nelems, pbng_output **out);

/* Mesh datasets. Each rank gives nlocal rows and their global row indices (rows[i] in 0..N-1, any
 * order, each row on exactly one rank). 'dataset' is relative to /mesh ("color") or absolute
 * ("/mesh/color"). Node datasets with 1 or 3 columns appear as XDMF node attributes
 * (rest_positions as "rest_position"). ncols == 1 gives a 1-D dataset [N]. */
PetscErrorCode pbng_output_write_nodes_double(pbng_output *out, const char *dataset, int ncols, int64_t nlocal,
                                              const int64_t *rows, const double *data);
PetscErrorCode pbng_output_write_nodes_int32(pbng_output *out, const char *dataset, int64_t nlocal,
                                             const int64_t *rows, const int32_t *data);
/* The element connectivity (int64 [M, nodes per element], the kind's native order: /mesh/tetrahedra for
 * linear tetrahedra, else /mesh/elements, and /mesh/xdmf_cells where XDMF needs another order or
 * linear sub-cells) from element rows with global element indices. Kinds mixed: rows as wide as
 * mixed_nen (padded with -1) and each row's kind in kinds[] (else NULL); /mesh/element_types and the
 * Mixed /mesh/xdmf_cells are written too (every rank holds M bytes while it places its cells). */
PetscErrorCode pbng_output_write_elements(pbng_output *out, int64_t nlocal, const int64_t *rows,
                                          const int64_t *connectivity, const uint8_t *kinds);
/* Any other table: dataset 'path' (absolute, e.g. "/constraints/weak/nodes") of N rows of ncols values
 * (int64_t or double), each rank giving its rows as for node datasets. */
typedef enum { PBNG_OUTPUT_INT64, PBNG_OUTPUT_DOUBLE } pbng_output_type;
PetscErrorCode pbng_output_write_table(pbng_output *out, const char *path, pbng_output_type type, int64_t N, int ncols,
                                       int64_t nlocal, const int64_t *rows, const void *data);
/* /mesh/fixed_nodes: the union of the ranks' lists, written sorted. */
PetscErrorCode pbng_output_write_fixed_nodes(pbng_output *out, int64_t nlocal, const int64_t *global_nodes);

/* /frames/NNNNNN/positions with its attributes (stored on the group /frames/NNNNNN and, identically,
 * on its positions dataset); also updates the root attribute frames_written. */
PetscErrorCode pbng_output_write_frame(pbng_output *out, int frame, int64_t nlocal, const int64_t *rows,
                                       const double *positions, const pbng_frame_info *finfo);

/* Frame fields: /frames/NNNNNN/<name>, written after that frame's pbng_output_write_frame, rows as for the
 * node datasets (global node rows 0..N-1) or, for the cells variant, as for pbng_output_write_elements
 * (global element rows 0..M-1); ncols == 1 gives a 1-D dataset. A field may be in some frames only: each
 * frame's XDMF grid shows the fields that frame holds, with the same columns and type in every frame
 * (a node attribute for 1 or 3 columns; a cell attribute for 1, 3, 6 (a symmetric tensor in Voigt order
 * xx, yy, zz, yz, xz, xy, shown as the full 3 x 3 Tensor: output_xdmf.c) or 9 (Tensor) columns where every
 * element is one XDMF cell: not for tet20's sub-tetrahedra, nor a mixed mesh with tet20, hex27 octants or
 * bend4 stencils, whose field stays in the HDF5 file only).
 * int32 [N] node field (contacts: in_contact, node_color); float64 [N, ncols] node field (handle_targets);
 * float64 [M, ncols] element field (plastic_strain). */
PetscErrorCode pbng_output_write_frame_nodes_int32(pbng_output *out, int frame, const char *name, int64_t nlocal, const int64_t *rows,
                                                  const int32_t *data);
PetscErrorCode pbng_output_write_frame_nodes_double(pbng_output *out, int frame, const char *name, int ncols, int64_t nlocal,
                                                    const int64_t *rows, const double *data);
PetscErrorCode pbng_output_write_frame_cells_double(pbng_output *out, int frame, const char *name, int ncols, int64_t nlocal,
                                                    const int64_t *rows, const double *data);

/* A root attribute: n doubles, or a string (replaces an earlier value). */
PetscErrorCode pbng_output_root_doubles(pbng_output *out, const char *name, int n, const double *values);
PetscErrorCode pbng_output_root_string(pbng_output *out, const char *name, const char *value);

/* Flushes what was written to "<path>.partial" (consistent on disk up to here). */
PetscErrorCode pbng_output_flush(pbng_output *out);

/* Closes the file but keeps it as "<path>.partial" (frames_written up to date) for a later
 * pbng_output_resume: a run stopped to be restarted. */
PetscErrorCode pbng_output_suspend(pbng_output **out);

/* Reopens "<path>.partial" left by pbng_output_suspend (or an interrupted run) to continue it: checks
 * that it is a pbng-1 result of nnodes nodes and nelems elements, keeps frames 0..keep_frames-1 (they
 * must all be there) and deletes later ones. Collective. */
PetscErrorCode pbng_output_resume(MPI_Comm comm, const char *path, const pbng_output_info *info, int64_t nnodes, int64_t nelems,
                                  int keep_frames, pbng_output **out);

/* success = PETSC_TRUE: flush, close, write the XDMF, rename both into place.
 * success = PETSC_FALSE: close and delete the partial files (the requested names are untouched). */
PetscErrorCode pbng_output_close(pbng_output **out, PetscBool success);

#endif
