/* A run's contacts (issue 17; docs/contact.md): set-up, detections, what each frame writes about them,
 * and their figures in the summary. */
#include "app/run_state.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Root attributes of a contact run (docs/output.md): contact_stiffness [k_n, k_t], contact_model,
 * contact_distance, obstacles [n][7] (kind, then its six parameters). */
static PetscErrorCode write_contact_attributes(run_state *st)
{
  const pbng_contact_options *o = &st->cfg->contact_opt;
  const double k[2] = {o->k_n, o->k_t}, d = st->contacts.opt.detect.distance;
  double obstacles[7 * PBNG_MAX_OBSTACLES + 1];

  PetscFunctionBeginUser;
  if (!st->out) PetscFunctionReturn(0); /* a restart writes them with its first run */
  PetscCall(pbng_output_root_doubles(st->out, "contact_stiffness", 2, k));
  PetscCall(pbng_output_root_string(st->out, "contact_model", o->unilateral ? "unilateral" : "spring"));
  PetscCall(pbng_output_root_doubles(st->out, "contact_distance", 1, &d));
  if (st->pb.geo.sheet) PetscCall(pbng_output_root_doubles(st->out, "contact_thickness", 1, &st->contacts.opt.detect.sheet_offset));
  for (int b = 0; b < o->detect.nobstacles; ++b) {
    obstacles[7 * b] = o->detect.obstacle[b].kind;
    for (int q = 0; q < 6; ++q) obstacles[7 * b + 1 + q] = o->detect.obstacle[b].p[q];
  }
  if (o->detect.nobstacles) PetscCall(pbng_output_root_doubles(st->out, "obstacles", 7 * o->detect.nobstacles, obstacles));
  PetscFunctionReturn(0);
}

/* "pbng, newton, ...": the values of -solver whose solvers handle contacts, for messages. */
static void contact_solver_names(char *buf, size_t len)
{
  size_t used = 0;
  buf[0] = 0;
  for (int k = 0; k < pbng_solver_count() && used < len; ++k) {
    const pbng_solver_ops *ops = pbng_solver_at(k);
    if (ops->kind.selectable && ops->kind.contacts) used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "", ops->name);
  }
}

/* ", sheets kept h apart" for runs with sheets (two-sided surfaces, -contact_thickness), else "". */
static const char *sheet_thickness(const run_state *st, char *buf, size_t len)
{
  buf[0] = 0;
  if (st->pb.geo.sheet) snprintf(buf, len, " (sheets: kept %g from them)", st->contacts.opt.detect.sheet_offset);
  return buf;
}

PetscErrorCode run_setup_contacts(run_state *st)
{
  const pbng_config *cfg = st->cfg;
  const pbng_solver_ops *ops = pbng_solver_resolve(cfg->solver, &cfg->solver_opt);
  char names[128], thickness[64];

  PetscFunctionBeginUser;
  if (!cfg->contact) PetscFunctionReturn(0);
  contact_solver_names(names, sizeof(names));
  PetscCheck(ops && ops->kind.contacts, st->comm, PETSC_ERR_SUP,
             "contacts (-contact, -contact_*, -obstacle): %s does not handle them yet (docs/contact.md); the solvers that do: -solver %s",
             ops ? ops->kind.chosen_by : cfg->solver, names);
  PetscCall(pbng_contacts_create(&st->dm, &st->halo, &cfg->contact_opt, &st->contacts));
  PetscCall(pbng_problem_attach_contacts(&st->pb, &st->contacts));
  PetscCall(write_contact_attributes(st));
  PetscCall(PetscPrintf(st->comm, "contacts: distance %g%s, %s, k_n %g, k_t %g, self-contact %s, %d obstacle(s), detection at frame starts%s\n",
                        st->contacts.opt.detect.distance, sheet_thickness(st, thickness, sizeof(thickness)), cfg->contact_opt.unilateral ? "unilateral" : "spring (rebuilt at each detection)",
                        cfg->contact_opt.k_n, cfg->contact_opt.k_t, cfg->contact_opt.detect.self ? "on" : "off", cfg->contact_opt.detect.nobstacles,
                        cfg->contact_every > 0 ? " and every -contact_every iterations" : ""));
  PetscFunctionReturn(0);
}

PetscErrorCode run_detect_contacts(run_state *st)
{
  PetscFunctionBeginUser;
  if (!st->cfg->contact) PetscFunctionReturn(0);
  PetscCall(pbng_problem_update_contacts(&st->pb));
  const pbng_contacts_stats *s = &st->contacts.stats;
  st->contact_seconds[0] += s->detect_seconds, st->contact_seconds[1] += s->recolor_seconds, st->contact_seconds[2] += s->build_seconds;
  if (s->contacts > st->contacts_max) st->contacts_max = s->contacts;
  PetscFunctionReturn(0);
}

