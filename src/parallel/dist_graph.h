/* The node graph of a mesh that no process holds whole (two nodes adjacent when they share an element or a weak
 * constraint, as in pbng_color_nodes's coloring; each node weighted by its incident elements + 1, as METIS's graph in
 * parallel/partition.c), built from the processes' slices (mesh/slice.h): every process holds the rows of its slice's
 * node range. The elements and weak constraints of a slice that touch another process's node range are sent there
 * (one all-to-all each); each process then lists its nodes' incident elements and constraints and their other nodes.
 * Also the pieces other graphs of the slices are built from (the PBD/XPBD element graph, the weak constraints'
 * graphs): (row, neighbour) pairs sent to the rows' processes. */
#ifndef PBNG_PARALLEL_DIST_GRAPH_H
#define PBNG_PARALLEL_DIST_GRAPH_H

#include <mpi.h>
#include <petscsys.h>
#include "mesh/slice.h"

typedef struct {
  MPI_Comm comm;
  int rank, size;
  int64_t nglobal;  /* nodes in all */
  int64_t *range;   /* [size + 1]: process r holds rows range[r] .. range[r + 1] (the slices' node ranges) */
  int64_t nrows;    /* this process's rows: range[rank + 1] - range[rank] */
  PetscInt *start;  /* [nrows + 1] row i's neighbours are adj[start[i] .. start[i + 1]) */
  PetscInt *adj;    /* global ids, increasing within a row, the row's own node left out */
  PetscInt *weight; /* [nrows] incident elements + 1 */
} pbng_dist_graph;

/* Collective: the graph of the slices' mesh (every process passes its own slice). */
PetscErrorCode pbng_dist_graph_build(MPI_Comm comm, const pbng_mesh_slice *s, pbng_dist_graph *g);
/* Starts a graph of nglobal vertices (what names them: "node", "element", for the message) on comm: rank, size, counts;
 * an error beyond PetscInt. */
PetscErrorCode pbng_dist_graph_start(MPI_Comm comm, int64_t nglobal, const char *what, pbng_dist_graph *g);
PetscErrorCode pbng_dist_graph_destroy(pbng_dist_graph *g);

/* Collective: every slice's node range, *range[size + 1] (PetscMalloc'd): process r holds nodes (*range)[r] .. (*range)[r + 1]. */
PetscErrorCode pbng_slice_ranges(MPI_Comm comm, const pbng_mesh_slice *s, int64_t **range);
/* Collective: the same for the slices' element ranges (process r holds elements (*range)[r] .. (*range)[r + 1]). */
PetscErrorCode pbng_slice_element_ranges(MPI_Comm comm, const pbng_mesh_slice *s, int64_t **range);

/* Collective: the same for the slices' weak-constraint ranges. */
PetscErrorCode pbng_slice_weak_ranges(MPI_Comm comm, const pbng_mesh_slice *s, int64_t **range);

/* A pair of global ids sent to another process, e.g. (node, element) to a node's process, (element, neighbour) to an
 * element's process. */
typedef struct {
  int64_t key, value;
} pbng_id_pair;
/* The n pairs grouped by key - first (every key in [first, first + nrows): else an error naming what): CSR
 * *start[nrows + 1], *value the pairs' values row by row (PetscMalloc'd). */
PetscErrorCode pbng_group_pairs(int64_t n, const pbng_id_pair *pairs, int64_t first, int64_t nrows, const char *what, int64_t **start, int64_t **value);
/* Collective: for each node of this process's range (node_range as pbng_slice_ranges's), the ids of the rows it lies
 * in among every process's n rows[n][width] of node ids (-1: padding) with ids first .. first + n - 1: CSR *start,
 * *item (PetscMalloc'd). */
PetscErrorCode pbng_rows_by_node(MPI_Comm comm, const int64_t *node_range, int64_t n, int width, const int32_t *rows, int64_t first, const char *what,
                                 int64_t **start, int64_t **item);
/* Collective: for each of nnodes nodes, every pair (x, y) of an x of its list a and a y of its list b (CSR astart, a
 * and bstart, b), x != y, sent to the process of x's row in g (g->range); *recv (PetscMalloc'd) the *nrecv pairs sent
 * here, e.g. the elements around each node to each other (a = b: the element graph). */
PetscErrorCode pbng_send_pairs_at_nodes(const pbng_dist_graph *g, int64_t nnodes, const int64_t *astart, const int64_t *a, const int64_t *bstart,
                                        const int64_t *b, int64_t *nrecv, pbng_id_pair **recv);
/* g->start and g->adj (g->range and g->nrows set) from n (row, neighbour) pairs received here, each row's neighbours
 * sorted, each once (a pair may come several times). */
PetscErrorCode pbng_dist_graph_fill_pairs(pbng_dist_graph *g, int64_t n, const pbng_id_pair *pairs, const char *what);

/* The process whose range holds global node id (range: [size + 1], increasing). */
int pbng_range_owner(const int64_t *range, int size, int64_t id);

/* The nodes a slice's elements and weak constraints use outside its own node range: *ids[*n] (PetscMalloc'd), increasing,
 * each once. */
PetscErrorCode pbng_slice_foreign_nodes(const pbng_mesh_slice *s, PetscInt *n, PetscInt **ids);

/* What a process says about one of its range's nodes (local: its index in the range) into item. */
typedef void (*pbng_node_answer)(void *ctx, int64_t local, void *item);
/* Collective: out[k] (items of `size` bytes) what the process whose range holds ids[k] answers about it (ids
 * increasing, so grouped by process; range as pbng_slice_ranges's). */
PetscErrorCode pbng_ask_range_owners(MPI_Comm comm, const int64_t *range, PetscInt n, const PetscInt *ids, size_t size, pbng_node_answer answer,
                                     void *ctx, void *out);

#endif
