#!/usr/bin/env python3
"""pbng-convert: a Gmsh 4.1 ASCII tetrahedral mesh to an HDF5 mesh (docs/output.md#hdf5-mesh-input), streamed.

The output has the layout pbng reads with -mesh FILE.h5, whole on one rank or in slices on every rank with
-partitioner ptscotch (io/mesh_h5.h):
  /mesh/rest_positions float64 [N, 3]  nodes numbered 0.. in order of appearance (as pbng's Gmsh reader numbers them)
  /mesh/tetrahedra     int64   [M, 4]  the linear tetrahedra (type 4) in file order
  /sets/<name>         int64   [K]     every physical group's nodes (the nodes of its elements), sorted; named by
                                       $PhysicalNames, else physical_<tag> (as pbng's Gmsh reader names them)
  root attributes element = "tet4", source = the Gmsh file's name.

Streaming: the sections are read in order, a block of at most --chunk lines at a time, and written as they come.
Memory: the chunk's lines and arrays, plus one int32 per node tag in [minNodeTag, maxNodeTag] (tags to indices: 4 bytes a
node when tags are dense) and the physical groups' nodes (boundary groups: small; a volume group holds every node of
its elements until the end). The mesh itself is never held.

Refused, with a message naming the file and line: other formats (MSH 2.2, binary 4.1: pbng reads them itself, serially),
volume elements other than linear tetrahedra, sheet meshes (triangles without volume elements), parametric nodes,
element node tags that no $Nodes line defines. Validation (degenerate, inverted elements) is pbng's, when it reads the file.
"""
import argparse
import itertools
import os
import resource
import sys
import time

import h5py
import numpy as np

# Gmsh element types and their node counts: the linear tetrahedron, and what only feeds physical groups (points;
# lines, triangles and quadrangles up to order 3), as pbng's Gmsh reader accepts them.
TET4 = 4
GROUP_ONLY = {15: 1, 1: 2, 8: 3, 26: 4, 2: 3, 9: 6, 21: 10, 3: 4, 10: 9, 16: 8}
VOLUME_TYPES = {4, 11, 29, 5, 12, 6, 7, 17, 18, 19, 13, 14, 92, 93}


class ConvertError(Exception):
    pass


class Reader:
    """Lines of the Gmsh file with their numbers, for messages."""

    def __init__(self, path):
        self.path = path
        self.f = open(path, "r", encoding="ascii", errors="replace")
        self.lineno = 0

    def line(self):
        text = self.f.readline()
        if not text:
            raise ConvertError(f"{self.path}:{self.lineno}: unexpected end of file")
        self.lineno += 1
        return text

    def lines(self, n):
        block = list(itertools.islice(self.f, n))
        if len(block) < n:
            raise ConvertError(f"{self.path}:{self.lineno + len(block)}: unexpected end of file ({n - len(block)} lines missing)")
        self.lineno += n
        return block

    def ints(self, what):
        try:
            return [int(v) for v in self.line().split()]
        except ValueError:
            raise ConvertError(f"{self.path}:{self.lineno}: {what}: not integers") from None

    def fail(self, message):
        raise ConvertError(f"{self.path}:{self.lineno}: {message}")


def numbers(reader, block, dtype, ncols, what):
    """The lines of a block as an [n, ncols] array (every line the same number of values)."""
    values = np.array(" ".join(block).split(), dtype=np.float64 if dtype == float else np.int64) if block else np.zeros(0)
    if values.size != len(block) * ncols:
        reader.fail(f"{what}: {values.size} values on the {len(block)} lines before this one, expected {ncols} a line")
    return values.reshape(len(block), ncols)


def skip_section(reader, name):
    end = "$End" + name[1:]
    while reader.line().strip() != end:
        pass


def read_format(reader):
    if reader.line().strip() != "$MeshFormat":
        reader.fail("not a Gmsh file (no $MeshFormat)")
    fields = reader.line().split()
    if len(fields) < 2 or fields[0] != "4.1" or fields[1] != "0":
        reader.fail(f"MSH {' '.join(fields[:2])}: pbng-convert streams MSH 4.1 ASCII (pbng reads MSH 2.2 and binary files itself, "
                    "serially; gmsh -format msh41 -save_all 0 writes 4.1 ASCII)")
    skip_section(reader, "$MeshFormat")


def read_physical_names(reader, names):
    for _ in range(int(reader.line())):
        fields = reader.line().split(maxsplit=2)
        names[(int(fields[0]), int(fields[1]))] = fields[2].strip().strip('"')
    skip_section(reader, "$PhysicalNames")


def read_entities(reader, physical):
    """physical[(dim, tag)]: the entity's physical tags."""
    counts = reader.ints("entity counts")
    for dim, count in enumerate(counts[:4]):
        for _ in range(count):
            fields = reader.line().split()
            at = 4 if dim == 0 else 7  # a point: tag x y z; else tag and a bounding box
            nphys = int(fields[at])
            physical[(dim, int(fields[0]))] = [int(v) for v in fields[at + 1:at + 1 + nphys]]
    skip_section(reader, "$Entities")


