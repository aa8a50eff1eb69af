/* Gmsh MSH reader: formats 2.2 (also 2.0/2.1) and 4.1, ASCII and binary (either endianness).
 * Volume elements of the kinds in core/element.h (types 4, 11, 29 tetrahedra; 5, 12 hexahedra; 6
 * prism; 7 pyramid; Gmsh's node order is the element table's) form the mesh, of one kind or mixing
 * kinds (rows padded to the widest kind, a kind per element: core/element.h). 3-node triangles (type 2)
 * become tri3 sheet elements (docs/cloth.md#reading-sheets-from-gmsh): all of them in a file without
 * volume elements (a sheet mesh, where any other 2-D type is an error), else those of a physical group
 * whose name starts with "sheet". Every other point, line, triangle and quadrangle of any order up to 3
 * (types 15; 1, 8, 26; 2, 9, 21; 3, 10, 16) only contributes its nodes to physical groups; any other
 * element type is an error. Every physical group of any dimension becomes a node set named by $PhysicalNames (or
 * "physical_<tag>"). Node tags may be sparse: nodes are numbered 0.. in order of appearance.
 * Every error names the file and the record: "path:line" in ASCII files, "path (byte N)" in binary
 * files, followed by the section and the node / element concerned. MSH 1.0, 3.0 and 4.0 are rejected. */
#include "mesh/mesh.h"
#include <ctype.h>
#include "core/grow.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GM_ERR PETSC_ERR_FILE_UNEXPECTED

typedef struct {
  int64_t tag;
  int32_t index;
} gm_tag_index;

typedef struct {
  int dim, tag;
  char name[64];
} gm_name;

typedef struct {
  int dim, tag;
  int64_t off, n; /* physical tags: pool[off .. off+n) */
} gm_entity;

/* An element remembered for a later message: its Gmsh type (0: none), tag and record (line or byte). */
typedef struct {
  long long type, tag;
  long rec;
} gm_elem_ref;

typedef struct {
  int dim, tag;
  int64_t n, cap;
  int32_t *nodes;
  int64_t ntri, tri_cap;
  int64_t *tri;      /* its 3-node triangles, as indices into the element list (sheet candidates) */
  gm_elem_ref other; /* its first 2-D element of another type */
} gm_group;

typedef struct {
  FILE *f;
  const char *path;
  long fsize;
  /* text tokenizer */
  char *line;
  size_t cap;
  char *cur;
  long lineno;
  /* format */
  int version; /* 22 or 41 */
  int binary;  /* file-type 1 */
  int raw;     /* the values being read now are binary */
  int swap;    /* binary data has the other endianness */
  int dsize;   /* data-size: sizeof(size_t) in 4.1 binary */
  /* record being read, for messages */
  const char *section, *item;
  long long item_id;
  char loc[PETSC_MAX_PATH_LEN + 128];
  /* nodes */
  PetscBool have_nodes;
  int64_t nnodes;
  double *X;
  int64_t *node_tag;
  long *node_rec; /* line (ASCII) or byte offset (binary) of each node */
  gm_tag_index *map; /* sorted by tag */
  /* volume elements and 3-node triangles (sheet candidates until gm_select_sheets) in file order: their
   * nodes one after the other (rows once the kinds are known) */
  PetscBool have_elements;
  int64_t nelems, elem_cap, elem_tag0, nvalues, value_cap;
  int32_t *elems;
  uint8_t *kind;  /* [nelems] */
  int64_t *etag;  /* [nelems] Gmsh element tags; NULL while they are elem_tag0, elem_tag0 + 1, ... */
  unsigned kinds; /* bit mask of the kinds kept */
  gm_elem_ref other2d; /* the file's first 2-D element that is not a 3-node triangle */
  /* physical groups */
  int nnames;
  gm_name *names;
  int64_t nentities, npool, pool_cap;
  gm_entity *entities;
  int *pool;
  int ngroups;
  gm_group *groups;
} gm_reader;

/* ------------------------------------------------------------------------------------------------ */
/* Locations and low-level input                                                                      */

static const char *gm_loc(gm_reader *r)
{
  char base[PETSC_MAX_PATH_LEN + 40];

  if (r->binary) snprintf(base, sizeof(base), "%s: byte %ld", r->path, r->f ? ftell(r->f) : -1L);
  else snprintf(base, sizeof(base), "%s:%ld", r->path, r->lineno);
  if (r->section && r->item) snprintf(r->loc, sizeof(r->loc), "%s (%s, %s %lld)", base, r->section, r->item, r->item_id);
  else if (r->section) snprintf(r->loc, sizeof(r->loc), "%s (%s)", base, r->section);
  else snprintf(r->loc, sizeof(r->loc), "%s", base);
  return r->loc;
}

static void gm_item(gm_reader *r, const char *item, long long id)
{
  r->item = item;
  r->item_id = id;
}

static long gm_remaining(gm_reader *r)
{
  long pos = ftell(r->f), rest = r->fsize - pos;
  if (!r->raw && r->cur) rest += (long)strlen(r->cur);
  return rest > 0 ? rest : 0;
}

/* Next whitespace-separated token (lines are read as needed), or NULL at end of file. */
static PetscErrorCode gm_token_or_eof(gm_reader *r, char **tok)
{
  char *p;

  PetscFunctionBeginUser;
  *tok = NULL;
  for (;;) {
    if (r->cur) {
      while (*r->cur && isspace((unsigned char)*r->cur)) r->cur++;
      if (*r->cur) break;
    }
    const ssize_t len = getline(&r->line, &r->cap, r->f);
    if (len < 0) {
      r->cur = NULL;
      PetscFunctionReturn(0);
    }
    r->lineno++;
    PetscCheck(strlen(r->line) == (size_t)len, PETSC_COMM_SELF, GM_ERR,
               "%s: unexpected binary data (NUL byte) in a text part of the file", gm_loc(r));
    r->cur = r->line;
  }
  for (p = r->cur; *p && !isspace((unsigned char)*p); ++p) {}
  *tok = r->cur;
  if (*p) {
    *p = 0;
    r->cur = p + 1;
  } else r->cur = p;
  PetscFunctionReturn(0);
}

static PetscErrorCode gm_token(gm_reader *r, const char *what, char **tok)
{
  PetscFunctionBeginUser;
  PetscCall(gm_token_or_eof(r, tok));
  PetscCheck(*tok, PETSC_COMM_SELF, GM_ERR, "%s: file truncated: end of file while reading %s", gm_loc(r), what);
  PetscFunctionReturn(0);
}

static PetscErrorCode gm_fread(gm_reader *r, void *buf, size_t size, const char *what)
{
  PetscFunctionBeginUser;
  PetscCheck(fread(buf, 1, size, r->f) == size, PETSC_COMM_SELF, GM_ERR,
             "%s: file truncated: end of file in binary data while reading %s", gm_loc(r), what);
  if (r->swap)
    for (size_t i = 0; i < size / 2; ++i) {
      unsigned char *b = buf, t = b[i];
      b[i] = b[size - 1 - i];
      b[size - 1 - i] = t;
    }
  PetscFunctionReturn(0);
}

