/* TetGen reader: a .node / .ele pair (path = either file, or their common basename).
 *   .node: "npoints 3 nattr nbmarker", rows "index x y z [attr...] [marker]"
 *   .ele:  "ntets 4|10 nattr",         rows "index n0 ... n3 [n4 ... n9] [attr...]"
 * '#' starts a comment; blank lines are skipped. The first index (0 or 1) sets the numbering. Nonzero
 * node boundary markers m become node sets "marker_<m>". 10-node tetrahedra (tetgen -o2) become tet10
 * elements, their edge nodes put in Gmsh's order (tet10_tetgen_column). Errors name the file and
 * line ("cube.ele:12: ..."). */
#include "mesh/mesh.h"
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TG_ERR PETSC_ERR_FILE_UNEXPECTED
#define TG_MAX_TOKENS 64

typedef struct {
  FILE *f;
  char path[PETSC_MAX_PATH_LEN];
  long fsize, lineno;
  char *line;
  size_t cap;
  char *tok[TG_MAX_TOKENS];
  int ntok; /* tokens on the line (those beyond TG_MAX_TOKENS are counted, not kept) */
} tg_file;

typedef struct {
  int64_t marker;
  int32_t node;
} tg_marker;

/* TetGen -o2 lists after the corners the nodes on the edges (2,3), (0,3), (0,1), (1,2), (1,3), (0,2)
 * (tetgen.cxx: highorder() fills its six extra nodes by edge2ver[], outelements() writes them in that
 * order; checked with TetGen 1.5.0, tests/data/tet10.node/.ele); Gmsh's order (the element table's)
 * is (0,1), (1,2), (2,0), (3,0), (3,2), (3,1). Gmsh node a is TetGen node tet10_tetgen_column[a]. */
static const int tet10_tetgen_column[10] = {0, 1, 2, 3, 6, 7, 9, 5, 4, 8};

typedef struct {
  tg_file node, ele;
  int64_t node_first, ele_first;
  tg_marker *markers;
  int64_t nmarkers;
} tg_reader;

static PetscErrorCode tg_open(tg_file *t, const char *base, const char *ext)
{
  PetscFunctionBeginUser;
  snprintf(t->path, sizeof(t->path), "%s%s", base, ext);
  t->f = fopen(t->path, "r");
  PetscCheck(t->f, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "%s: cannot open TetGen file: %s", t->path, strerror(errno));
  PetscCheck(!fseek(t->f, 0, SEEK_END) && (t->fsize = ftell(t->f)) >= 0 && !fseek(t->f, 0, SEEK_SET), PETSC_COMM_SELF,
             PETSC_ERR_FILE_READ, "%s: cannot determine the file size", t->path);
  PetscFunctionReturn(0);
}

static void tg_close(tg_file *t)
{
  if (t->f) fclose(t->f);
  free(t->line);
  t->f = NULL;
  t->line = NULL;
}

/* Reads the next line holding data (comments stripped) and splits it; *eof at end of file. */
static PetscErrorCode tg_next_line(tg_file *t, PetscBool *eof)
{
  PetscFunctionBeginUser;
  *eof = PETSC_FALSE;
  for (;;) {
    const ssize_t len = getline(&t->line, &t->cap, t->f);
    if (len < 0) {
      *eof = PETSC_TRUE;
      PetscFunctionReturn(0);
    }
    t->lineno++;
    PetscCheck(strlen(t->line) == (size_t)len, PETSC_COMM_SELF, TG_ERR, "%s:%ld: binary data (NUL byte) in a text file",
               t->path, t->lineno);
    char *hash = strchr(t->line, '#'), *p = t->line;
    if (hash) *hash = 0;
    t->ntok = 0;
    for (;;) {
      while (*p && isspace((unsigned char)*p)) p++;
      if (!*p) break;
      if (t->ntok < TG_MAX_TOKENS) t->tok[t->ntok] = p;
      t->ntok++;
      while (*p && !isspace((unsigned char)*p)) p++;
      if (*p) *p++ = 0;
    }
    if (t->ntok) break;
  }
  PetscFunctionReturn(0);
}