def read_nodes(reader, out, chunk):
    """Writes /mesh/rest_positions; returns the tag -> index map (int32, -1 where no node) and its first tag."""
    nblocks, nnodes, tag_lo, tag_hi = reader.ints("$Nodes header")
    index = np.full(max(tag_hi - tag_lo + 1, 0), -1, dtype=np.int32)
    X = out.create_dataset("/mesh/rest_positions", shape=(nnodes, 3), dtype="f8", chunks=(min(max(nnodes, 1), 65536), 3))
    at = 0
    for _ in range(nblocks):
        dim, tag, parametric, n = reader.ints("node block header")
        if parametric:
            reader.fail("parametric nodes are not converted")
        for k in range(0, n, chunk):  # the block's tags, then its coordinates
            tags = numbers(reader, reader.lines(min(chunk, n - k)), int, 1, "node tags")[:, 0]
            if tags.min() < tag_lo or tags.max() > tag_hi:
                reader.fail(f"node tags outside the header's {tag_lo}..{tag_hi}")
            index[tags - tag_lo] = np.arange(at + k, at + k + tags.size, dtype=np.int32)
        for k in range(0, n, chunk):
            m = min(chunk, n - k)
            X[at + k:at + k + m] = numbers(reader, reader.lines(m), float, 3, "node coordinates")
        at += n
    if at != nnodes:
        reader.fail(f"$Nodes: {at} nodes in the blocks, the header says {nnodes}")
    skip_section(reader, "$Nodes")
    return index, tag_lo


def read_elements(reader, out, index, tag_lo, physical, chunk):
    """Writes /mesh/tetrahedra; returns every physical group's nodes as {(dim, tag): [arrays]}."""
    nblocks = reader.ints("$Elements header")[0]
    tets = out.create_dataset("/mesh/tetrahedra", shape=(0, 4), maxshape=(None, 4), dtype="i8", chunks=(65536, 4))
    groups, ntri = {}, 0
    for _ in range(nblocks):
        dim, entity, etype, n = reader.ints("element block header")
        if etype != TET4 and etype not in GROUP_ONLY:
            what = "volume elements other than linear tetrahedra" if etype in VOLUME_TYPES else "an element type pbng does not read"
            reader.fail(f"element type {etype}: {what} (pbng reads them from the Gmsh file itself, serially)")
        nen = 4 if etype == TET4 else GROUP_ONLY[etype]
        ntri += n if etype == 2 else 0
        for k in range(0, n, chunk):
            rows = numbers(reader, reader.lines(min(chunk, n - k)), int, 1 + nen, "element")[:, 1:] - tag_lo
            if rows.size and (rows.min() < 0 or rows.max() >= index.size or (index[rows] < 0).any()):
                reader.fail("an element uses a node tag that no $Nodes line defines")
            nodes = index[rows].astype(np.int64)
            if etype == TET4:
                first = tets.shape[0]
                tets.resize(first + len(nodes), axis=0)
                tets[first:] = nodes
            for phys in physical.get((dim, entity), []):
                groups.setdefault((dim, phys), []).append(np.unique(nodes))
    if tets.shape[0] == 0:
        reader.fail("no linear tetrahedra" + (" (a sheet mesh: pbng reads it from the Gmsh file itself)" if ntri else ""))
    skip_section(reader, "$Elements")
    return groups


def convert(path, output, chunk, sets=True):
    reader, names, physical = Reader(path), {}, {}
    partial = output + ".partial"
    read_format(reader)
    with h5py.File(partial, "w") as out:
        index = groups = None
        while True:
            line = reader.f.readline()
            if not line:
                break
            reader.lineno += 1
            section = line.strip()
            if section == "$PhysicalNames":
                read_physical_names(reader, names)
            elif section == "$Entities":
                read_entities(reader, physical)
            elif section == "$Nodes":
                index, tag_lo = read_nodes(reader, out, chunk)
            elif section == "$Elements":
                if index is None:
                    reader.fail("$Elements before $Nodes")
                groups = read_elements(reader, out, index, tag_lo, physical, chunk)
            elif section.startswith("$") and not section.startswith("$End"):
                skip_section(reader, section)
        if groups is None:
            reader.fail("no $Nodes and $Elements sections")
        for (dim, tag), parts in sorted(groups.items()) if sets else ():
            name = names.get((dim, tag), f"physical_{tag}")
            out.create_dataset(f"/sets/{name}", data=np.unique(np.concatenate(parts)))
        out.attrs["element"] = np.bytes_("tet4")
        out.attrs["source"] = np.bytes_(os.path.basename(path))
        counts = out["/mesh/rest_positions"].shape[0], out["/mesh/tetrahedra"].shape[0], len(groups) if sets else 0
    os.replace(partial, output)
    return counts


def main():
    ap = argparse.ArgumentParser(prog="pbng-convert", description=__doc__.split("\n\n")[0])
    ap.add_argument("mesh", help="Gmsh 4.1 ASCII file (.msh)")
    ap.add_argument("output", help="HDF5 mesh to write (.h5)")
    ap.add_argument("--no-sets", action="store_true",
                    help="leave the physical groups out (pbng -partitioner ptscotch does not partition node sets yet)")
    ap.add_argument("--chunk", type=int, default=65536, help="lines parsed at a time (memory: about 200 bytes a line)")
    a = ap.parse_args()
    t0 = time.perf_counter()
    try:
        nnodes, ntets, nsets = convert(a.mesh, a.output, max(a.chunk, 1), not a.no_sets)
    except (ConvertError, OSError) as e:
        if os.path.exists(a.output + ".partial"):
            os.remove(a.output + ".partial")
        print(f"pbng-convert: error: {e}", file=sys.stderr)
        return 1
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"{a.mesh}: {nnodes} nodes, {ntets} tetrahedra, {nsets} node sets -> {a.output}")
    print(f"time: {time.perf_counter() - t0:.2f} s; peak memory {peak:.1f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