/* Switches to binary values: the rest of the current text line must be empty. */
static PetscErrorCode gm_begin_raw(gm_reader *r)
{
  PetscFunctionBeginUser;
  if (r->cur) {
    while (*r->cur && isspace((unsigned char)*r->cur)) r->cur++;
    PetscCheck(!*r->cur, PETSC_COMM_SELF, GM_ERR, "%s: unexpected text '%.32s' before binary data", gm_loc(r), r->cur);
  }
  r->cur = NULL;
  r->raw = 1;
  PetscFunctionReturn(0);
}

/* An integer in lo..hi: a text token, or a binary int when r->raw. */
static PetscErrorCode gm_int(gm_reader *r, const char *what, long long lo, long long hi, long long *v)
{
  PetscFunctionBeginUser;
  if (r->raw) {
    int32_t x;
    PetscCall(gm_fread(r, &x, sizeof(x), what));
    *v = x;
  } else {
    char *tok, *end;
    PetscCall(gm_token(r, what, &tok));
    errno = 0;
    *v = strtoll(tok, &end, 10);
    PetscCheck(end != tok && !*end && errno == 0, PETSC_COMM_SELF, GM_ERR, "%s: expected an integer (%s), found '%.40s'",
               gm_loc(r), what, tok);
  }
  PetscCheck(*v >= lo && *v <= hi, PETSC_COMM_SELF, GM_ERR, "%s: %s %lld is outside %lld..%lld", gm_loc(r), what, *v,
             lo, hi);
  PetscFunctionReturn(0);
}

/* A size_t value (binary in 4.1 binary files: data-size bytes) in lo..hi. */
static PetscErrorCode gm_size(gm_reader *r, const char *what, long long lo, long long hi, long long *v)
{
  PetscFunctionBeginUser;
  if (r->raw && r->version == 41) {
    if (r->dsize == 8) {
      uint64_t x;
      PetscCall(gm_fread(r, &x, sizeof(x), what));
      PetscCheck(x <= (uint64_t)hi, PETSC_COMM_SELF, GM_ERR, "%s: %s %llu is outside %lld..%lld", gm_loc(r), what,
                 (unsigned long long)x, lo, hi);
      *v = (long long)x;
    } else {
      uint32_t x;
      PetscCall(gm_fread(r, &x, sizeof(x), what));
      *v = x;
    }
    PetscCheck(*v >= lo && *v <= hi, PETSC_COMM_SELF, GM_ERR, "%s: %s %lld is outside %lld..%lld", gm_loc(r), what, *v,
               lo, hi);
  } else PetscCall(gm_int(r, what, lo, hi, v));
  PetscFunctionReturn(0);
}

static PetscErrorCode gm_double(gm_reader *r, const char *what, double *v)
{
  PetscFunctionBeginUser;
  if (r->raw) PetscCall(gm_fread(r, v, sizeof(*v), what));
  else {
    char *tok, *end;
    PetscCall(gm_token(r, what, &tok));
    *v = strtod(tok, &end);
    PetscCheck(end != tok && !*end, PETSC_COMM_SELF, GM_ERR, "%s: expected a number (%s), found '%.40s'", gm_loc(r), what,
               tok);
  }
  PetscFunctionReturn(0);
}

/* A count of records each at least min_bytes long: at most what the rest of the file can hold. */
static PetscErrorCode gm_count(gm_reader *r, const char *what, long min_bytes, long long *n)
{
  PetscFunctionBeginUser;
  PetscCall(gm_size(r, what, 0, INT32_MAX, n));
  PetscCheck(*n <= gm_remaining(r) / min_bytes + 1, PETSC_COMM_SELF, GM_ERR,
             "%s: file truncated: %s is %lld but only %ld bytes follow", gm_loc(r), what, *n, gm_remaining(r));
  PetscFunctionReturn(0);
}

static PetscErrorCode gm_expect_end(gm_reader *r, const char *end, const char *hint)
{
  char *tok;

  PetscFunctionBeginUser;
  r->raw = 0;
  r->item = NULL;
  PetscCall(gm_token(r, end, &tok));
  PetscCheck(!strcmp(tok, end), PETSC_COMM_SELF, GM_ERR, "%s: expected %s, found '%.40s'%s", gm_loc(r), end, tok, hint);
  PetscFunctionReturn(0);
}

/* Skips an unknown section $Name up to its $EndName line. */
static PetscErrorCode gm_skip_section(gm_reader *r, const char *name)
{
  char end[128];
  const long start = r->lineno;

  PetscFunctionBeginUser;
  snprintf(end, sizeof(end), "$End%s", name + 1);
  r->cur = NULL;
  for (;;) {
    const ssize_t len = getline(&r->line, &r->cap, r->f);
    PetscCheck(len >= 0, PETSC_COMM_SELF, GM_ERR, "%s: file truncated: section %s (from line %ld) has no %s", r->path,
               name, start, end);
    r->lineno++;
    if (!strncmp(r->line, end, strlen(end))) {
      const char *p = r->line + strlen(end);
      while (*p && isspace((unsigned char)*p)) p++;
      if (!*p) break;
    }
  }
  PetscFunctionReturn(0);
}

/* ------------------------------------------------------------------------------------------------ */
/* Element types                                                                                      */

static const char *gm_type_name(long long type)
{
  static const struct {
    int type;
    const char *name;
  } names[] = {{1, "2-node line"},         {2, "3-node triangle"},     {3, "4-node quadrangle"},
               {4, "4-node tetrahedron"},  {5, "8-node hexahedron"},   {6, "6-node prism"},
               {7, "5-node pyramid"},      {8, "3-node line"},         {9, "6-node triangle"},
               {10, "9-node quadrangle"},  {11, "10-node tetrahedron"}, {12, "27-node hexahedron"},
               {13, "18-node prism"},      {14, "14-node pyramid"},    {15, "point"},
               {16, "8-node quadrangle"},  {17, "20-node hexahedron"}, {18, "15-node prism"},
               {19, "13-node pyramid"},    {21, "10-node triangle"},   {26, "4-node line"},
               {29, "20-node tetrahedron"}, {30, "35-node tetrahedron"}, {31, "56-node tetrahedron"},
               {92, "64-node hexahedron"}, {93, "125-node hexahedron"}};
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); ++i)
    if (names[i].type == type) return names[i].name;
  return "unknown type";
}

/* Nodes per element of the supported types, 0 for the others; *dim is the type's dimension. Volume
 * types are the element kinds' (pbng_element_type_by_gmsh); the others feed physical groups only. */
