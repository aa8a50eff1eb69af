/* Contact detection cost against the number of surface triangles (docs/contact.md#detection).
 *
 * Two Res-N tetrahedral blocks stacked along y (pbng_generate_stacked_blocks), the gap d/2 with
 * d = h/2 (h = 1/(N-1)), so that every vertex of the two facing faces is in contact. For each N of
 * -sizes: the surface set-up time, the median detection time over -repeats detections, the surface
 * triangles and vertices (global), the broad phase's candidate pairs against all V x T pairs, the
 * records, and on one rank for small sizes (V T <= -brute_limit) the time of an all-pairs loop of the
 * closest-point kernel alone (a lower bound of a brute-force detection).
 * A line per size on stdout, and the CSV to -csv FILE when given.
 *
 *   cmake --build build --target bench_contact_detect
 *   OMP_NUM_THREADS=1 build/bin/bench_contact_detect -sizes 11,21,31,41,51
 *   mpiexec -n 2 build/bin/bench_contact_detect -sizes 11,21,31,41,51
 *
 * Not a test: it checks nothing, ctest does not run it. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include "mesh/generate.h"
#include "contact/contact_detect.h"
#include "test_common.h"

static int compare_double(const void *a, const void *b)
{
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Rest positions, the upper block lowered so that its bottom face is d/2 above the lower block's top. */
static void positions(const pbng_dmesh *dm, int64_t nlower, double gap, double d, double *x)
{
  for (int32_t i = 0; i < dm->nlocal; ++i)
    for (int k = 0; k < 3; ++k) x[3 * i + k] = dm->X[3 * i + k] - (k == 1 && dm->global_node[i] >= nlower ? gap - 0.5 * d : 0.0);
}

/* Seconds of an all-pairs loop of the closest-point kernel over the vertices and triangles (one rank). */
static double all_pairs_seconds(const pbng_surface *s, const double *x)
{
  const double t0 = MPI_Wtime();
  double sink = 0;
#pragma omp parallel for reduction(+ : sink) schedule(static)
  for (int32_t v = 0; v < s->nvert; ++v)
    for (int32_t t = 0; t < s->nheld; ++t) {
      double w[3], p[3];
      const int32_t *c = s->tri[t].node;
      sink += pbng_point_triangle_closest(&x[3 * (int64_t)s->vert[v]], &x[3 * (int64_t)c[0]], &x[3 * (int64_t)c[1]], &x[3 * (int64_t)c[2]], w, p) < 1e-300;
    }
  const double t1 = MPI_Wtime();
  return sink >= 0 ? t1 - t0 : -1;
}

