/* Weak-constraint files (Sec. 4.1), documented in docs/weak_constraints.md:
 *   pbng-weak-constraints 1
 *   # one constraint per line:  n0  i w ... (n0 pairs)  n1  j v ... (n1 pairs)  k_n k_t [nx ny nz]
 *   1 17 1.0   1 42 1.0   1e8 1e8
 * Node indices are 0-based in the mesh's numbering (the output's /mesh ids); each side's weights are
 * non-negative and sum to one; the normal is required when k_n != k_t. '#' starts a comment; blank
 * lines are skipped. Errors name the file and line. The lines are parsed one at a time
 * (pbng_weak_line_*), so that a file read in shares by several processes is checked as the whole one is. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "mesh/mesh.h"
#include "core/grow.h"

#define WC_HEADER "pbng-weak-constraints"

/* A line being parsed: where it is (for messages) and the next character to read. */
typedef struct {
  const char *path;
  long lineno;
  char *cursor;
  char *msg; /* [len]: the first problem found */
  size_t len;
} wc_line;

char *pbng_weak_line_data(char *line)
{
  char *hash = strchr(line, '#');
  if (hash) *hash = '\0';
  char *p = line + strspn(line, " \t\r\n");
  return *p ? p : NULL;
}

/* The next number on the line; *ok = 0 when there is none or it is malformed. */
static double next_number(wc_line *w, int *ok)
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

static int at_line_end(const wc_line *w) { return w->cursor[strspn(w->cursor, " \t\r\n")] == '\0'; }

/* One side "n i w i w ...": node indices checked against nnodes. 0 with w->msg set on a problem. */
static int parse_side(wc_line *w, int64_t nnodes, int *n, int64_t nodes[PBNG_WC_MAX_NODES], double weights[PBNG_WC_MAX_NODES])
{
  int ok = 1;
  const double count = next_number(w, &ok);

  if (!(ok && count == floor(count) && count >= 1 && count <= PBNG_WC_MAX_NODES - 1)) {
    snprintf(w->msg, w->len, "%s:%ld: expected the number of nodes of a side (1..%d)", w->path, w->lineno, PBNG_WC_MAX_NODES - 1);
    return 0;
  }
  *n = (int)count;
  for (int j = 0; j < *n; ++j) {
    const double node = next_number(w, &ok);
    weights[j] = next_number(w, &ok);
    if (!ok) snprintf(w->msg, w->len, "%s:%ld: expected %d (node, weight) pairs", w->path, w->lineno, *n);
    else if (!(node == floor(node) && fabs(node) < 9e15)) snprintf(w->msg, w->len, "%s:%ld: node index %g is not an integer", w->path, w->lineno, node);
    else if (!(node >= 0 && node < (double)nnodes))
      snprintf(w->msg, w->len, "%s:%ld: node %" PRId64 " is not an index of the mesh's %" PRId64 " nodes (0-based)", w->path, w->lineno, (int64_t)node,
               nnodes);
    else {
      nodes[j] = (int64_t)node;
      continue;
    }
    return 0;
  }
  return 1;
}