static int gm_type_nodes(long long type, int *dim)
{
  const pbng_element_type *kind = type > 0 && type <= INT32_MAX ? pbng_element_type_by_gmsh((int)type) : NULL;
  if (kind && !pbng_element_is_sheet(kind)) {
    *dim = 3;
    return kind->nodes;
  }
  switch (type) {
  case 15: *dim = 0; return 1;
  case 1: *dim = 1; return 2;
  case 8: *dim = 1; return 3;
  case 26: *dim = 1; return 4;
  case 2: *dim = 2; return 3;
  case 9: *dim = 2; return 6;
  case 21: *dim = 2; return 10;
  case 3: *dim = 2; return 4;
  case 10: *dim = 2; return 9;
  case 16: *dim = 2; return 8;
  default: *dim = -1; return 0;
  }
}

static PetscErrorCode gm_check_type(gm_reader *r, long long type, int *nen, int *dim)
{
  PetscFunctionBeginUser;
  *nen = gm_type_nodes(type, dim);
  PetscCheck(*nen > 0, PETSC_COMM_SELF, GM_ERR,
             "%s: unsupported element type %lld (%s); pbng reads the volume elements of types 4, 11, 29 "
             "(tetrahedra of order 1-3), 5, 12 (hexahedra of order 1-2), 6 (prism), 7 (pyramid), sheets of 3-node triangles "
             "(type 2) and, for physical groups, points, lines, triangles and quadrangles (types 15; 1, 8, 26; 2, 9, 21; 3, 10, 16)",
             gm_loc(r), type, gm_type_name(type));
  PetscFunctionReturn(0);
}

/* In ASCII files an element record is one line: the number of values on it after the element's
 * type and tag count (4.1: after its tag) must be what they say, or a node is missing or extra
 * (reading on would take the next line's values). */
static PetscErrorCode gm_check_record_length(gm_reader *r, long long type, int nen, long long values, long long ntags)
{
  PetscFunctionBeginUser;
  PetscCheck(values >= ntags, PETSC_COMM_SELF, GM_ERR, "%s: the record ends after %lld of its %lld element tags, before its %d node tags",
             gm_loc(r), values < 0 ? 0 : values, ntags, nen);
  PetscCheck(values == nen + ntags, PETSC_COMM_SELF, GM_ERR,
             "%s: element type %lld (%s) needs %d node tags, but the record lists %lld%s", gm_loc(r), type,
             gm_type_name(type), nen, values - ntags, r->version == 22 ? " after its element tags" : "");
  PetscFunctionReturn(0);
}

/* How many values follow on the current text line (the record's rest), without consuming them. */
static long long gm_values_left_on_line(const gm_reader *r)
{
  long long n = 0;
  for (const char *p = r->cur; p && *p;) {
    while (*p && isspace((unsigned char)*p)) p++;
    if (!*p) break;
    n++;
    while (*p && !isspace((unsigned char)*p)) p++;
  }
  return n;
}

/* ------------------------------------------------------------------------------------------------ */
/* Physical groups                                                                                    */

static PetscErrorCode gm_group_index(gm_reader *r, int dim, int tag, int *g)
{
  PetscFunctionBeginUser;
  for (*g = 0; *g < r->ngroups; ++*g)
    if (r->groups[*g].dim == dim && r->groups[*g].tag == tag) PetscFunctionReturn(0);
  PetscCall(PetscRealloc(sizeof(gm_group) * (size_t)(r->ngroups + 1), &r->groups));
  memset(&r->groups[r->ngroups], 0, sizeof(gm_group));
  r->groups[r->ngroups].dim = dim;
  r->groups[r->ngroups].tag = tag;
  *g = r->ngroups++;
  PetscFunctionReturn(0);
}

static PetscErrorCode gm_group_append(gm_group *grp, int n, const int32_t *nodes)
{
  PetscFunctionBeginUser;
  PetscCall(pbng_grow(&grp->nodes, sizeof(*grp->nodes), grp->n + n, &grp->cap));
  memcpy(&grp->nodes[grp->n], nodes, sizeof(int32_t) * (size_t)n);
  grp->n += n;
  PetscFunctionReturn(0);
}

static const gm_entity *gm_find_entity(const gm_reader *r, int dim, int tag)
{
  for (int64_t i = 0; i < r->nentities; ++i)
    if (r->entities[i].dim == dim && r->entities[i].tag == tag) return &r->entities[i];
  return NULL;
}

static PetscErrorCode gm_read_physical_names(gm_reader *r)
{
  long long n, dim, tag;

  PetscFunctionBeginUser;
  r->section = "$PhysicalNames";
  PetscCheck(!r->nnames, PETSC_COMM_SELF, GM_ERR, "%s: second $PhysicalNames section", gm_loc(r));
  PetscCall(gm_count(r, "number of physical names", 6, &n));
  PetscCall(PetscCalloc1((size_t)n + 1, &r->names));
  for (long long i = 0; i < n; ++i) {
    gm_item(r, "physical name", i + 1);
    PetscCall(gm_int(r, "physical dimension", 0, 3, &dim));
    PetscCall(gm_int(r, "physical tag", INT32_MIN, INT32_MAX, &tag));
    char *q0 = r->cur ? strchr(r->cur, '"') : NULL, *q1 = q0 ? strrchr(q0 + 1, '"') : NULL;
    PetscCheck(q0 && q1, PETSC_COMM_SELF, GM_ERR, "%s: expected a quoted \"name\" after dimension and tag", gm_loc(r));
    *q1 = 0;
    r->names[i].dim = (int)dim;
    r->names[i].tag = (int)tag;
    PetscCall(PetscStrncpy(r->names[i].name, q0 + 1, sizeof(r->names[i].name)));
    r->cur = q1 + 1 + strlen(q1 + 1); /* rest of the line */
    r->nnames++;
  }
  PetscCall(gm_expect_end(r, "$EndPhysicalNames", " (more names than the section's count?)"));
  PetscFunctionReturn(0);
}

static PetscErrorCode gm_pool_push(gm_reader *r, int v)
{
  PetscFunctionBeginUser;
  PetscCall(pbng_grow(&r->pool, sizeof(*r->pool), r->npool + 1, &r->pool_cap));
  r->pool[r->npool++] = v;
  PetscFunctionReturn(0);
}