/* A contact row of the output: its key and what the table holds. */
typedef struct {
  int64_t vertex, kind, key;
  int64_t triangle[3];
  double weights[3], normal[3], target[3], gap;
} contact_row;

static int compare_rows(const void *a, const void *b)
{
  const contact_row *x = a, *y = b;
  if (x->vertex != y->vertex) return (x->vertex > y->vertex) - (x->vertex < y->vertex);
  if (x->kind != y->kind) return (x->kind > y->kind) - (x->kind < y->kind);
  return (x->key > y->key) - (x->key < y->key);
}

/* This rank's counted contacts as rows: the vertex, the triangle's corners (-1 unused) with their
 * barycentric weights (the negated signed weights), the normal, the obstacle's anchor, and the gap
 * n.C at the current positions (negative: on the wrong side). */
static PetscErrorCode counted_rows(const pbng_contacts *ct, const double *x, int64_t *n, contact_row **rows)
{
  PetscFunctionBeginUser;
  *n = 0;
  for (int32_t k = 0; k < ct->n; ++k) *n += ct->counted[k];
  PetscCall(PetscMalloc1(*n + 1, rows));
  int64_t m = 0;
  for (int32_t k = 0; k < ct->n; ++k) {
    if (!ct->counted[k]) continue;
    const pbng_weak_constraint *c = &ct->term[k];
    contact_row *r = &(*rows)[m++];
    double C[3];
    memset(r, 0, sizeof(*r));
    r->vertex = ct->key[k][0], r->kind = ct->key[k][1], r->key = ct->key[k][2];
    r->triangle[0] = r->triangle[1] = r->triangle[2] = -1;
    for (int j = 1; j < c->nnodes; ++j) r->triangle[j - 1] = pbng_contacts_node_gid(ct, (int32_t)c->node[j]), r->weights[j - 1] = -c->a[j];
    pbng_weak_constraint_violation(c, x, C);
    for (int d = 0; d < 3; ++d) r->normal[d] = c->n[d], r->target[d] = c->target[d];
    r->gap = c->n[0] * C[0] + c->n[1] * C[1] + c->n[2] * C[2];
  }
  PetscFunctionReturn(0);
}

static int compare_keys(const void *a, const void *b) { return pbng_contact_key_compare(a, b); }

/* The global row of each of this rank's rows, in the order of the keys over the job: every rank learns
 * every key (the contacts are few beside the mesh). Rows are sorted here. */
static PetscErrorCode global_rows(MPI_Comm comm, int64_t n, contact_row *rows, int64_t *N, int64_t **index)
{
  int size, *counts, *displ;
  int64_t(*keys)[3], (*all)[3];

  PetscFunctionBeginUser;
  PetscCallMPI(MPI_Comm_size(comm, &size));
  qsort(rows, (size_t)n, sizeof(contact_row), compare_rows);
  PetscCheck(3 * n < INT32_MAX, PETSC_COMM_SELF, PETSC_ERR_SUP, "contact output: too many contacts on one rank");
  PetscCall(PetscMalloc2(size, &counts, size + 1, &displ));
  const int mine = (int)(3 * n);
  PetscCallMPI(MPI_Allgather(&mine, 1, MPI_INT, counts, 1, MPI_INT, comm));
  displ[0] = 0;
  for (int r = 0; r < size; ++r) displ[r + 1] = displ[r] + counts[r];
  *N = displ[size] / 3;
  PetscCall(PetscMalloc2(n + 1, &keys, *N + 1, &all));
  for (int64_t k = 0; k < n; ++k) keys[k][0] = rows[k].vertex, keys[k][1] = rows[k].kind, keys[k][2] = rows[k].key;
  PetscCallMPI(MPI_Allgatherv(keys, mine, MPI_INT64_T, all, counts, displ, MPI_INT64_T, comm));
  qsort(all, (size_t)*N, sizeof(all[0]), compare_keys);
  PetscCall(PetscMalloc1(n + 1, index));
  for (int64_t k = 0; k < n; ++k) {
    const int64_t(*at)[3] = bsearch(keys[k], all, (size_t)*N, sizeof(all[0]), compare_keys);
    (*index)[k] = at - all;
  }
  PetscCall(PetscFree2(keys, all));
  PetscCall(PetscFree2(counts, displ));
  PetscFunctionReturn(0);
}