/* The next data line, which must exist and hold need..most values. */
static PetscErrorCode tg_row(tg_file *t, const char *what, int need, int most)
{
  PetscBool eof;

  PetscFunctionBeginUser;
  PetscCall(tg_next_line(t, &eof));
  PetscCheck(!eof || t->lineno > 0, PETSC_COMM_SELF, TG_ERR, "%s: empty file (no data line; %s expected)", t->path, what);
  PetscCheck(!eof, PETSC_COMM_SELF, TG_ERR, "%s:%ld: file truncated: end of file before %s", t->path, t->lineno, what);
  PetscCheck(t->ntok >= need && t->ntok <= most, PETSC_COMM_SELF, TG_ERR, "%s:%ld: %s: expected %d values, found %d", t->path,
             t->lineno, what, need, t->ntok);
  PetscFunctionReturn(0);
}

static PetscErrorCode tg_int(tg_file *t, int k, const char *what, long long lo, long long hi, long long *v)
{
  char *end;

  PetscFunctionBeginUser;
  PetscCheck(k < TG_MAX_TOKENS, PETSC_COMM_SELF, TG_ERR, "%s:%ld: more than %d values on a line", t->path, t->lineno,
             TG_MAX_TOKENS);
  errno = 0;
  *v = strtoll(t->tok[k], &end, 10);
  PetscCheck(end != t->tok[k] && !*end && errno == 0, PETSC_COMM_SELF, TG_ERR,
             "%s:%ld: expected an integer (%s), found '%.40s'", t->path, t->lineno, what, t->tok[k]);
  PetscCheck(*v >= lo && *v <= hi, PETSC_COMM_SELF, TG_ERR, "%s:%ld: %s %lld is outside %lld..%lld", t->path, t->lineno,
             what, *v, lo, hi);
  PetscFunctionReturn(0);
}

static PetscErrorCode tg_double(tg_file *t, int k, const char *what, long long index, double *v)
{
  char *end;

  PetscFunctionBeginUser;
  *v = strtod(t->tok[k], &end);
  PetscCheck(end != t->tok[k] && !*end, PETSC_COMM_SELF, TG_ERR, "%s:%ld: node %lld: expected a number (%s), found '%.40s'",
             t->path, t->lineno, index, what, t->tok[k]);
  PetscCheck(isfinite(*v), PETSC_COMM_SELF, TG_ERR, "%s:%ld: node %lld: non-finite %s %g", t->path, t->lineno, index,
             what, *v);
  PetscFunctionReturn(0);
}

/* Record index of row i: the first row sets the base (0 or 1), the others must follow on. */
static PetscErrorCode tg_index(tg_file *t, const char *what, int64_t i, int64_t *first)
{
  long long index;

  PetscFunctionBeginUser;
  PetscCall(tg_int(t, 0, what, 0, INT64_MAX, &index));
  if (i == 0) {
    PetscCheck(index == 0 || index == 1, PETSC_COMM_SELF, TG_ERR, "%s:%ld: first %s is %lld; expected 0 or 1", t->path,
               t->lineno, what, index);
    *first = index;
  } else
    PetscCheck(index == *first + i, PETSC_COMM_SELF, TG_ERR, "%s:%ld: %s is %lld; expected %lld (indices must be consecutive)",
               t->path, t->lineno, what, index, (long long)(*first + i));
  PetscFunctionReturn(0);
}

static PetscErrorCode tg_expect_eof(tg_file *t, int64_t n, const char *what)
{
  PetscBool eof;

  PetscFunctionBeginUser;
  PetscCall(tg_next_line(t, &eof));
  PetscCheck(eof, PETSC_COMM_SELF, TG_ERR, "%s:%ld: more %s rows than the header's count %lld", t->path, t->lineno, what,
             (long long)n);
  PetscFunctionReturn(0);
}

