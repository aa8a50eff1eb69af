#include "io/h5util.h"
#include <stdio.h>
#include <string.h>

void pbng_h5_quiet(pbng_h5_quiet_scope *scope)
{
  scope->func = NULL, scope->data = NULL;
  (void)H5Eget_auto2(H5E_DEFAULT, &scope->func, &scope->data);
  (void)H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

void pbng_h5_restore(const pbng_h5_quiet_scope *scope) { (void)H5Eset_auto2(H5E_DEFAULT, scope->func, scope->data); }

typedef struct {
  char *buf;
  size_t len;
} error_text;

static herr_t keep_innermost(unsigned n, const H5E_error2_t *e, void *ctx)
{
  error_text *t = ctx;
  if (n == 0 && e) {
    char minor[128] = "";
    if (H5Eget_msg(e->min_num, NULL, minor, sizeof minor) < 0) minor[0] = '\0';
    snprintf(t->buf, t->len, "%s%s%s", e->desc ? e->desc : "", minor[0] ? ": " : "", minor);
  }
  return 0;
}

void pbng_h5_last_error(char *buf, size_t len)
{
  error_text t = {buf, len};
  snprintf(buf, len, "no HDF5 error description");
  (void)H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, keep_innermost, &t);
  (void)H5Eclear2(H5E_DEFAULT);
}

int pbng_h5_has_signature(const char *path)
{
  static const unsigned char sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
  unsigned char head[8];
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  const size_t n = fread(head, 1, sizeof(head), f);
  fclose(f);
  return n == sizeof(head) && !memcmp(head, sig, sizeof(sig));
}

void pbng_h5_close(hid_t *id)
{
  if (*id < 0) return;
  switch (H5Iget_type(*id)) {
  case H5I_DATASET: (void)H5Dclose(*id); break;
  case H5I_GROUP: (void)H5Gclose(*id); break;
  case H5I_DATASPACE: (void)H5Sclose(*id); break;
  case H5I_DATATYPE: (void)H5Tclose(*id); break;
  case H5I_ATTR: (void)H5Aclose(*id); break;
  case H5I_GENPROP_LST: (void)H5Pclose(*id); break;
  case H5I_FILE: (void)H5Fclose(*id); break;
  default: break;
  }
  *id = -1;
}

/* A file-access property list: MPI-IO over comm, or the default driver for MPI_COMM_NULL. */
static hid_t file_access(MPI_Comm comm)
{
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  if (fapl >= 0 && comm != MPI_COMM_NULL && H5Pset_fapl_mpio(fapl, comm, MPI_INFO_NULL) < 0) pbng_h5_close(&fapl);
  return fapl;
}

hid_t pbng_h5_open(MPI_Comm comm, const char *path, unsigned flags)
{
  hid_t fapl = file_access(comm), file = -1;
  if (fapl >= 0 && H5Fis_hdf5(path) > 0) file = H5Fopen(path, flags, fapl);
  pbng_h5_close(&fapl);
  return file;
}

hid_t pbng_h5_create(MPI_Comm comm, const char *path)
{
  hid_t fapl = file_access(comm), file = -1;
  if (fapl >= 0) file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  pbng_h5_close(&fapl);
  return file;
}

int pbng_h5_attr_write(hid_t loc, const char *name, hid_t type, int rank, const hsize_t *dims, const void *value)
{
  hid_t space = rank ? H5Screate_simple(rank, dims, NULL) : H5Screate(H5S_SCALAR), attr = -1;
  int ok = space >= 0;
  const htri_t exists = ok ? H5Aexists(loc, name) : -1;
  ok = ok && exists >= 0 && (!exists || H5Adelete(loc, name) >= 0);
  if (ok) attr = H5Acreate2(loc, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
  ok = ok && attr >= 0 && H5Awrite(attr, type, value) >= 0;
  pbng_h5_close(&attr);
  pbng_h5_close(&space);
  return ok ? 0 : -1;
}

int pbng_h5_attr_write_string(hid_t loc, const char *name, const char *value)
{
  const char *v = value ? value : "";
  hid_t type = H5Tcopy(H5T_C_S1);
  const int ok = type >= 0 && H5Tset_size(type, strlen(v) + 1) >= 0 && H5Tset_strpad(type, H5T_STR_NULLTERM) >= 0 &&
                 pbng_h5_attr_write(loc, name, type, 0, NULL, v) == 0;
  pbng_h5_close(&type);
  return ok ? 0 : -1;
}

int pbng_h5_attr_read(hid_t loc, const char *name, hid_t type, int n, void *value)
{
  if (H5Aexists(loc, name) <= 0) return -1;
  hid_t attr = H5Aopen(loc, name, H5P_DEFAULT), space = attr >= 0 ? H5Aget_space(attr) : -1;
  const int ok = space >= 0 && H5Sget_simple_extent_npoints(space) == n && H5Aread(attr, type, value) >= 0;
  pbng_h5_close(&space);
  pbng_h5_close(&attr);
  return ok ? 0 : -1;
}

int pbng_h5_attr_read_string(hid_t loc, const char *name, char *buf, size_t size)
{
  memset(buf, 0, size);
  if (H5Aexists(loc, name) <= 0) return -1;
  hid_t attr = H5Aopen(loc, name, H5P_DEFAULT), type = attr >= 0 ? H5Aget_type(attr) : -1;
  int ok = 0;
  if (type >= 0 && H5Tget_class(type) == H5T_STRING) {
    if (H5Tis_variable_str(type) > 0) {
      char *vlen = NULL;
      ok = H5Aread(attr, type, &vlen) >= 0 && vlen;
      if (ok) snprintf(buf, size, "%s", vlen);
      if (vlen) H5free_memory(vlen);
    } else if (H5Tget_size(type) < size) {
      ok = H5Aread(attr, type, buf) >= 0;
    }
  }
  pbng_h5_close(&type);
  pbng_h5_close(&attr);
  return ok ? 0 : -1;
}
