/* A run's state as named per-item arrays, for checkpoints (io/checkpoint.h): what the problem and
 * each solver must save to continue exactly where they stopped. */
#ifndef PBNG_CORE_STATE_H
#define PBNG_CORE_STATE_H

#include <stdint.h>
#include <stdio.h>

typedef enum { PBNG_FIELD_NODES, PBNG_FIELD_ELEMENTS, PBNG_FIELD_WEAK, PBNG_FIELD_SCALARS } pbng_field_kind;

/* One piece of state: items [0, nwrite) of this rank are written (owned nodes / owned elements /
 * counted weak constraints, in local numbering), items [0, nread) read back (nread >= nwrite, e.g.
 * every local element). data[nread][ncomp]. Scalars: ncomp values, the same on every rank. */
typedef struct {
  char name[40];
  pbng_field_kind kind;
  int ncomp;
  int64_t nwrite, nread;
  double *data;
} pbng_state_field;

enum { PBNG_MAX_STATE_FIELDS = 32 };

/* Appends a field to fields[*n]. */
static inline void pbng_state_add(pbng_state_field *fields, int *n, const char *name, pbng_field_kind kind, int ncomp, int64_t nwrite,
                                  int64_t nread, double *data)
{
  pbng_state_field *f = &fields[(*n)++];
  snprintf(f->name, sizeof(f->name), "%s", name);
  f->kind = kind, f->ncomp = ncomp, f->nwrite = nwrite, f->nread = nread, f->data = data;
}

#endif