int pbng_weak_line_constraint(const char *path, long lineno, char *data, int64_t nnodes, pbng_weak_constraint *c, char *msg, size_t len)
{
  wc_line w = {path, lineno, data, msg, len};
  int n0, n1, ok = 1;
  int64_t nodes0[PBNG_WC_MAX_NODES], nodes1[PBNG_WC_MAX_NODES];
  double w0[PBNG_WC_MAX_NODES], w1[PBNG_WC_MAX_NODES], normal[3];
  const double *nptr = NULL;

  if (!parse_side(&w, nnodes, &n0, nodes0, w0) || !parse_side(&w, nnodes, &n1, nodes1, w1)) return 0;
  const double k_n = next_number(&w, &ok), k_t = next_number(&w, &ok);
  if (!ok) {
    snprintf(msg, len, "%s:%ld: expected the stiffnesses k_n k_t", path, lineno);
    return 0;
  }
  if (!at_line_end(&w)) {
    for (int d = 0; d < 3; ++d) normal[d] = next_number(&w, &ok);
    if (!(ok && at_line_end(&w))) {
      snprintf(msg, len, "%s:%ld: expected a normal of three numbers after k_n k_t, and nothing more", path, lineno);
      return 0;
    }
    nptr = normal;
  }
  if (!nptr && k_n != k_t) {
    snprintf(msg, len, "%s:%ld: k_n != k_t needs a normal n", path, lineno);
    return 0;
  }
  const char *err = pbng_weak_constraint_init(n0, nodes0, w0, n1, nodes1, w1, k_n, k_t, nptr, c);
  if (err) snprintf(msg, len, "%s:%ld: %s", path, lineno, err);
  return !err;
}

int pbng_weak_line_header(const char *path, long lineno, char *data, char *msg, size_t len)
{
  wc_line w = {path, lineno, data + strlen(WC_HEADER), msg, len};
  int ok = 1;

  if (strncmp(data, WC_HEADER, strlen(WC_HEADER))) {
    pbng_weak_file_not_weak(path, msg, len);
    return 0;
  }
  const double version = next_number(&w, &ok);
  if (ok && version == 1 && at_line_end(&w)) return 1;
  snprintf(msg, len, "%s:%ld: unsupported weak-constraint format version (this pbng reads version 1)", path, lineno);
  return 0;
}

void pbng_weak_file_not_weak(const char *path, char *msg, size_t len)
{
  snprintf(msg, len, "%s: not a weak-constraint file (the first line must be \"" WC_HEADER " 1\")", path);
}

/* Every constraint of the open file f: the header first, then one per data line. */
static PetscErrorCode read_all(FILE *f, const char *path, pbng_mesh *mesh)
{
  pbng_weak_constraint *list = NULL;
  int64_t n = 0, cap = 0;
  char *line = NULL, *data, msg[PETSC_MAX_PATH_LEN + 256];
  size_t linecap = 0;
  long lineno = 0;
  int header = 0, ok = 1;
  PetscErrorCode ierr = 0;

  PetscFunctionBeginUser;
  while (ok && !ierr && getline(&line, &linecap, f) >= 0) {
    ++lineno;
    if (!(data = pbng_weak_line_data(line))) continue;
    if (!header) {
      ok = header = pbng_weak_line_header(path, lineno, data, msg, sizeof(msg));
      continue;
    }
    ierr = pbng_grow(&list, sizeof(*list), n + 1, &cap);
    if (!ierr && (ok = pbng_weak_line_constraint(path, lineno, data, mesh->nnodes, &list[n], msg, sizeof(msg)))) ++n;
  }
  free(line);
  PetscCall(ierr);
  if (!header && ok) pbng_weak_file_not_weak(path, msg, sizeof(msg)), ok = 0;
  if (ok && ferror(f)) snprintf(msg, sizeof(msg), "%s: read error: %s", path, strerror(errno)), ok = 0;
  if (ok && n == 0) snprintf(msg, sizeof(msg), "%s: the file has no constraints", path), ok = 0;
  if (ok) PetscCall(pbng_mesh_add_weak_constraints(mesh, n, list));
  PetscCall(PetscFree(list));
  PetscCheck(ok, PETSC_COMM_SELF, PETSC_ERR_FILE_UNEXPECTED, "%s", msg);
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_mesh_read_weak_constraints(const char *path, pbng_mesh *mesh)
{
  PetscFunctionBeginUser;
  FILE *f = fopen(path, "r");
  PetscCheck(f, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "%s: cannot open weak-constraint file: %s", path, strerror(errno));
  const PetscErrorCode ierr = read_all(f, path, mesh);
  fclose(f);
  PetscCall(ierr);
  PetscFunctionReturn(0);
}
