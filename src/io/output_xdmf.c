/* The result file's XDMF companion (ParaView opens it): the mesh, the node datasets and one
 * temporal grid per frame, pointing into the HDF5 file. Written by rank 0 at close. The topology
 * draws the cells of out->form: sheets' tri3 as Triangle cells, their bend4 stencils as none (they
 * stay in /mesh/elements only); the XDMF has node attributes only, so no per-cell array has to follow
 * the drawn cells. */
#include "io/output_private.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>

static void xml_escaped(FILE *f, const char *s)
{
  for (; *s; ++s) {
    switch (*s) {
    case '&': fputs("&amp;", f); break;
    case '<': fputs("&lt;", f); break;
    case '>': fputs("&gt;", f); break;
    case '"': fputs("&quot;", f); break;
    case '\'': fputs("&apos;", f); break;
    default: fputc(*s, f);
    }
  }
}

static void xdmf_dataitem(FILE *f, const char *h5base, const char *dset, const char *numtype, int prec, int64_t rows,
                          int ncols, const char *indent)
{
  fprintf(f, "%s<DataItem Format=\"HDF\" NumberType=\"%s\" Precision=\"%d\" Dimensions=\"%" PRId64, indent, numtype,
          prec, rows);
  if (ncols > 1) fprintf(f, " %d", ncols);
  fputs("\">", f);
  xml_escaped(f, h5base);
  fprintf(f, ":%s</DataItem>\n", dset);
}

static void xdmf_frame(FILE *f, const pbng_output *out, const char *h5base, const frame_entry *fr)
{
  char pos[48];

  snprintf(pos, sizeof pos, "/frames/%06d/positions", fr->index);
  fprintf(f, "      <Grid Name=\"frame_%06d\" GridType=\"Uniform\">\n", fr->index);
  fprintf(f, "        <Time Value=\"%.17g\"/>\n", fr->time);
  if (out->have_elements && out->xdmf_elements > 0) { /* no Topology where no element has a cell (bend4 alone) */
    fputs("        <Topology TopologyType=\"", f);
    xml_escaped(f, out->topology);
    fprintf(f, "\" NumberOfElements=\"%" PRId64 "\"", out->xdmf_elements);
    if (!out->mixed) fprintf(f, " NodesPerElement=\"%d\"", out->xdmf_nodes);
    fputs(">\n", f);
    xdmf_dataitem(f, h5base, out->xdmf_cells ? "/mesh/xdmf_cells" : out->elements_path, "Int", 8, out->xdmf_ncells, out->xdmf_nodes,
                  "          ");
    fputs("        </Topology>\n", f);
  }
  fputs("        <Geometry GeometryType=\"XYZ\">\n", f);
  xdmf_dataitem(f, h5base, pos, "Float", 8, out->nnodes, 3, "          ");
  fputs("        </Geometry>\n", f);
  for (int i = 0; i < out->nnodesets; ++i) {
    const node_dataset *d = &out->nodesets[i];
    if (d->ncols != 1 && d->ncols != 3) continue;
    fprintf(f, "        <Attribute Name=\"");
    xml_escaped(f, d->name);
    fprintf(f, "\" AttributeType=\"%s\" Center=\"Node\">\n", d->ncols == 1 ? "Scalar" : "Vector");
    char path[160];
    if (d->per_frame) snprintf(path, sizeof path, "/frames/%06d/%s", fr->index, d->path);
    xdmf_dataitem(f, h5base, d->per_frame ? path : d->path, d->is_int ? "Int" : "Float", d->is_int ? 4 : 8, out->nnodes, d->ncols, "          ");
    fputs("        </Attribute>\n", f);
  }
  fputs("      </Grid>\n", f);
}

/* Rank 0: writes "<xdmf>.partial". Returns 0 or an errno-like code; reason filled on failure. */
int output_write_xdmf(const pbng_output *out, char *reason, size_t len)
{
  const char *slash = strrchr(out->path, '/');
  const char *h5base = slash ? slash + 1 : out->path;
  FILE *f = fopen(out->xdmf_partial, "w");

  if (!f) {
    snprintf(reason, len, "cannot create '%s': %s", out->xdmf_partial, strerror(errno));
    return 1;
  }
  fputs("<?xml version=\"1.0\" ?>\n<!DOCTYPE Xdmf SYSTEM \"Xdmf.dtd\" []>\n", f);
  fputs("<Xdmf Version=\"3.0\">\n  <Domain>\n", f);
  fputs("    <Grid Name=\"pbng\" GridType=\"Collection\" CollectionType=\"Temporal\">\n", f);
  for (int i = 0; i < out->nframes; ++i) xdmf_frame(f, out, h5base, &out->framelist[i]);
  fputs("    </Grid>\n  </Domain>\n</Xdmf>\n", f);
  if (ferror(f) | (fclose(f) != 0)) {
    snprintf(reason, len, "cannot write '%s': %s", out->xdmf_partial, strerror(errno));
    return 1;
  }
  return 0;
}