/* /frames/NNNNNN/contacts/{vertex, triangle, weights, normal, target, gap} in key order. */
static PetscErrorCode write_contact_table(run_state *st, int frame)
{
  contact_row *rows;
  int64_t n, N, *index;
  char path[96];

  PetscFunctionBeginUser;
  PetscCall(counted_rows(&st->contacts, st->pb.x, &n, &rows));
  PetscCall(global_rows(st->comm, n, rows, &N, &index));
  int64_t *ints;
  double *reals;
  PetscCall(PetscMalloc2(3 * n + 1, &ints, 3 * n + 1, &reals));
#define COLUMN_INT(name, ncol, expr)                                                                                                   \
  do {                                                                                                                                 \
    for (int64_t k = 0; k < n; ++k)                                                                                                    \
      for (int c = 0; c < (ncol); ++c) ints[(ncol) * k + c] = (expr);                                                                  \
    snprintf(path, sizeof(path), "/frames/%06d/contacts/%s", frame, name);                                                             \
    PetscCall(pbng_output_write_table(st->out, path, PBNG_OUTPUT_INT64, N, ncol, n, index, ints));                                     \
  } while (0)
#define COLUMN_REAL(name, ncol, expr)                                                                                                  \
  do {                                                                                                                                 \
    for (int64_t k = 0; k < n; ++k)                                                                                                    \
      for (int c = 0; c < (ncol); ++c) reals[(ncol) * k + c] = (expr);                                                                 \
    snprintf(path, sizeof(path), "/frames/%06d/contacts/%s", frame, name);                                                             \
    PetscCall(pbng_output_write_table(st->out, path, PBNG_OUTPUT_DOUBLE, N, ncol, n, index, reals));                                   \
  } while (0)
  COLUMN_INT("vertex", 1, rows[k].vertex);
  COLUMN_INT("obstacle", 1, rows[k].kind == PBNG_CONTACT_OBSTACLE ? rows[k].key : -1);
  COLUMN_INT("triangle", 3, rows[k].triangle[c]);
  COLUMN_REAL("weights", 3, rows[k].weights[c]);
  COLUMN_REAL("normal", 3, rows[k].normal[c]);
  COLUMN_REAL("target", 3, rows[k].target[c]);
  COLUMN_REAL("gap", 1, rows[k].gap);
#undef COLUMN_INT
#undef COLUMN_REAL
  PetscCall(PetscFree2(ints, reals));
  PetscCall(PetscFree(index));
  PetscCall(PetscFree(rows));
  PetscFunctionReturn(0);
}

/* in_contact (1 for a node of a contact in force) and the current colors, per owned node in output order. */
static PetscErrorCode write_node_fields(run_state *st, int frame)
{
  const pbng_dmesh *dm = &st->dm;
  uint8_t *mark;
  int32_t *in_contact, *color;

  PetscFunctionBeginUser;
  PetscCall(PetscMalloc1(dm->nlocal + st->contacts.nghost + 1, &mark));
  PetscCall(PetscMalloc2(dm->nowned + 1, &in_contact, dm->nowned + 1, &color));
  pbng_contacts_mark_nodes(&st->contacts, mark);
  for (int32_t k = 0; k < dm->nowned; ++k) {
    const int32_t i = st->node_order[k];
    in_contact[k] = mark[i], color[k] = st->contacts.color[i];
  }
  PetscCall(pbng_output_write_frame_nodes_int32(st->out, frame, "in_contact", dm->nowned, st->node_rows, in_contact));
  PetscCall(pbng_output_write_frame_nodes_int32(st->out, frame, "node_color", dm->nowned, st->node_rows, color));
  PetscCall(PetscFree2(in_contact, color));
  PetscCall(PetscFree(mark));
  PetscFunctionReturn(0);
}

PetscErrorCode run_write_frame_contacts(run_state *st, int frame)
{
  PetscFunctionBeginUser;
  if (!st->cfg->contact) PetscFunctionReturn(0);
  PetscCall(write_contact_table(st, frame));
  PetscCall(write_node_fields(st, frame));
  PetscFunctionReturn(0);
}

void run_summarize_contacts(const run_state *st, pbng_run_summary *sum)
{
  if (!st->cfg->contact) return;
  sum->contact = 1;
  sum->contacts_last = st->contacts.stats.contacts;
  sum->contacts_max = st->contacts_max;
  sum->contact_detect_seconds = st->contact_seconds[0];
  sum->contact_recolor_seconds = st->contact_seconds[1];
  sum->contact_update_seconds = st->contact_seconds[2];
}

/* ---- checkpoints ------------------------------------------------------------------------------------- */

/* The set is rebuilt, not stored: the positions of the last detection (and its time, for the prescribed
 * nodes), the job's recolored nodes and its deep pairs, from which the same detection gives the same contacts,
 * colors, schedule and halo (pbng_contacts_restore). Fields: contact_detect (nodes, 3), contact_state (t, n, m),
 * contact_recolored (n gid, color pairs; one 0 when there are none), contact_deep (m vertex gid, triangle key pairs;
 * one 0 when there are none). */
