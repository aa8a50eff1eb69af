#include "io/weak_file_shares.h"
#include "core/grow.h"
#include "parallel/slice_check.h"
#include "parallel/slice_weak.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>

enum { MESSAGE_LEN = PETSC_MAX_PATH_LEN + 256 };

/* A data line of the share (its comment cut off) and its line's index among the share's lines. */
typedef struct {
  char *text;
  int64_t line;
} data_line;

/* This process's text: bytes [from, from + len) of the file, from = b - 1 (the newline that starts a line at b; 0 for
 * the first share), through the end of the last line that begins before e; its data lines. */
typedef struct {
  char *text;
  int64_t len, from, b, e;
  int64_t ndata;
  data_line *data;
} share;

enum { READ_CHUNK = 1 << 16 };

/* Appends up to n bytes of f to the share's text; returns how many were read. */
static int64_t read_more(FILE *f, share *sh, int64_t n, int64_t *cap)
{
  if (pbng_grow(&sh->text, 1, sh->len + n + 1, cap)) return 0;
  const int64_t got = (int64_t)fread(&sh->text[sh->len], 1, (size_t)n, f);
  sh->len += got;
  sh->text[sh->len] = '\0';
  return got;
}

/* The share's bytes; 0 with msg set when the file cannot be read. */
static int read_share(const char *path, int rank, int size, share *sh, char *msg, size_t len)
{
  FILE *f = fopen(path, "rb");
  int64_t cap = 0, bytes = 0;

  if (!f) {
    snprintf(msg, len, "%s: cannot open weak-constraint file: %s", path, strerror(errno));
    return 0;
  }
  int ok = fseek(f, 0, SEEK_END) == 0 && (bytes = (int64_t)ftell(f)) >= 0;
  sh->b = bytes * rank / size, sh->e = bytes * (rank + 1) / size, sh->from = sh->b > 0 ? sh->b - 1 : 0;
  ok = ok && fseek(f, (long)sh->from, SEEK_SET) == 0 && read_more(f, sh, sh->e - sh->from, &cap) == sh->e - sh->from;
  while (ok && sh->e > sh->b && sh->from + sh->len < bytes && sh->text[sh->len - 1] != '\n') { /* the rest of the last line begun before e */
    const int64_t at = sh->len, got = read_more(f, sh, PetscMin(READ_CHUNK, bytes - sh->from - sh->len), &cap);
    ok = got > 0;
    if (ok && memchr(&sh->text[at], '\n', (size_t)got)) break;
  }
  ok = ok && !ferror(f) && sh->text;
  if (!ok) snprintf(msg, len, "%s: read error: %s", path, strerror(errno));
  fclose(f);
  return ok;
}

/* The newlines in [from, e - 1): the processes' counts add up to the file's before each share's first line. */
static int64_t share_newlines(const share *sh)
{
  int64_t n = 0;
  for (int64_t k = 0; k < sh->e - 1 - sh->from && k < sh->len; ++k) n += sh->text[k] == '\n';
  return n;
}

/* The lines that begin in [b, e), each cut at its newline, and their data lines. */
static PetscErrorCode split_lines(share *sh)
{
  int64_t cap = 0, start = sh->b == 0 ? 0 : -1;

  PetscFunctionBeginUser;
  for (int64_t k = 0; k < sh->e - 1 - sh->from && k < sh->len && start < 0; ++k) /* after the first newline at b - 1 or later */
    if (sh->text[k] == '\n') start = k + 1;
  for (int64_t line = 0; start >= 0 && start < sh->len && sh->from + start < sh->e; ++line) {
    char *text = &sh->text[start], *nl = strchr(text, '\n');
    if (nl) *nl = '\0';
    start = nl ? nl - sh->text + 1 : sh->len;
    char *data = pbng_weak_line_data(text);
    if (!data) continue;
    PetscCall(pbng_grow(&sh->data, sizeof(*sh->data), sh->ndata + 1, &cap));
    sh->data[sh->ndata++] = (data_line){data, line};
  }
  PetscFunctionReturn(0);
}

/* The share's data lines parsed: the file's first data line (global data index 0) as the header, the others into c[];
 * the first bad line's number (INT64_MAX: none) with its message. first_line: the file's number of the share's first
 * line; first_data: the data lines before the share. */
static int64_t parse_share(const char *path, const share *sh, long first_line, int64_t first_data, int64_t nnodes, pbng_weak_constraint *c, int64_t *n,
                           char *msg, size_t len)
{
  *n = 0;
  for (int64_t k = 0; k < sh->ndata; ++k) {
    const long lineno = first_line + (long)sh->data[k].line;
    const int ok = first_data + k == 0 ? pbng_weak_line_header(path, lineno, sh->data[k].text, msg, len)
                                       : pbng_weak_line_constraint(path, lineno, sh->data[k].text, nnodes, &c[(*n)++], msg, len);
    if (!ok) return lineno;
  }
  return INT64_MAX;
}

/* The file's constraints of this share in c[*n] (PetscMalloc'd), every process's errors agreed. */
static PetscErrorCode read_constraints(MPI_Comm comm, const char *path, int64_t nnodes, share *sh, pbng_weak_constraint **c, int64_t *n)
{
  int rank, size;
  char msg[MESSAGE_LEN] = "";
  int64_t mine[2], before[2] = {0, 0}, total[2]; /* newlines, data lines */

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  const int ok = read_share(path, rank, size, sh, msg, sizeof(msg));
  PetscCall(pbng_stop_on_first_error(comm, ok ? INT64_MAX : 0, msg, sizeof(msg))); /* every process the first error: key its line, 0 unreadable */
  mine[0] = share_newlines(sh); /* before the lines are cut at their newlines */
  PetscCall(split_lines(sh));
  mine[1] = sh->ndata;
  PetscCallMPI(MPI_Exscan(mine, before, 2, MPI_INT64_T, MPI_SUM, comm));
  if (rank == 0) before[0] = before[1] = 0; /* MPI_Exscan leaves rank 0's undefined */
  PetscCallMPI(MPI_Allreduce(mine, total, 2, MPI_INT64_T, MPI_SUM, comm));
  const long first_line = sh->b == 0 ? 1 : (long)before[0] + 2; /* after the newlines before b - 1 and the one at or after it */
  PetscCall(PetscMalloc1(sh->ndata + 1, c));
  const int64_t bad = parse_share(path, sh, first_line, before[1], nnodes, *c, n, msg, sizeof(msg));
  PetscCall(pbng_stop_on_first_error(comm, bad, msg, sizeof(msg)));
  PetscCheck(total[1] > 0, comm, PETSC_ERR_FILE_UNEXPECTED, "%s", (pbng_weak_file_not_weak(path, msg, sizeof(msg)), msg));
  PetscCheck(total[1] > 1, comm, PETSC_ERR_FILE_UNEXPECTED, "%s: the file has no constraints", path);
  PetscFunctionReturn(0);
}

PetscErrorCode pbng_slice_read_weak_file(MPI_Comm comm, const char *path, pbng_mesh_slice *s)
{
  share sh;
  pbng_weak_constraint *c = NULL;
  int64_t n = 0;

  PetscFunctionBeginUser;
  memset(&sh, 0, sizeof(sh));
  PetscErrorCode ierr = read_constraints(comm, path, s->nglobal_nodes, &sh, &c, &n);
  if (!ierr) ierr = pbng_slice_add_weak(comm, s, n, c);
  PetscCall(PetscFree(c));
  PetscCall(PetscFree(sh.text));
  PetscCall(PetscFree(sh.data));
  PetscCall(ierr);
  PetscFunctionReturn(0);
}
