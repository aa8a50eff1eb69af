/* Reading one frame back from an earlier pbng result file (docs/output.md), so that a quasistatic run
 * can continue from it (-initial FILE -initial_frame K). Collective over comm. */
#ifndef PBNG_IO_RESULT_READER_H
#define PBNG_IO_RESULT_READER_H

#include <petscsys.h>
#include <stdint.h>

typedef struct {
  int frame;      /* the frame read */
  double time;    /* its time attribute */
  char mode[32];  /* the result's mode attribute: "quasistatic" | "dynamic" */
} pbng_result_frame;

/* Positions of frame `frame` (-1: the last written) of the pbng result at path, for the n nodes with
 * global rows rows[] (x: [n][3], in the order of rows). The file must be a pbng-1 result of nglobal
 * nodes whose /mesh/rest_positions equal rest ([n][3], same order) exactly: a result of another mesh
 * is an error naming the file. */
PetscErrorCode pbng_result_read_frame(MPI_Comm comm, const char *path, int frame, int64_t nglobal, int64_t n, const int64_t *rows,
                                      const double *rest, double *x, pbng_result_frame *info);

/* Rows rows[0..n) of the float64 field /frames/<frame>/<name> [nglobal, ncols] of the same result (frame:
 * as found by pbng_result_read_frame) into buf[n][ncols]; an absent or malformed field, or non-finite
 * values, is an error naming the file and the dataset. Collective. */
PetscErrorCode pbng_result_read_frame_field(MPI_Comm comm, const char *path, int frame, const char *name, int64_t nglobal, int ncols, int64_t n,
                                            const int64_t *rows, double *buf);

#endif