static PetscErrorCode tg_read_nodes(tg_reader *r, pbng_mesh *mesh)
{
  tg_file *t = &r->node;
  long long n, dim, nattr, nbm, marker;

  PetscFunctionBeginUser;
  PetscCall(tg_row(t, "the header 'npoints dim nattr nbmarker'", 1, INT_MAX));
  PetscCall(tg_int(t, 0, "number of points", 1, INT32_MAX, &n));
  PetscCheck(n <= t->fsize / 8 + 1, PETSC_COMM_SELF, TG_ERR, "%s:%ld: file truncated: %lld points cannot fit in %ld bytes",
             t->path, t->lineno, n, t->fsize);
  dim = 3;
  nattr = nbm = 0;
  if (t->ntok > 1) PetscCall(tg_int(t, 1, "dimension", 3, 3, &dim));
  if (t->ntok > 2) PetscCall(tg_int(t, 2, "number of attributes", 0, TG_MAX_TOKENS - 5, &nattr));
  if (t->ntok > 3) PetscCall(tg_int(t, 3, "number of boundary markers", 0, 1, &nbm));
  mesh->nnodes = n;
  PetscCall(PetscMalloc1((size_t)n * 3, &mesh->X));
  if (nbm) PetscCall(PetscMalloc1((size_t)n, &r->markers));
  for (int64_t i = 0; i < n; ++i) {
    PetscCall(tg_row(t, "a node row 'index x y z [attributes] [marker]'", (int)(4 + nattr + nbm), INT_MAX));
    PetscCall(tg_index(t, "node index", i, &r->node_first));
    for (int k = 0; k < 3; ++k) PetscCall(tg_double(t, 1 + k, k == 0 ? "x" : k == 1 ? "y" : "z", i + r->node_first, &mesh->X[3 * i + k]));
    if (!nbm) continue;
    PetscCall(tg_int(t, (int)(4 + nattr), "boundary marker", INT64_MIN, INT64_MAX, &marker));
    if (marker) r->markers[r->nmarkers++] = (tg_marker){marker, (int32_t)i};
  }
  PetscCall(tg_expect_eof(t, n, "node"));
  PetscFunctionReturn(0);
}

static PetscErrorCode tg_read_elements(tg_reader *r, pbng_mesh *mesh)
{
  tg_file *t = &r->ele;
  long long n, npt, nattr, v;
  char what[96];

  PetscFunctionBeginUser;
  PetscCall(tg_row(t, "the header 'ntetrahedra nodes_per_tet nattr'", 1, INT_MAX));
  PetscCall(tg_int(t, 0, "number of tetrahedra", 1, INT32_MAX, &n));
  PetscCheck(n <= t->fsize / 10 + 1, PETSC_COMM_SELF, TG_ERR,
             "%s:%ld: file truncated: %lld tetrahedra cannot fit in %ld bytes", t->path, t->lineno, n, t->fsize);
  npt = 4;
  nattr = 0;
  if (t->ntok > 1) PetscCall(tg_int(t, 1, "nodes per tetrahedron", INT32_MIN, INT32_MAX, &npt));
  PetscCheck(npt == 4 || npt == 10, PETSC_COMM_SELF, TG_ERR,
             "%s:%ld: unsupported element type: %lld-node tetrahedra; pbng reads 4-node tetrahedra and 10-node ones "
             "(tetgen -o2)",
             t->path, t->lineno, npt);
  if (t->ntok > 2) PetscCall(tg_int(t, 2, "number of attributes", 0, TG_MAX_TOKENS - 11, &nattr));
  mesh->etype = pbng_element_type_get(npt == 4 ? PBNG_ELEMENT_TET4 : PBNG_ELEMENT_TET10);
  mesh->nen = (int)npt;
  mesh->nelems = n;
  PetscCall(PetscMalloc1((size_t)n * (size_t)npt, &mesh->elems));
  snprintf(what, sizeof(what), "an element row 'index, %lld nodes, %lld attributes'", npt, nattr);
  for (int64_t e = 0; e < n; ++e) { /* exactly the header's count: a missing node would shift the attributes in */
    PetscCall(tg_row(t, what, (int)(1 + npt + nattr), (int)(1 + npt + nattr)));
    PetscCall(tg_index(t, "element index", e, &r->ele_first));
    for (int a = 0; a < npt; ++a) {
      const int k = npt == 10 ? tet10_tetgen_column[a] : a; /* the TetGen column of Gmsh node a */
      PetscCall(tg_int(t, 1 + k, "node", INT64_MIN, INT64_MAX, &v));
      PetscCheck(v >= r->node_first && v < r->node_first + mesh->nnodes, PETSC_COMM_SELF, TG_ERR,
                 "%s:%ld: element %lld references node %lld, outside %lld..%lld (the nodes of %s)", t->path, t->lineno,
                 (long long)(e + r->ele_first), v, (long long)r->node_first,
                 (long long)(r->node_first + mesh->nnodes - 1), r->node.path);
      mesh->elems[npt * e + a] = (int32_t)(v - r->node_first);
    }
  }
  PetscCall(tg_expect_eof(t, n, "element"));
  PetscFunctionReturn(0);
}