static PetscErrorCode bench_size(MPI_Comm comm, int res, int repeats, double brute_limit, FILE *csv)
{
  pbng_mesh mesh;
  pbng_dmesh dm;
  pbng_halo halo;
  pbng_bc_list none = {0};
  pbng_contact_detector *det;
  pbng_contact_detect_options opt = {0};
  pbng_contact_detect_stats st;
  double *x, *times;
  int rank, size;

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  PetscCallMPI(MPI_Comm_size(comm, &size));
  const double h = 1.0 / (res - 1), gap = h;
  opt.distance = 0.5 * h;
  PetscCall(pbng_generate_stacked_blocks(res, gap, 0, &mesh));
  const int64_t nlower = mesh.nnodes / 2;
  PetscCall(test_build_subdomain(comm, &mesh, &none, &dm, &halo));
  PetscCall(PetscMalloc1(3 * (int64_t)dm.nlocal + 1, &x));
  PetscCall(PetscMalloc1(repeats, &times));
  positions(&dm, nlower, gap, opt.distance, x);
  PetscCallMPI(MPI_Barrier(comm));
  double t0 = MPI_Wtime();
  PetscCall(pbng_contact_detector_create(&dm, &opt, &det));
  const double setup = MPI_Wtime() - t0;
  int64_t records = 0;
  for (int r = 0; r < repeats; ++r) {
    pbng_contact_record *rec;
    int32_t n;
    PetscCallMPI(MPI_Barrier(comm));
    t0 = MPI_Wtime();
    PetscCall(pbng_contact_detect(det, x, &n, &rec));
    double mine = MPI_Wtime() - t0;
    PetscCallMPI(MPI_Allreduce(&mine, &times[r], 1, MPI_DOUBLE, MPI_MAX, comm));
    records = n;
    PetscCall(PetscFree(rec));
  }
  qsort(times, (size_t)repeats, sizeof(double), compare_double);
  pbng_contact_detect_get_stats(det, &st);
  int64_t local[5] = {st.surface_triangles, st.surface_vertices, st.candidates, records, st.halo_triangles}, total[5];
  PetscCallMPI(MPI_Allreduce(local, total, 5, MPI_INT64_T, MPI_SUM, comm));
  const double pairs = (double)total[0] * (double)total[1];
  double brute = NAN;
  if (size == 1 && pairs <= brute_limit) brute = all_pairs_seconds(pbng_contact_detector_surface(det), x);
  PetscCall(PetscPrintf(comm, "%5d %9" PRId64 " %9" PRId64 " %9.4f %10.5f %12.3e %12" PRId64 " %9.2e %9" PRId64 " %8" PRId64 " %10.3f\n", res, total[0], total[1], setup,
                        times[repeats / 2], times[repeats / 2] / (double)total[0] * 1e6, total[2], pairs, total[3], total[4], brute));
  if (csv && rank == 0)
    fprintf(csv, "%d,%d,%d,%" PRId64 ",%" PRId64 ",%.6f,%.6f,%.6f,%.6f,%" PRId64 ",%.0f,%" PRId64 ",%" PRId64 ",%.6f\n", res, size, omp_get_max_threads(), total[0], total[1], setup,
            times[repeats / 2], times[0], times[repeats - 1], total[2], pairs, total[3], total[4], brute);
  PetscCall(pbng_contact_detector_destroy(&det));
  PetscCall(PetscFree(x));
  PetscCall(PetscFree(times));
  PetscCall(pbng_halo_destroy(&halo));
  PetscCall(pbng_dmesh_destroy(&dm));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv)
{
  PetscInt sizes[16] = {11, 21, 31, 41, 51}, nsizes = 16, repeats = 5;
  PetscReal brute_limit = 2e8;
  char path[PETSC_MAX_PATH_LEN] = "";
  PetscBool has_csv = PETSC_FALSE, given;
  FILE *csv = NULL;
  int rank, size;

  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCallMPI(MPI_Comm_rank(PETSC_COMM_WORLD, &rank));
  PetscCallMPI(MPI_Comm_size(PETSC_COMM_WORLD, &size));
  PetscCall(PetscOptionsGetIntArray(NULL, NULL, "-sizes", sizes, &nsizes, &given));
  if (!given) nsizes = 5;
  PetscCall(PetscOptionsGetInt(NULL, NULL, "-repeats", &repeats, NULL));
  PetscCall(PetscOptionsGetReal(NULL, NULL, "-brute_limit", &brute_limit, NULL));
  PetscCall(PetscOptionsGetString(NULL, NULL, "-csv", path, sizeof(path), &has_csv));
  PetscCheck(repeats > 0, PETSC_COMM_WORLD, PETSC_ERR_ARG_OUTOFRANGE, "-repeats must be positive");
  if (has_csv && rank == 0) {
    csv = fopen(path, "w");
    PetscCheck(csv, PETSC_COMM_SELF, PETSC_ERR_FILE_OPEN, "cannot write %s", path);
    fprintf(csv, "res,ranks,threads,triangles,vertices,setup_s,detect_median_s,detect_min_s,detect_max_s,candidates,all_pairs,records,halo_triangles,"
                 "all_pairs_kernel_s\n");
  }
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "contact detection: two stacked Res-N blocks, d = h/2, gap d/2; %d rank(s) x %d thread(s), median of %d\n", size,
                        omp_get_max_threads(), (int)repeats));
  PetscCall(PetscPrintf(PETSC_COMM_WORLD, "%5s %9s %9s %9s %10s %12s %12s %9s %9s %8s %10s\n", "res", "triangles", "vertices", "setup_s", "detect_s", "us/triangle",
                        "candidates", "V*T", "records", "halo", "allpairs_s"));
  for (PetscInt k = 0; k < nsizes; ++k) PetscCall(bench_size(PETSC_COMM_WORLD, (int)sizes[k], (int)repeats, brute_limit, csv));
  if (csv) fclose(csv);
  PetscCall(PetscFinalize());
  return 0;
}
