/* Weak-constraint files (Sec. 4.1), documented in docs/weak_constraints.md:
 *   pbng-weak-constraints 1
 *   # one constraint per line:  n0  i w ... (n0 pairs)  n1  j v ... (n1 pairs)  k_n k_t [nx ny nz]
 *   1 17 1.0   1 42 1.0   1e8 1e8
 * Node indices are 0-based in the mesh's numbering (the output's /mesh ids); each side's weights are
 * non-negative and sum to one; the normal is required when k_n != k_t. '#' starts a comment; blank
 * lines are skipped. Errors name the file and line. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mesh/mesh.h"
#include "core/grow.h"

#define WC_HEADER "pbng-weak-constraints"

typedef struct {
  FILE *f;
  const char *path;
  long lineno;
  char *line;
  size_t cap;
  char *cursor;
} wc_file;

/* Next line with data (comment stripped), or NULL at end of file. */
static char *next_data_line(wc_file *w)
{
  for (;;) {
    if (getline(&w->line, &w->cap, w->f) < 0) return NULL;
    ++w->lineno;
    char *hash = strchr(w->line, '#');
    if (hash) *hash = '\0';
    char *p = w->line + strspn(w->line, " \t\r\n");
    if (*p) return w->cursor = p;
  }
}

/* The next number on the line; *ok = 0 when there is none or it is malformed. */
static double next_number(wc_file *w, int *ok)
{
  char *end;
  errno = 0;
  const double v = strtod(w->cursor, &end);
  if (end == w->cursor || errno == ERANGE || (*end && !strchr(" \t\r\n", *end))) {
    *ok = 0;
    return 0.0;
  }
  w->cursor = end;
  return v;
}

static int at_line_end(const wc_file *w) { return w->cursor[strspn(w->cursor, " \t\r\n")] == '\0'; }

/* One side "n i w i w ...": node indices checked against nnodes. */
static PetscErrorCode parse_side(wc_file *w, int64_t nnodes, int *n, int64_t nodes[PBNG_WC_MAX_NODES], double weights[PBNG_WC_MAX_NODES])
{
  int ok = 1;
  const double count = next_number(w, &ok);

  PetscFunctionBeginUser;
  PetscCheck(ok && count == floor(count) && count >= 1 && count <= PBNG_WC_MAX_NODES - 1, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED,
             "%s:%ld: expected the number of nodes of a side (1..%d)", w->path, w->lineno, PBNG_WC_MAX_NODES - 1);
  *n = (int)count;
  for (int j = 0; j < *n; ++j) {
    const double node = next_number(w, &ok);
    weights[j] = next_number(w, &ok);
    PetscCheck(ok, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s:%ld: expected %d (node, weight) pairs", w->path, w->lineno, *n);
    PetscCheck(node == floor(node) && fabs(node) < 9e15, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s:%ld: node index %g is not an integer",
               w->path, w->lineno, node);
    PetscCheck(node >= 0 && node < (double)nnodes, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED,
               "%s:%ld: node %" PRId64 " is not an index of the mesh's %" PRId64 " nodes (0-based)", w->path, w->lineno, (int64_t)node, nnodes);
    nodes[j] = (int64_t)node;
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode parse_constraint(wc_file *w, int64_t nnodes, pbng_weak_constraint *c)
{
  int n0, n1, ok = 1;
  int64_t nodes0[PBNG_WC_MAX_NODES], nodes1[PBNG_WC_MAX_NODES];
  double w0[PBNG_WC_MAX_NODES], w1[PBNG_WC_MAX_NODES], normal[3];
  const double *nptr = NULL;

  PetscFunctionBeginUser;
  PetscCall(parse_side(w, nnodes, &n0, nodes0, w0));
  PetscCall(parse_side(w, nnodes, &n1, nodes1, w1));
  const double k_n = next_number(w, &ok), k_t = next_number(w, &ok);
  PetscCheck(ok, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s:%ld: expected the stiffnesses k_n k_t", w->path, w->lineno);
  if (!at_line_end(w)) {
    for (int d = 0; d < 3; ++d) normal[d] = next_number(w, &ok);
    PetscCheck(ok && at_line_end(w), PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED,
               "%s:%ld: expected a normal of three numbers after k_n k_t, and nothing more", w->path, w->lineno);
    nptr = normal;
  }
  PetscCheck(nptr || k_n == k_t, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s:%ld: k_n != k_t needs a normal n", w->path, w->lineno);
  const char *err = pbng_weak_constraint_init(n0, nodes0, w0, n1, nodes1, w1, k_n, k_t, nptr, c);
  PetscCheck(!err, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s:%ld: %s", w->path, w->lineno, err);
  PetscFunctionReturn(0);
}

static PetscErrorCode read_all(wc_file *w, pbng_mesh *mesh)
{
  pbng_weak_constraint *list = NULL;
  int64_t n = 0, cap = 0;
  char *line;

  PetscFunctionBeginUser;
  line = next_data_line(w);
  PetscCheck(line && !strncmp(line, WC_HEADER, strlen(WC_HEADER)), PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED,
             "%s: not a weak-constraint file (the first line must be \"" WC_HEADER " 1\")", w->path);
  w->cursor = line + strlen(WC_HEADER);
  int ok = 1;
  const double version = next_number(w, &ok);
  PetscCheck(ok && version == 1 && at_line_end(w), PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED,
             "%s:%ld: unsupported weak-constraint format version (this pbng reads version 1)", w->path, w->lineno);
  while (next_data_line(w)) {
    PetscCall(pbng_grow(&list, sizeof(*list), n + 1, &cap));
    PetscCall(parse_constraint(w, mesh->nnodes, &list[n]));
    ++n;
  }
  PetscCheck(!ferror(w->f), PETSC_COMM_SELF, PETSC_ERR_FILE_READ, "%s: read error: %s", w->path, strerror(errno));
  PetscCheck(n > 0, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s: the file has no constraints", w->path);
  PetscCall(pbng_mesh_add_weak_constraints(mesh, n, list));
  PetscCall(PetscFree(list));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_mesh_read_weak_constraints(const char *path, pbng_mesh *mesh)
{
  wc_file w = {.path = path};
  PetscErrorCode ierr;

  PetscFunctionBeginUser;
  w.f = fopen(path, "r");
  PetscCheck(w.f, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "%s: cannot open weak-constraint file: %s", path, strerror(errno));
  ierr = read_all(&w, mesh);
  fclose(w.f);
  free(w.line);
  PetscCall(ierr);
  PetscFunctionReturn(0);
}
