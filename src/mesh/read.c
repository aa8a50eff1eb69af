/* pbng_mesh_read: picks the reader by file name. */
#include "mesh/mesh.h"
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static PetscBool has_suffix(const char *path, const char *suffix)
{
  const size_t n = strlen(path), m = strlen(suffix);
  return n >= m && !strcmp(path + n - m, suffix) ? PETSC_TRUE : PETSC_FALSE;
}

static PetscBool file_exists(const char *path)
{
  struct stat st;
  return !stat(path, &st) && S_ISREG(st.st_mode) ? PETSC_TRUE : PETSC_FALSE;
}

/* A basename whose .node or .ele file exists (".node"/".ele" themselves handled by the caller). */
static PetscBool is_tetgen_basename(const char *path)
{
  char name[PETSC_MAX_PATH_LEN];

  if (file_exists(path)) return PETSC_FALSE;
  snprintf(name, sizeof(name), "%s.node", path);
  if (file_exists(name)) return PETSC_TRUE;
  snprintf(name, sizeof(name), "%s.ele", path);
  return file_exists(name);
}

PetscErrorCode pbng_mesh_read(const char *path, pbng_mesh *mesh)
{
  PetscFunctionBeginUser;
  memset(mesh, 0, sizeof(*mesh));
  PetscCheck(path && path[0], PETSC_COMM_SELF, PETSC_ERR_ARG_WRONG, "mesh: no file name given");
  if (has_suffix(path, ".msh")) PetscCall(pbng_mesh_read_gmsh(path, mesh));
  else if (has_suffix(path, ".node") || has_suffix(path, ".ele") || is_tetgen_basename(path))
    PetscCall(pbng_mesh_read_tetgen(path, mesh));
  else {
    PetscCheck(file_exists(path), PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN,
               "%s: cannot open mesh file (and no %s.node / %s.ele TetGen pair)", path, path, path);
    SETERRQ(PETSC_COMM_SELF, PETSC_ERR_SUP,
            "%s: unrecognised mesh format; supported: Gmsh .msh (MSH 2.2 or 4.1, ASCII or binary) and TetGen "
            ".node/.ele (give either file or their basename)",
            path);
  }
  PetscCall(PetscStrncpy(mesh->source, path, sizeof(mesh->source)));
  PetscFunctionReturn(0);
}
