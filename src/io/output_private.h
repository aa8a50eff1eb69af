/* The result file's private parts, shared by its modules: output.c (the file's life cycle:
 * open/resume, frames, attributes, close/suspend with the atomic renames, the public API),
 * output_rows.c (each rank's rows written collectively) and output_xdmf.c (the XDMF companion). */
#ifndef PBNG_IO_OUTPUT_PRIVATE_H
#define PBNG_IO_OUTPUT_PRIVATE_H

#include <hdf5.h>
#include <stdint.h>
#include "io/h5util.h"
#include "io/output.h"

#define PBNG_OUTPUT_MSG      512

/* A dataset the XDMF shows as an attribute: a node dataset of /mesh, or a field of the frames. */
typedef struct {
  char name[64]; /* XDMF attribute name */
  char path[96]; /* HDF5 dataset path */
  int ncols;
  int is_int;
  int per_frame;  /* a frame field: path is the name, in the group "/frames/NNNNNN/" of the frames holding it */
  int cell;       /* one row per element (M rows, a cell attribute), else per node (N rows) */
  int slot;       /* per_frame: its bit in frame_entry.fields */
  int recalled;   /* found in a resumed file, its rows' kind guessed from their count (output.c, recall_frame_fields) */
} output_field;

#define PBNG_OUTPUT_MAX_FRAME_FIELDS 64 /* distinct frame field names (bits of frame_entry.fields) */

typedef struct {
  int index;
  double time;
  uint64_t fields; /* the frame fields this frame holds (bit output_field.slot): a field may be in some frames only */
} frame_entry;

/* How an element of one kind appears in the XDMF topology: as `count` cells of kind `cell`, cell k
 * on the element's local nodes node[k][0 .. cell->nodes - 1] in XDMF's order: one cell of its own
 * kind (node[0] its XDMF permutation), or its linear sub-cells where XDMF or ParaView has no cell for
 * it (tet20; hex27 in a Mixed topology), or no cell at all (count 0: the bending stencil bend4, whose
 * two triangles are drawn as tri3 cells; it adds nothing to the topology's cells and values). */
typedef struct {
  const pbng_element_type *cell;
  int count;
  int node[PBNG_MAX_SUBCELLS][PBNG_MAX_ELEMENT_NODES];
} xdmf_form;

struct pbng_output {
  MPI_Comm comm;
  int rank, size;
  char *path;         /* final HDF5 name */
  char *partial;      /* "<path>.partial" */
  char *xdmf;         /* final XDMF name */
  char *xdmf_partial; /* "<xdmf>.partial" */
  hid_t file, mesh, frames;
  int64_t nnodes, nelems;
  const pbng_element_type *element; /* NULL when kinds mix */
  PetscBool mixed;              /* kinds mix: /mesh/element_types, and a Mixed XDMF topology */
  int nodes_per_element;        /* kinds mixed: the rows' width */
  const char *elements_path;    /* "/mesh/tetrahedra" (linear tetrahedra) or "/mesh/elements" */
  xdmf_form form[PBNG_ELEMENT_KIND_COUNT]; /* each kind's cells in the XDMF topology (Mixed or not) */
  PetscBool xdmf_cells;         /* the XDMF reads /mesh/xdmf_cells (another node order, or sub-cells) */
  int64_t xdmf_ncells;          /* its rows (kinds mixed: its values, in one column) */
  int xdmf_nodes;               /* its columns */
  int64_t xdmf_elements;        /* the XDMF topology's cells (bend4 rows draw none: may be fewer than nelems) */
  PetscBool cell_per_element;   /* every element draws exactly one XDMF cell, in row order: cell attributes possible */
  char topology[64];
  PetscBool have_elements, no_xdmf;
  output_field *fields;
  int nfields, nframe_fields;
  int64_t capfields;
  frame_entry *framelist;
  int nframes;
  int64_t capframes;
};

/* ------------------------------------------------------------------------------------------------ */
/* HDF5 errors (src/io/h5util.h)                                                                    */

/* For functions with a 'cleanup:' label and a PetscErrorCode 'ierr'. fmt needs >= 1 argument. */
#define H5TRY(call, fmt, ...)                                                                              \
  do {                                                                                                       \
    if ((call) < 0) {                                                                                        \
      char h5msg_[PBNG_OUTPUT_MSG];                                                                          \
      pbng_h5_last_error(h5msg_, sizeof h5msg_);                                                             \
      ierr = PetscError(PETSC_COMM_SELF, __LINE__, PETSC_FUNCTION_NAME, __FILE__, PETSC_ERR_LIB,             \
                        PETSC_ERROR_INITIAL, "output: " fmt " [HDF5: %s]", __VA_ARGS__, h5msg_);             \
      goto cleanup;                                                                                          \
    }                                                                                                        \
  } while (0)

/* PetscCall for functions with a 'cleanup:' label. */
#define TRY(call)                                                                                            \
  do {                                                                                                       \
    ierr = (call);                                                                                           \
    if (ierr) {                                                                                              \
      ierr = PetscError(PETSC_COMM_SELF, __LINE__, PETSC_FUNCTION_NAME, __FILE__, ierr, PETSC_ERROR_REPEAT,  \
                        " ");                                                                                \
      goto cleanup;                                                                                          \
    }                                                                                                        \
  } while (0)

/* output_rows.c: creates dataset `path` collectively (global shape [N] if ncols == 1 and one_d, else
 * [N, ncols]) / creates it and writes each rank's n rows (global indices rows, any order) of data. */
PetscErrorCode output_create_dataset(pbng_output *out, const char *path, hid_t ftype, int64_t N, int ncols, PetscBool one_d, hid_t *dset);
PetscErrorCode output_write_rows(pbng_output *out, const char *path, hid_t ftype, hid_t mtype, size_t elsize, int64_t N, int ncols,
                                 PetscBool one_d, int64_t n, const int64_t *rows, const void *data);

/* output_xdmf.c, rank 0: writes "<xdmf>.partial"; returns 0, or nonzero with reason filled. */
int output_write_xdmf(const pbng_output *out, char *reason, size_t len);

#endif