static int tg_compare_marker(const void *a, const void *b)
{
  const tg_marker *x = a, *y = b;
  if (x->marker != y->marker) return (x->marker > y->marker) - (x->marker < y->marker);
  return (x->node > y->node) - (x->node < y->node);
}

/* One node set "marker_<m>" per nonzero boundary marker m. */
static PetscErrorCode tg_add_marker_sets(tg_reader *r, pbng_mesh *mesh)
{
  int32_t *nodes;
  char name[64];

  PetscFunctionBeginUser;
  if (!r->nmarkers) PetscFunctionReturn(0);
  if (r->nmarkers > 1) qsort(r->markers, (size_t)r->nmarkers, sizeof(tg_marker), tg_compare_marker);
  PetscCall(PetscMalloc1((size_t)r->nmarkers, &nodes));
  for (int64_t i = 0, j; i < r->nmarkers; i = j) {
    for (j = i; j < r->nmarkers && r->markers[j].marker == r->markers[i].marker; ++j) nodes[j - i] = r->markers[j].node;
    snprintf(name, sizeof(name), "marker_%lld", (long long)r->markers[i].marker);
    PetscErrorCode ierr = pbng_mesh_add_node_set(mesh, name, j - i, nodes);
    if (ierr) {
      PetscCall(PetscFree(nodes));
      PetscCall(ierr);
    }
  }
  PetscCall(PetscFree(nodes));
  PetscFunctionReturn(0);
}

static PetscErrorCode tg_read(tg_reader *r, const char *path, pbng_mesh *mesh)
{
  char base[PETSC_MAX_PATH_LEN];
  size_t len;

  PetscFunctionBeginUser;
  PetscCall(PetscStrncpy(mesh->source, path, sizeof(mesh->source)));
  PetscCall(PetscStrncpy(base, path, sizeof(base)));
  len = strlen(base);
  if (len > 5 && !strcmp(base + len - 5, ".node")) base[len - 5] = 0;
  else if (len > 4 && !strcmp(base + len - 4, ".ele")) base[len - 4] = 0;
  PetscCall(tg_open(&r->node, base, ".node"));
  PetscCall(tg_open(&r->ele, base, ".ele"));
  PetscCall(tg_read_nodes(r, mesh));
  PetscCall(tg_read_elements(r, mesh));
  PetscCall(tg_add_marker_sets(r, mesh));
  /* validate names mesh->source and the element record: point it at the .ele file meanwhile */
  PetscCall(PetscStrncpy(mesh->source, r->ele.path, sizeof(mesh->source)));
  PetscCall(pbng_mesh_validate(mesh, r->ele_first));
  PetscCall(PetscStrncpy(mesh->source, path, sizeof(mesh->source)));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_mesh_read_tetgen(const char *path, pbng_mesh *mesh)
{
  tg_reader r;
  PetscErrorCode ierr;

  PetscFunctionBeginUser;
  memset(mesh, 0, sizeof(*mesh));
  memset(&r, 0, sizeof(r));
  ierr = tg_read(&r, path, mesh);
  tg_close(&r.node);
  tg_close(&r.ele);
  PetscCall(PetscFree(r.markers));
  if (ierr) PetscCall(pbng_mesh_destroy(mesh));
  PetscCall(ierr);
  PetscFunctionReturn(0);
}
