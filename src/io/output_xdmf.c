/* The result file's XDMF companion (ParaView opens it): the mesh, the node datasets and one
 * temporal grid per frame, pointing into the HDF5 file, with the fields each frame holds. Written by
 * rank 0 at close. The topology draws the cells of out->form: sheets' tri3 as Triangle cells, their
 * bend4 stencils as none (they stay in /mesh/elements only), tet20 (and hex27 in a Mixed topology) as
 * linear sub-cells; a cell attribute (one row per element) is shown only where every element draws
 * exactly one cell, in element order (out->cell_per_element), and left out of the XDMF otherwise. */
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

/* The XDMF attribute type of a field's columns, NULL where it has none to show: node fields of 1 or 3
 * columns, cell fields of 1, 3, 6 (a symmetric tensor in Voigt order, shown as the full tensor:
 * xdmf_voigt_tensor) or 9 (a tensor, row-major). */
static const char *attribute_type(const output_field *d)
{
  switch (d->ncols) {
  case 1: return "Scalar";
  case 3: return "Vector";
  case 6: return d->cell ? "Tensor" : NULL;
  case 9: return d->cell ? "Tensor" : NULL;
  default: return NULL;
  }
}

/* A symmetric tensor stored as its Voigt 6-vector (xx, yy, zz, yz, xz, xy) shown as XDMF's 9-component
 * Tensor (row-major), joined from the dataset's columns. Not as a Tensor6: ParaView's XDMF Reader expands
 * a Tensor6 as (xx, xy, xz, yy, yz, zz) and its Xdmf3 readers keep VTK's (xx, yy, zz, xy, yz, xz), neither
 * the Voigt order, and no order satisfies both; the full tensor means the same to every reader (the Xdmf3
 * readers skip Function items: they show no such field). */
static void xdmf_voigt_tensor(FILE *f, const char *h5base, const char *dset, const char *numtype, int prec, int64_t rows)
{
  static const int voigt_column[9] = {0, 5, 4, 5, 1, 3, 4, 3, 2};

  fprintf(f, "          <DataItem ItemType=\"Function\" Function=\"JOIN($0, $1, $2, $3, $4, $5, $6, $7, $8)\" Dimensions=\"%" PRId64 " 9\">\n",
          rows);
  for (int k = 0; k < 9; ++k) {
    fprintf(f, "            <DataItem ItemType=\"HyperSlab\" Dimensions=\"%" PRId64 " 1\">\n", rows);
    fprintf(f, "              <DataItem Dimensions=\"3 2\" Format=\"XML\">0 %d 1 1 %" PRId64 " 1</DataItem>\n", voigt_column[k], rows);
    xdmf_dataitem(f, h5base, dset, numtype, prec, rows, 6, "              ");
    fputs("            </DataItem>\n", f);
  }
  fputs("          </DataItem>\n", f);
}

static void xdmf_frame(FILE *f, const pbng_output *out, const char *h5base, const frame_entry *fr)
{
  char pos[48];
  const PetscBool cells = out->have_elements && out->xdmf_elements > 0;

  snprintf(pos, sizeof pos, "/frames/%06d/positions", fr->index);
  fprintf(f, "      <Grid Name=\"frame_%06d\" GridType=\"Uniform\">\n", fr->index);
  fprintf(f, "        <Time Value=\"%.17g\"/>\n", fr->time);
  if (cells) { /* no Topology where no element has a cell (bend4 alone) */
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
  for (int i = 0; i < out->nfields; ++i) {
    const output_field *d = &out->fields[i];
    const char *type = attribute_type(d);
    if (!type || (d->per_frame && !(fr->fields >> d->slot & 1))) continue; /* a frame field: only in the frames holding it */
    if (d->cell && !(cells && out->cell_per_element)) continue; /* rows are elements, not the drawn cells (sub-cells, bend4) */
    fprintf(f, "        <Attribute Name=\"");
    xml_escaped(f, d->name);
    fprintf(f, "\" AttributeType=\"%s\" Center=\"%s\">\n", type, d->cell ? "Cell" : "Node");
    char path[160];
    const char *numtype = d->is_int ? "Int" : "Float";
    const int64_t rows = d->cell ? out->nelems : out->nnodes;
    if (d->per_frame) snprintf(path, sizeof path, "/frames/%06d/%s", fr->index, d->path);
    if (d->ncols == 6) xdmf_voigt_tensor(f, h5base, d->per_frame ? path : d->path, numtype, d->is_int ? 4 : 8, rows);
    else xdmf_dataitem(f, h5base, d->per_frame ? path : d->path, numtype, d->is_int ? 4 : 8, rows, d->ncols, "          ");
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