PetscErrorCode run_contact_state_fields(run_state *st, pbng_state_field *fields, int *n, double **buf)
{
  const pbng_contacts *ct = &st->contacts;
  pbng_contact_deep_pair *deep;
  int32_t ndeep;

  PetscFunctionBeginUser;
  *buf = NULL;
  if (!st->cfg->contact) PetscFunctionReturn(0);
  PetscCall(pbng_contacts_gather_deep(ct, &ndeep, &deep));
  const int64_t m = 2 * (int64_t)ct->nrecolored, md = 2 * (int64_t)ndeep;
  PetscCall(PetscMalloc1(3 + (m ? m : 1) + (md ? md : 1), buf));
  double *state = *buf, *pairs = state + 3, *dpairs = pairs + (m ? m : 1);
  state[0] = ct->t_detect, state[1] = ct->nrecolored, state[2] = ndeep;
  for (int32_t k = 0; k < ct->nrecolored; ++k) pairs[2 * k] = (double)ct->recolored_gid[k], pairs[2 * k + 1] = ct->recolored_color[k];
  if (m == 0) pairs[0] = 0;
  for (int32_t k = 0; k < ndeep; ++k) dpairs[2 * k] = (double)deep[k].vertex_gid, dpairs[2 * k + 1] = (double)deep[k].key;
  if (md == 0) dpairs[0] = 0;
  PetscCall(PetscFree(deep));
  pbng_state_add(fields, n, "contact_detect", PBNG_FIELD_NODES, 3, st->dm.nowned, st->dm.nowned, ct->x_detect);
  pbng_state_add(fields, n, "contact_state", PBNG_FIELD_SCALARS, 3, 3, 3, state);
  pbng_state_add(fields, n, "contact_recolored", PBNG_FIELD_SCALARS, (int)(m ? m : 1), m ? m : 1, m ? m : 1, pairs);
  pbng_state_add(fields, n, "contact_deep", PBNG_FIELD_SCALARS, (int)(md ? md : 1), md ? md : 1, md ? md : 1, dpairs);
  PetscFunctionReturn(0);
}

PetscErrorCode run_load_contact_state(run_state *st)
{
  pbng_contacts *ct = &st->contacts;
  pbng_state_field f[2];
  double state[3];
  int n = 0;

  PetscFunctionBeginUser;
  if (!st->cfg->contact) PetscFunctionReturn(0);
  pbng_state_add(f, &n, "contact_detect", PBNG_FIELD_NODES, 3, st->dm.nowned, st->dm.nowned, ct->x_detect);
  pbng_state_add(f, &n, "contact_state", PBNG_FIELD_SCALARS, 3, 3, 3, state);
  PetscCall(pbng_checkpoint_read_fields(&st->dm, st->restart, n, f));
  const int32_t nrec = (int32_t)state[1], ndeep = (int32_t)state[2];
  const int64_t m = 2 * (int64_t)nrec, md = 2 * (int64_t)ndeep;
  double *pairs, *dpairs;
  int64_t *recolored;
  pbng_contact_deep_pair *deep;
  PetscCall(PetscMalloc2(m + 1, &pairs, md + 1, &dpairs));
  PetscCall(PetscMalloc2(m + 1, &recolored, ndeep + 1, &deep));
  n = 0;
  pbng_state_add(f, &n, "contact_recolored", PBNG_FIELD_SCALARS, (int)(m ? m : 1), m ? m : 1, m ? m : 1, pairs);
  pbng_state_add(f, &n, "contact_deep", PBNG_FIELD_SCALARS, (int)(md ? md : 1), md ? md : 1, md ? md : 1, dpairs);
  PetscCall(pbng_checkpoint_read_fields(&st->dm, st->restart, n, f));
  for (int64_t k = 0; k < m; ++k) recolored[k] = (int64_t)pairs[k];
  for (int32_t k = 0; k < ndeep; ++k) deep[k] = (pbng_contact_deep_pair){(int64_t)dpairs[2 * k], (int64_t)dpairs[2 * k + 1]};
  ct->t_detect = state[0];
  pbng_problem_prescribed_positions(&st->pb, ct->t_detect, ct->x_detect); /* as they were at that detection */
  PetscCall(pbng_contacts_restore(ct, &st->halo, recolored, nrec, ndeep, deep, st->pb.x));
  PetscCall(PetscFree2(recolored, deep));
  PetscCall(PetscFree2(pairs, dpairs));
  PetscFunctionReturn(0);
}