/* One entity of $Entities (4.1): tag, bounding box / point, physical tags, bounding entities. */
static PetscErrorCode gm_read_entity(gm_reader *r, int dim, gm_entity *e)
{
  long long tag, n, v;
  double x;

  PetscFunctionBeginUser;
  PetscCall(gm_int(r, "entity tag", INT32_MIN, INT32_MAX, &tag));
  gm_item(r, dim == 0 ? "point entity" : dim == 1 ? "curve entity" : dim == 2 ? "surface entity" : "volume entity",
          tag);
  for (int k = 0; k < (dim == 0 ? 3 : 6); ++k) PetscCall(gm_double(r, "entity coordinate", &x));
  e->dim = dim;
  e->tag = (int)tag;
  e->off = r->npool;
  PetscCall(gm_count(r, "number of physical tags", 2, &n));
  for (long long i = 0; i < n; ++i) {
    PetscCall(gm_int(r, "physical tag", INT32_MIN, INT32_MAX, &v));
    PetscCall(gm_pool_push(r, (int)v));
  }
  e->n = n;
  if (dim > 0) {
    PetscCall(gm_count(r, "number of bounding entities", 2, &n));
    for (long long i = 0; i < n; ++i) PetscCall(gm_int(r, "bounding entity tag", INT32_MIN, INT32_MAX, &v));
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode gm_read_entities(gm_reader *r)
{
  long long count[4], total = 0;

  PetscFunctionBeginUser;
  r->section = "$Entities";
  PetscCheck(!r->entities, PETSC_COMM_SELF, GM_ERR, "%s: second $Entities section", gm_loc(r));
  if (r->binary) PetscCall(gm_begin_raw(r));
  for (int d = 0; d < 4; ++d) {
    PetscCall(gm_count(r, "number of entities", r->binary ? 36 : 8, &count[d]));
    total += count[d];
  }
  PetscCall(PetscCalloc1((size_t)total + 1, &r->entities));
  for (int d = 0; d < 4; ++d)
    for (long long i = 0; i < count[d]; ++i) PetscCall(gm_read_entity(r, d, &r->entities[r->nentities++]));
  PetscCall(gm_expect_end(r, "$EndEntities", " (more entities than the section's counts?)"));
  PetscFunctionReturn(0);
}

/* ------------------------------------------------------------------------------------------------ */
/* Nodes                                                                                              */

static PetscErrorCode gm_alloc_nodes(gm_reader *r, long long n)
{
  PetscFunctionBeginUser;
  PetscCheck(!r->have_nodes, PETSC_COMM_SELF, GM_ERR, "%s: second $Nodes section", gm_loc(r));
  PetscCheck(n > 0, PETSC_COMM_SELF, GM_ERR, "%s: the mesh has no nodes", gm_loc(r));
  r->have_nodes = PETSC_TRUE;
  PetscCall(PetscMalloc1((size_t)n * 3, &r->X));
  PetscCall(PetscMalloc1((size_t)n, &r->node_tag));
  PetscCall(PetscMalloc1((size_t)n, &r->node_rec));
  PetscFunctionReturn(0);
}

static long gm_record(gm_reader *r)
{
  return r->binary ? ftell(r->f) : r->lineno;
}

/* Coordinates of node i (its tag already read). */
static PetscErrorCode gm_read_coordinates(gm_reader *r, int64_t i, int nextra)
{
  double extra;

  PetscFunctionBeginUser;
  gm_item(r, "node tag", r->node_tag[i]);
  PetscCall(gm_double(r, "x coordinate", &r->X[3 * i + 0]));
  PetscCall(gm_double(r, "y coordinate", &r->X[3 * i + 1]));
  PetscCall(gm_double(r, "z coordinate", &r->X[3 * i + 2]));
  for (int k = 0; k < nextra; ++k) PetscCall(gm_double(r, "parametric coordinate", &extra));
  for (int k = 0; k < 3; ++k)
    PetscCheck(isfinite(r->X[3 * i + k]), PETSC_COMM_SELF, GM_ERR, "%s: non-finite coordinate %g", gm_loc(r),
               r->X[3 * i + k]);
  PetscFunctionReturn(0);
}

static int gm_compare_tag(const void *a, const void *b)
{
  const int64_t x = ((const gm_tag_index *)a)->tag, y = ((const gm_tag_index *)b)->tag;
  return (x > y) - (x < y);
}

/* Sorted tag -> index map; rejects duplicate tags. */
static PetscErrorCode gm_build_map(gm_reader *r)
{
  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1((size_t)r->nnodes, &r->map));
  for (int64_t i = 0; i < r->nnodes; ++i) {
    r->map[i].tag = r->node_tag[i];
    r->map[i].index = (int32_t)i;
  }
  qsort(r->map, (size_t)r->nnodes, sizeof(gm_tag_index), gm_compare_tag);
  for (int64_t i = 1; i < r->nnodes; ++i)
    PetscCheck(r->map[i].tag != r->map[i - 1].tag, PETSC_COMM_SELF, GM_ERR,
               "%s: $Nodes: duplicate node tag %lld (%s %ld and %ld)", r->path, (long long)r->map[i].tag,
               r->binary ? "bytes" : "lines", r->node_rec[PetscMin(r->map[i].index, r->map[i - 1].index)],
               r->node_rec[PetscMax(r->map[i].index, r->map[i - 1].index)]);
  PetscFunctionReturn(0);
}

static PetscErrorCode gm_read_nodes_22(gm_reader *r)
{
  long long n, tag;

  PetscFunctionBeginUser;
  PetscCall(gm_count(r, "number of nodes", r->binary ? 28 : 8, &n));
  PetscCall(gm_alloc_nodes(r, n));
  if (r->binary) PetscCall(gm_begin_raw(r));
  for (long long i = 0; i < n; ++i) {
    gm_item(r, "node record", i + 1);
    PetscCall(gm_int(r, "node tag", 1, INT64_MAX, &tag));
    r->node_tag[i] = tag;
    r->node_rec[i] = gm_record(r);
    PetscCall(gm_read_coordinates(r, i, 0));
    r->nnodes++;
  }
  PetscCall(gm_expect_end(r, "$EndNodes", " (more nodes than the section's count?)"));
  PetscFunctionReturn(0);
}

static PetscErrorCode gm_read_nodes_41(gm_reader *r)
{
  long long nblocks, n, minmax, dim, tag, param, nb;

  PetscFunctionBeginUser;
  if (r->binary) PetscCall(gm_begin_raw(r));
  PetscCall(gm_count(r, "number of node blocks", r->binary ? 12 + r->dsize : 8, &nblocks));
  PetscCall(gm_count(r, "number of nodes", r->binary ? r->dsize + 24 : 8, &n));
  PetscCall(gm_size(r, "minimum node tag", 0, INT64_MAX, &minmax));
  PetscCall(gm_size(r, "maximum node tag", 0, INT64_MAX, &minmax));
  PetscCall(gm_alloc_nodes(r, n));
  for (long long b = 0; b < nblocks; ++b) {
    gm_item(r, "node block", b + 1);
    PetscCall(gm_int(r, "entity dimension", 0, 3, &dim));
    PetscCall(gm_int(r, "entity tag", INT32_MIN, INT32_MAX, &tag));
    PetscCall(gm_int(r, "parametric flag", 0, 1, &param));
    PetscCall(gm_size(r, "number of nodes in block", 0, n - r->nnodes, &nb));
    for (long long i = 0; i < nb; ++i) {
      gm_item(r, "node record", r->nnodes + i + 1);
      PetscCall(gm_size(r, "node tag", 1, INT64_MAX, &tag));
      r->node_tag[r->nnodes + i] = tag;
      r->node_rec[r->nnodes + i] = gm_record(r);
    }
    for (long long i = 0; i < nb; ++i) PetscCall(gm_read_coordinates(r, r->nnodes + i, param ? (int)dim : 0));
    r->nnodes += nb;
  }
  gm_item(r, NULL, 0);
  PetscCheck(r->nnodes == n, PETSC_COMM_SELF, GM_ERR, "%s: the node blocks hold %lld nodes, the header says %lld",
             gm_loc(r), (long long)r->nnodes, n);
  PetscCall(gm_expect_end(r, "$EndNodes", " (more node blocks than the section's count?)"));
  PetscFunctionReturn(0);
}

static PetscErrorCode gm_read_nodes(gm_reader *r)
{
  PetscFunctionBeginUser;
  r->section = "$Nodes";
  if (r->version == 22) PetscCall(gm_read_nodes_22(r));
  else PetscCall(gm_read_nodes_41(r));
  PetscCall(gm_build_map(r));
  PetscFunctionReturn(0);
}

/* ------------------------------------------------------------------------------------------------ */
/* Elements                                                                                           */

static PetscErrorCode gm_lookup_node(gm_reader *r, long long tag, int32_t *index)
{
  gm_tag_index key = {tag, 0};
  const gm_tag_index *hit = bsearch(&key, r->map, (size_t)r->nnodes, sizeof(gm_tag_index), gm_compare_tag);

  PetscFunctionBeginUser;
  PetscCheck(hit, PETSC_COMM_SELF, GM_ERR, "%s: references node tag %lld, which is not in $Nodes", gm_loc(r), tag);
  *index = hit->index;
  PetscFunctionReturn(0);
}

/* Notes element n's tag: the tags stay implicit (elem_tag0 + n) until one breaks the run. */
static PetscErrorCode gm_note_tag(gm_reader *r, int64_t n, long long etag)
{
  PetscFunctionBeginUser;
  if (n == 0) r->elem_tag0 = etag;
  else if (!r->etag && etag != r->elem_tag0 + n) {
    PetscCall(PetscMalloc1((size_t)r->elem_cap, &r->etag));
    for (int64_t i = 0; i < n; ++i) r->etag[i] = r->elem_tag0 + i;
  }
  if (r->etag) r->etag[n] = etag;
  PetscFunctionReturn(0);
}

/* Files an element of a kind (a volume kind, or tri3 for a sheet candidate): its kind, tag, and its
 * nodes after the previous element's. */
static PetscErrorCode gm_keep_element(gm_reader *r, long long etag, int type, const int32_t *nodes)
{
  const pbng_element_type *kind = pbng_element_type_by_gmsh(type);
  const int nen = kind->nodes;

  PetscFunctionBeginUser;
  const int64_t elem_cap = r->elem_cap;
  PetscCall(pbng_grow(&r->kind, sizeof(*r->kind), r->nelems + 1, &r->elem_cap));
  if (r->etag && r->elem_cap != elem_cap) PetscCall(PetscRealloc(sizeof(*r->etag) * (size_t)r->elem_cap, &r->etag)); /* beside kind */
  PetscCall(pbng_grow(&r->elems, sizeof(*r->elems), r->nvalues + nen, &r->value_cap));
  PetscCall(gm_note_tag(r, r->nelems, etag));
  r->kind[r->nelems++] = (uint8_t)kind->kind;
  memcpy(&r->elems[r->nvalues], nodes, sizeof(int32_t) * (size_t)nen);
  r->nvalues += nen;
  PetscFunctionReturn(0);
}

/* Adds element e (a sheet candidate) to a group's triangles. */
static PetscErrorCode gm_group_add_triangle(gm_group *grp, int64_t e)
{
  PetscFunctionBeginUser;
  PetscCall(pbng_grow(&grp->tri, sizeof(*grp->tri), grp->ntri + 1, &grp->tri_cap));
  grp->tri[grp->ntri++] = e;
  PetscFunctionReturn(0);
}

/* Remembers the element being read in *ref unless it already holds one. */
static void gm_note_element(gm_reader *r, gm_elem_ref *ref, long long etag, int type)
{
  if (ref->type) return;
  ref->type = type;
  ref->tag = etag;
  ref->rec = r->binary ? ftell(r->f) : r->lineno;
}

/* Reads the nen node tags of the current element (tags as size_t in 4.1, int in 2.2) and files it:
 * volume elements into the mesh, 3-node triangles into the element list as sheet candidates (and into
 * their groups' triangles), every element into its physical groups. */
static PetscErrorCode gm_add_element(gm_reader *r, long long etag, int type, int nen, int ngroups, const int *groups)
{
  int32_t nodes[PBNG_MAX_ELEMENT_NODES];
  long long tag;
  int dim;

  PetscFunctionBeginUser;
  for (int a = 0; a < nen; ++a) {
    PetscCall(gm_size(r, "node tag", 1, INT64_MAX, &tag));
    PetscCall(gm_lookup_node(r, tag, &nodes[a]));
  }
  gm_type_nodes(type, &dim);
  if (dim == 3) PetscCall(gm_keep_element(r, etag, type, nodes));
  else if (type == 2) {
    PetscCall(gm_keep_element(r, etag, type, nodes));
    for (int g = 0; g < ngroups; ++g) PetscCall(gm_group_add_triangle(&r->groups[groups[g]], r->nelems - 1));
  } else if (dim == 2) {
    gm_note_element(r, &r->other2d, etag, type);
    for (int g = 0; g < ngroups; ++g) gm_note_element(r, &r->groups[groups[g]].other, etag, type);
  }
  for (int g = 0; g < ngroups; ++g) PetscCall(gm_group_append(&r->groups[groups[g]], nen, nodes));
  PetscFunctionReturn(0);
}

static PetscErrorCode gm_start_elements(gm_reader *r)
{
  PetscFunctionBeginUser;
  r->section = "$Elements";
  PetscCheck(!r->have_elements, PETSC_COMM_SELF, GM_ERR, "%s: second $Elements section", gm_loc(r));
  PetscCheck(r->have_nodes, PETSC_COMM_SELF, GM_ERR, "%s: $Elements before $Nodes", gm_loc(r));
  r->have_elements = PETSC_TRUE;
  PetscFunctionReturn(0);
}

/* One 2.2 element after its type: tags (the first is the physical tag), then the nodes. `left`: in
 * ASCII files, the values on the record's line after the element number; -1 in binary files. */
static PetscErrorCode gm_read_element_22(gm_reader *r, long long etag, long long type, long long ntags, long long left)
{
  int nen, dim, g = 0, ng = 0;
  long long phys = 0, t = 0;

  PetscFunctionBeginUser;
  PetscCall(gm_check_type(r, type, &nen, &dim));
  if (left >= 0) PetscCall(gm_check_record_length(r, type, nen, left - 2, ntags)); /* less type and tag count */
  for (long long k = 0; k < ntags; ++k) {
    PetscCall(gm_int(r, "element tag (physical, entity, ...)", INT32_MIN, INT32_MAX, &t));
    if (k == 0) phys = t;
  }
  if (phys != 0) {
    PetscCall(gm_group_index(r, dim, (int)phys, &g));
    ng = 1;
  }
  PetscCall(gm_add_element(r, etag, (int)type, nen, ng, &g));
  PetscFunctionReturn(0);
}

static PetscErrorCode gm_read_elements_22(gm_reader *r)
{
  long long n, etag, type, ntags, nb;

  PetscFunctionBeginUser;
  PetscCall(gm_count(r, "number of elements", 8, &n));
  if (!r->binary) {
    for (long long i = 0; i < n; ++i) {
      gm_item(r, "element record", i + 1);
      PetscCall(gm_int(r, "element number", INT64_MIN, INT64_MAX, &etag));
      gm_item(r, "element", etag);
      const long long left = gm_values_left_on_line(r);
      PetscCall(gm_int(r, "element type", INT32_MIN, INT32_MAX, &type));
      PetscCall(gm_int(r, "number of tags", 0, 64, &ntags));
      PetscCall(gm_read_element_22(r, etag, type, ntags, left));
    }
  } else {
    PetscCall(gm_begin_raw(r));
    for (long long i = 0; i < n; i += nb) {
      gm_item(r, "element record", i + 1);
      PetscCall(gm_int(r, "element type", INT32_MIN, INT32_MAX, &type));
      PetscCall(gm_int(r, "number of elements in block", 1, n - i, &nb));
      PetscCall(gm_int(r, "number of tags", 0, 64, &ntags));
      for (long long j = 0; j < nb; ++j) {
        gm_item(r, "element record", i + j + 1);
        PetscCall(gm_int(r, "element number", INT32_MIN, INT32_MAX, &etag));
        gm_item(r, "element", etag);
        PetscCall(gm_read_element_22(r, etag, type, ntags, -1));
      }
    }
  }
  PetscCall(gm_expect_end(r, "$EndElements", " (more elements than the section's count?)"));
  PetscFunctionReturn(0);
}

/* Physical groups of the entity (dim, tag) of a 4.1 element block, as group indices. */
static PetscErrorCode gm_block_groups(gm_reader *r, int dim, int tag, int *ng, int **groups)
{
  const gm_entity *e = gm_find_entity(r, dim, tag);

  PetscFunctionBeginUser;
  *ng = 0;
  PetscCall(PetscMalloc1(e ? (size_t)e->n + 1 : 1, groups));
  if (!e) PetscFunctionReturn(0);
  for (int64_t k = 0; k < e->n; ++k) {
    const int phys = r->pool[e->off + k];
    if (phys == 0) continue;
    PetscCall(gm_group_index(r, dim, phys < 0 ? -phys : phys, &(*groups)[(*ng)++]));
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode gm_read_element_block_41(gm_reader *r, long long b, long long remaining, long long *nb)
{
  long long dim, tag, type, etag;
  int nen, tdim, ng;
  int *groups = NULL;
  PetscErrorCode ierr;

  PetscFunctionBeginUser;
  gm_item(r, "element block", b + 1);
  PetscCall(gm_int(r, "entity dimension", 0, 3, &dim));
  PetscCall(gm_int(r, "entity tag", INT32_MIN, INT32_MAX, &tag));
  PetscCall(gm_int(r, "element type", INT32_MIN, INT32_MAX, &type));
  PetscCall(gm_size(r, "number of elements in block", 0, remaining, nb));
  if (!gm_type_nodes(type, &tdim) && *nb > 0) { /* name the first element of the block */
    PetscCall(gm_size(r, "element tag", 0, INT64_MAX, &etag));
    gm_item(r, "element", etag);
  }
  PetscCall(gm_check_type(r, type, &nen, &tdim));
  PetscCall(gm_block_groups(r, (int)dim, (int)tag, &ng, &groups));
  for (long long i = 0; i < *nb; ++i) {
    gm_item(r, "element block", b + 1);
    ierr = gm_size(r, "element tag", 0, INT64_MAX, &etag);
    if (!ierr) {
      gm_item(r, "element", etag);
      if (!r->binary) ierr = gm_check_record_length(r, type, nen, gm_values_left_on_line(r), 0);
    }
    if (!ierr) ierr = gm_add_element(r, etag, (int)type, nen, ng, groups);
    if (ierr) {
      PetscCall(PetscFree(groups));
      PetscCall(ierr);
    }
  }
  PetscCall(PetscFree(groups));
  PetscFunctionReturn(0);
}

static PetscErrorCode gm_read_elements_41(gm_reader *r)
{
  long long nblocks, n, minmax, nb, done = 0;

  PetscFunctionBeginUser;
  if (r->binary) PetscCall(gm_begin_raw(r));
  PetscCall(gm_count(r, "number of element blocks", r->binary ? 12 + r->dsize : 8, &nblocks));
  PetscCall(gm_count(r, "number of elements", r->binary ? 2 * r->dsize : 4, &n));
  PetscCall(gm_size(r, "minimum element tag", 0, INT64_MAX, &minmax));
  PetscCall(gm_size(r, "maximum element tag", 0, INT64_MAX, &minmax));
  for (long long b = 0; b < nblocks; ++b, done += nb) PetscCall(gm_read_element_block_41(r, b, n - done, &nb));
  gm_item(r, NULL, 0);
  PetscCheck(done == n, PETSC_COMM_SELF, GM_ERR, "%s: the element blocks hold %lld elements, the header says %lld",
             gm_loc(r), done, n);
  PetscCall(gm_expect_end(r, "$EndElements", " (more element blocks than the section's count?)"));
  PetscFunctionReturn(0);
}

static PetscErrorCode gm_read_elements(gm_reader *r)
{
  PetscFunctionBeginUser;
  PetscCall(gm_start_elements(r));
  if (r->version == 22) PetscCall(gm_read_elements_22(r));
  else PetscCall(gm_read_elements_41(r));
  PetscFunctionReturn(0);
}

/* ------------------------------------------------------------------------------------------------ */
/* File structure                                                                                     */

static PetscErrorCode gm_read_format(gm_reader *r)
{
  char *tok, version[48];
  long long type, dsize;

  PetscFunctionBeginUser;
  PetscCall(gm_token_or_eof(r, &tok));
  PetscCheck(tok, PETSC_COMM_SELF, GM_ERR, "%s: empty file", r->path);
  PetscCheck(strcmp(tok, "$NOD") && strcmp(tok, "$NOE"), PETSC_COMM_SELF, GM_ERR,
             "%s:%ld: unsupported MSH version 1.0; pbng reads MSH 2.2 and 4.1 (ASCII or binary): re-export with "
             "gmsh -format msh22 or msh41",
             r->path, r->lineno);
  PetscCheck(!strcmp(tok, "$MeshFormat"), PETSC_COMM_SELF, GM_ERR,
             "%s:%ld: not a Gmsh MSH file: expected $MeshFormat, found '%.40s'", r->path, r->lineno, tok);
  r->section = "$MeshFormat";
  PetscCall(gm_token(r, "MSH version", &tok));
  PetscCall(PetscStrncpy(version, tok, sizeof(version)));
  if (!strcmp(version, "2.2") || !strcmp(version, "2.1") || !strcmp(version, "2.0") || !strcmp(version, "2")) r->version = 22;
  else if (!strcmp(version, "4.1")) r->version = 41;
  else
    SETERRQ(PETSC_COMM_SELF, GM_ERR,
            "%s: unsupported MSH version %s; pbng reads MSH 2.2 and 4.1 (ASCII or binary): re-export with gmsh "
            "-format msh22 or msh41",
            gm_loc(r), version);
  PetscCall(gm_int(r, "file type", 0, 1, &type));
  PetscCall(gm_int(r, "data size", 4, 8, &dsize));
  PetscCheck(dsize == 8 || (dsize == 4 && r->version == 41), PETSC_COMM_SELF, GM_ERR,
             "%s: unsupported data size %lld", gm_loc(r), dsize);
  r->dsize = (int)dsize;
  if (type == 1) {
    int32_t one;
    r->binary = 1;
    PetscCall(gm_begin_raw(r));
    PetscCall(gm_fread(r, &one, sizeof(one), "endianness marker"));
    if (one == 0x01000000) r->swap = 1;
    else PetscCheck(one == 1, PETSC_COMM_SELF, GM_ERR, "%s: bad endianness marker %d (expected 1)", gm_loc(r), (int)one);
  }
  PetscCall(gm_expect_end(r, "$EndMeshFormat", ""));
  PetscFunctionReturn(0);
}

static PetscErrorCode gm_read_sections(gm_reader *r)
{
  char *tok, name[64];

  PetscFunctionBeginUser;
  for (;;) {
    r->section = NULL;
    gm_item(r, NULL, 0);
    PetscCall(gm_token_or_eof(r, &tok));
    if (!tok) break;
    if (!strcmp(tok, "$PhysicalNames")) PetscCall(gm_read_physical_names(r));
    else if (!strcmp(tok, "$Entities") && r->version == 41) PetscCall(gm_read_entities(r));
    else if (!strcmp(tok, "$Nodes")) PetscCall(gm_read_nodes(r));
    else if (!strcmp(tok, "$Elements")) PetscCall(gm_read_elements(r));
    else if (tok[0] == '$' && strncmp(tok, "$End", 4)) {
      PetscCall(PetscStrncpy(name, tok, sizeof(name)));
      PetscCall(gm_skip_section(r, name));
    } else SETERRQ(PETSC_COMM_SELF, GM_ERR, "%s: unexpected '%.40s' outside a section", gm_loc(r), tok);
  }
  PetscCheck(r->have_nodes, PETSC_COMM_SELF, GM_ERR, "%s: no $Nodes section", r->path);
  PetscCheck(r->have_elements, PETSC_COMM_SELF, GM_ERR, "%s: no $Elements section", r->path);
  PetscFunctionReturn(0);
}

/* ------------------------------------------------------------------------------------------------ */
/* Sheets and the mesh                                                                                */

/* A physical group's node-set name: its $PhysicalNames name, else "physical_<tag>". */
static void gm_group_name(const gm_reader *r, const gm_group *grp, char *name, size_t len)
{
  snprintf(name, len, "physical_%d", grp->tag);
  for (int i = 0; i < r->nnames; ++i)
    if (r->names[i].dim == grp->dim && r->names[i].tag == grp->tag) snprintf(name, len, "%s", r->names[i].name);
}

/* "path:line ($Elements, element tag)" or "path: byte N (...)" for a remembered element. */
static const char *gm_elem_loc(gm_reader *r, const gm_elem_ref *ref)
{
  if (r->binary) snprintf(r->loc, sizeof(r->loc), "%s: byte %ld ($Elements, element %lld)", r->path, ref->rec, ref->tag);
  else snprintf(r->loc, sizeof(r->loc), "%s:%ld ($Elements, element %lld)", r->path, ref->rec, ref->tag);
  return r->loc;
}

/* Marks in keep[] the volume elements and the sheet candidates that are sheet elements: all of them in
 * a file without volume elements (where a 2-D element of another type is an error: it would be a hole
 * in the sheet), else those of the physical groups named "sheet..." (where one is an error too). */
static PetscErrorCode gm_mark_sheets(gm_reader *r, int64_t nvolume, uint8_t *keep)
{
  char name[64];

  PetscFunctionBeginUser;
  if (nvolume == 0) {
    PetscCheck(!r->other2d.type, PETSC_COMM_SELF, GM_ERR,
               "%s: element type %lld (%s) in a sheet mesh (a file without volume elements, whose 3-node triangles are the sheet): "
               "pbng's sheets are 3-node triangles (type 2) only; mesh the surface with linear triangles (no Recombine, order 1)",
               gm_elem_loc(r, &r->other2d), r->other2d.type, gm_type_name(r->other2d.type));
    for (int64_t e = 0; e < r->nelems; ++e) keep[e] = 1;
    PetscFunctionReturn(0);
  }
  for (int64_t e = 0; e < r->nelems; ++e) keep[e] = r->kind[e] != PBNG_ELEMENT_TRI3;
  for (int g = 0; g < r->ngroups; ++g) {
    const gm_group *grp = &r->groups[g];
    gm_group_name(r, grp, name, sizeof(name));
    if (strncmp(name, "sheet", 5)) continue;
    PetscCheck(!grp->other.type, PETSC_COMM_SELF, GM_ERR,
               "%s: element type %lld (%s) in the sheet group \"%s\": pbng's sheets are 3-node triangles (type 2) only; mesh the "
               "surface with linear triangles (no Recombine, order 1)",
               gm_elem_loc(r, &grp->other), grp->other.type, gm_type_name(grp->other.type), name);
    for (int64_t i = 0; i < grp->ntri; ++i) keep[grp->tri[i]] = 1;
  }
  PetscFunctionReturn(0);
}

/* The element tags made explicit (etag[e] = elem_tag0 + e). */
static PetscErrorCode gm_explicit_tags(gm_reader *r)
{
  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1((size_t)r->nelems + 1, &r->etag));
  for (int64_t e = 0; e < r->nelems; ++e) r->etag[e] = r->elem_tag0 + e;
  PetscFunctionReturn(0);
}

/* Keeps the elements marked in keep[] (in file order; their tags with them) and drops the others. */
static void gm_compact_elements(gm_reader *r, const uint8_t *keep)
{
  int64_t n = 0, v_out = 0, v_in = 0;

  r->kinds = 0;
  for (int64_t e = 0; e < r->nelems; ++e) {
    const int nen = pbng_element_type_get((pbng_element_kind)r->kind[e])->nodes;
    if (keep[e]) {
      memmove(&r->elems[v_out], &r->elems[v_in], sizeof(int32_t) * (size_t)nen);
      if (r->etag) r->etag[n] = r->etag[e];
      r->kinds |= 1u << r->kind[e];
      r->kind[n++] = r->kind[e];
      v_out += nen;
    }
    v_in += nen;
  }
  r->nelems = n;
  r->nvalues = v_out;
}

/* The element tags once compacted: implicit again (elem_tag0 + e) when they run without gaps. */
static PetscErrorCode gm_simplify_tags(gm_reader *r)
{
  PetscFunctionBeginUser;
  if (!r->etag || !r->nelems) PetscFunctionReturn(0);
  for (int64_t e = 1; e < r->nelems; ++e)
    if (r->etag[e] != r->etag[0] + e) PetscFunctionReturn(0);
  r->elem_tag0 = r->etag[0];
  PetscCall(PetscFree(r->etag));
  PetscFunctionReturn(0);
}

/* Decides which 3-node triangles are sheet elements (the rule of the file comment) and drops the
 * others (boundary faces: they only fed their physical groups). */
static PetscErrorCode gm_select_sheets(gm_reader *r)
{
  int64_t nvolume = 0;
  uint8_t *keep;

  PetscFunctionBeginUser;
  for (int64_t e = 0; e < r->nelems; ++e) nvolume += r->kind[e] != PBNG_ELEMENT_TRI3;
  PetscCheck(r->nelems > 0, PETSC_COMM_SELF, GM_ERR,
             "%s: no volume elements (types 4, 11, 29, 5, 12, 6, 7) and no 3-node triangles (type 2): pbng needs a 3D volume mesh "
             "(gmsh -3) or a sheet of triangles (gmsh -2); with physical groups defined, Gmsh saves only their elements (put the "
             "volume or surface in one, or save with -save_all)",
             r->path);
  PetscCall(PetscCalloc1((size_t)r->nelems, &keep));
  PetscErrorCode ierr = gm_mark_sheets(r, nvolume, keep);
  int64_t nkeep = 0;
  for (int64_t e = 0; e < r->nelems; ++e) nkeep += keep[e];
  if (!ierr && nkeep < r->nelems && !r->etag) ierr = gm_explicit_tags(r); /* dropping elements breaks the implicit run */
  if (!ierr) gm_compact_elements(r, keep);
  PetscCall(PetscFree(keep));
  PetscCall(ierr);
  PetscCall(gm_simplify_tags(r));
  PetscFunctionReturn(0);
}

static int gm_compare_group(const void *a, const void *b)
{
  const gm_group *x = a, *y = b;
  if (x->dim != y->dim) return x->dim - y->dim;
  return (x->tag > y->tag) - (x->tag < y->tag);
}

/* The elements kept as the mesh's rows: the list as read when the file has one kind, else rows
 * as wide as the widest kind, padded with -1, and the kind of each element. */
static PetscErrorCode gm_build_rows(gm_reader *r, pbng_mesh *mesh)
{
  int nen = 0;

  PetscFunctionBeginUser;
  for (int k = 0; k < PBNG_ELEMENT_KIND_COUNT; ++k)
    if (r->kinds & (1u << k)) nen = PetscMax(nen, pbng_element_type_get((pbng_element_kind)k)->nodes);
  mesh->nen = nen;
  if (!(r->kinds & (r->kinds - 1))) { /* one kind */
    mesh->etype = pbng_element_type_get((pbng_element_kind)r->kind[0]);
    mesh->elems = r->elems;
    r->elems = NULL;
    PetscFunctionReturn(0);
  }
  PetscCall(PetscMalloc1((size_t)nen * (size_t)r->nelems, &mesh->elems));
  for (int64_t e = 0, v = 0; e < r->nelems; ++e) {
    const int n = pbng_element_type_get((pbng_element_kind)r->kind[e])->nodes;
    int32_t *row = &mesh->elems[(size_t)nen * (size_t)e];
    memcpy(row, &r->elems[v], sizeof(int32_t) * (size_t)n);
    for (int a = n; a < nen; ++a) row[a] = -1;
    v += n;
  }
  mesh->kind = r->kind;
  r->kind = NULL;
  PetscFunctionReturn(0);
}

/* Moves nodes and elements (volumes and sheet triangles) into the mesh and adds one node set per physical group. */
static PetscErrorCode gm_build_mesh(gm_reader *r, pbng_mesh *mesh)
{
  char name[64];

  PetscFunctionBeginUser;
  mesh->nnodes = r->nnodes;
  mesh->nelems = r->nelems;
  mesh->X = r->X;
  r->X = NULL;
  PetscCall(gm_build_rows(r, mesh));
  if (r->ngroups > 1) qsort(r->groups, (size_t)r->ngroups, sizeof(gm_group), gm_compare_group);
  for (int g = 0; g < r->ngroups; ++g) {
    gm_group_name(r, &r->groups[g], name, sizeof(name));
    PetscCall(pbng_mesh_add_node_set(mesh, name, r->groups[g].n, r->groups[g].nodes));
  }
  PetscFunctionReturn(0);
}

static PetscErrorCode gm_read(gm_reader *r, const char *path, pbng_mesh *mesh)
{
  PetscFunctionBeginUser;
  r->path = path;
  PetscCall(PetscStrncpy(mesh->source, path, sizeof(mesh->source)));
  r->f = fopen(path, "rb");
  PetscCheck(r->f, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "%s: cannot open mesh file: %s", path, strerror(errno));
  PetscCheck(!fseek(r->f, 0, SEEK_END) && (r->fsize = ftell(r->f)) >= 0 && !fseek(r->f, 0, SEEK_SET), PETSC_COMM_SELF,
             PETSC_ERR_FILE_READ, "%s: cannot determine the file size", path);
  PetscCall(gm_read_format(r));
  PetscCall(gm_read_sections(r));
  PetscCall(gm_select_sheets(r));
  PetscCall(gm_build_mesh(r, mesh));
  /* validation names each element's record by its Gmsh element tag */
  if (r->etag) PetscCall(pbng_mesh_validate_records(mesh, r->etag));
  else PetscCall(pbng_mesh_validate(mesh, r->elem_tag0));
  PetscFunctionReturn(0);
}

static PetscErrorCode gm_free(gm_reader *r)
{
  PetscFunctionBeginUser;
  if (r->f) fclose(r->f);
  free(r->line);
  PetscCall(PetscFree(r->X));
  PetscCall(PetscFree(r->node_tag));
  PetscCall(PetscFree(r->node_rec));
  PetscCall(PetscFree(r->map));
  PetscCall(PetscFree(r->elems));
  PetscCall(PetscFree(r->kind));
  PetscCall(PetscFree(r->etag));
  PetscCall(PetscFree(r->names));
  PetscCall(PetscFree(r->entities));
  PetscCall(PetscFree(r->pool));
  for (int g = 0; g < r->ngroups; ++g) {
    PetscCall(PetscFree(r->groups[g].nodes));
    PetscCall(PetscFree(r->groups[g].tri));
  }
  PetscCall(PetscFree(r->groups));
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_mesh_read_gmsh(const char *path, pbng_mesh *mesh)
{
  gm_reader r;
  PetscErrorCode ierr;

  PetscFunctionBeginUser;
  memset(mesh, 0, sizeof(*mesh));
  memset(&r, 0, sizeof(r));
  ierr = gm_read(&r, path, mesh);
  PetscCall(gm_free(&r));
  if (ierr) PetscCall(pbng_mesh_destroy(mesh));
  PetscCall(ierr);
  PetscFunctionReturn(0);
}
