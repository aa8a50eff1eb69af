"""Opens pbng's XDMF files with ParaView's XDMF reader and checks what ParaView makes of them.

Run: pvbatch check_paraview.py [OPTIONS] FILE.xdmf ... ; each option applies to the files after it:
  --box               the domain is the box the rest points span (its volume and boundary area known)
  --volume V --area A the domain's volume and boundary area (each optional)
  --reader NAME       XDMFReader (default), Xdmf3ReaderS or Xdmf3ReaderT
  --permute T:p0,...  a negative control: copies of the files (in a temporary folder) whose cells of
                      XDMF type T (a Mixed id such as 8, or a TopologyType such as Wedge) list node
                      p[k] of the file as their node k; the checks must then fail
Exit status 1 if any check fails (lines starting with FAIL).

At the first time step (the rest state), per cell of every VTK type present (a Mixed topology gives
several; the counts per type must match the XDMF topology):
  * its own VTK interpolation (vtkCell::EvaluateLocation) at sample parametric points against the map
    of its corners in that type's parametric coordinates (below): a wrong permutation of a quadratic
    cell moves its interior points; for the linear kinds the map is the cell's own, so this only shows
    that ParaView made the cell class expected (the orientation checks below catch their permutations);
  * the cell volume from VTK's face lists (each face oriented outward, by VTK's documentation):
    V = 1/3 sum_faces int x.n dA (exact for straight and bilinear faces), positive per cell;
  * ParaView's own judgement: the Cell Size filter's volume (vtkCellSizeFilter: VTK's triangulation
    of the cell, signed tetrahedra) and vtkCellValidator (faces oriented outward, convex, ...);
  * VTK's parametric Jacobian det(sum_i x_i (x) dN_i/dr) at the samples, sign as VTK defines it:
    positive for tetra, hexahedron and pyramid; NEGATIVE for a valid wedge (vtkWedge's base (0,1,2)
    faces away from (3,4,5), its parametric base r, s faces towards t: a left-handed map);
  * no corner outside the plane of one of its cell's faces (outward, convex; planar rest faces);
  * the total volume equals the domain's, and the boundary ParaView extracts (Extract Surface: faces
    of one cell only) has the domain's area: cells that do not fit together leave inner faces.
Point data at the first and last time step: every XDMF Attribute arrives under its name with the
right number of tuples and components, the points are the file's positions, and the arrays hold the
file's values (read with h5py from the HDF5 file the XDMF names).

VTK's parametric coordinates (vtkTetra, vtkQuadraticTetra, vtkHexahedron, vtkTriQuadraticHexahedron,
vtkWedge, vtkPyramid: InterpolationFunctions / GetParametricCoords in Common/DataModel):
  tetra     N = (1-r-s-t, r, s, t)
  hexa      trilinear, corners (0,0,0) (1,0,0) (1,1,0) (0,1,0) then the same at t = 1
  wedge     N = ((1-r-s)(1-t), r(1-t), s(1-t), (1-r-s)t, rt, st)
  pyramid   N = ((1-r)(1-s)(1-t), r(1-s)(1-t), rs(1-t), (1-r)s(1-t), t)
Faces (vtkTetra/vtkHexahedron/vtkWedge/vtkPyramid's face tables, outward):
  tetra (0,1,3) (1,2,3) (2,0,3) (0,2,1); hexa (0,4,7,3) (1,2,6,5) (0,1,5,4) (3,7,6,2) (0,3,2,1)
  (4,5,6,7); wedge (0,1,2) (3,5,4) (0,3,4,1) (1,4,5,2) (2,5,3,0); pyramid (0,3,2,1) (0,1,4) (1,2,4)
  (2,3,4) (3,0,4)."""
import sys
import os
import xml.etree.ElementTree as ET
import numpy as np
import paraview.simple as pvs
from paraview import servermanager
from vtkmodules.vtkCommonCore import reference
from vtkmodules.vtkFiltersGeneral import vtkCellValidator

TET, HEX, WEDGE, PYRAMID, QTET, TQHEX = 10, 12, 13, 14, 24, 29
NAMES = {TET: "tetra", HEX: "hexahedron", WEDGE: "wedge", PYRAMID: "pyramid", QTET: "quadratic tetra",
         TQHEX: "triquadratic hexahedron"}
# XDMF Mixed-topology ids (XdmfTopology) -> (VTK type, nodes)
XDMF_MIXED = {6: (TET, 4), 7: (PYRAMID, 5), 8: (WEDGE, 6), 9: (HEX, 8), 38: (QTET, 10), 50: (TQHEX, 27)}
XDMF_NAMED = {"Tetrahedron": TET, "Pyramid": PYRAMID, "Wedge": WEDGE, "Hexahedron": HEX,
              "Tetrahedron_10": QTET, "Hexahedron_27": TQHEX}
# The Cell Size filter of ParaView 5.11 (VTK 9.2) cannot measure these: it triangulates the cell and
# gets 2 points ("Number of points (2) is not divisible by 4 - skipping"), volume 0.
NO_CELL_SIZE = {TQHEX}
DET_SIGN = {TET: 1, QTET: 1, HEX: 1, TQHEX: 1, PYRAMID: 1, WEDGE: -1}
FACES = {
    TET: ((0, 1, 3), (1, 2, 3), (2, 0, 3), (0, 2, 1)),
    HEX: ((0, 4, 7, 3), (1, 2, 6, 5), (0, 1, 5, 4), (3, 7, 6, 2), (0, 3, 2, 1), (4, 5, 6, 7)),
    WEDGE: ((0, 1, 2), (3, 5, 4), (0, 3, 4, 1), (1, 4, 5, 2), (2, 5, 3, 0)),
    PYRAMID: ((0, 3, 2, 1), (0, 1, 4), (1, 2, 4), (2, 3, 4), (3, 0, 4)),
}
FACES[QTET], FACES[TQHEX] = FACES[TET], FACES[HEX]
SAMPLES = [(0.1, 0.2, 0.3), (0.25, 0.25, 0.25), (0.05, 0.6, 0.1)]  # inside every parametric domain


def corner_weights(ct, p):
    r, s, t = p
    if ct in (TET, QTET):
        return [1 - r - s - t, r, s, t]
    if ct in (HEX, TQHEX):
        return [(1-r)*(1-s)*(1-t), r*(1-s)*(1-t), r*s*(1-t), (1-r)*s*(1-t), (1-r)*(1-s)*t, r*(1-s)*t, r*s*t, (1-r)*s*t]
    if ct == WEDGE:
        return [(1-r-s)*(1-t), r*(1-t), s*(1-t), (1-r-s)*t, r*t, s*t]
    if ct == PYRAMID:
        return [(1-r)*(1-s)*(1-t), r*(1-s)*(1-t), r*s*(1-t), (1-r)*s*(1-t), t]
    raise ValueError("VTK cell type %d is not checked" % ct)


def face_volume(ct, P):
    """1/3 sum over the outward faces of int x.n dA: triangles exactly, quadrilaterals as bilinear
    patches (x.(x_u x x_v) has degree <= 2 per variable: 2x2 Gauss is exact)."""
    c = P[: len(corner_weights(ct, (0, 0, 0)))].mean(axis=0)
    g = (0.5 - 0.5 / 3 ** 0.5, 0.5 + 0.5 / 3 ** 0.5)
    v = 0.0
    for f in FACES[ct]:
        Q = P[list(f)] - c
        if len(f) == 3:
            v += np.dot(Q[0], np.cross(Q[1], Q[2])) / 6
            continue
        for u in g:
            for w in g:
                x = (1-u)*(1-w)*Q[0] + u*(1-w)*Q[1] + u*w*Q[2] + (1-u)*w*Q[3]
                xu = (1-w)*(Q[1] - Q[0]) + w*(Q[2] - Q[3])
                xw = (1-u)*(Q[3] - Q[0]) + u*(Q[2] - Q[1])
                v += np.dot(x, np.cross(xu, xw)) / 4 / 3
    return v


def outside_corners(ct, P, tol):
    """Corners on the outer side of a face's plane (Newell normal of the outward face): none for a
    convex, outward-oriented cell."""
    k = len(corner_weights(ct, (0, 0, 0)))
    bad = 0
    for f in FACES[ct]:
        Q = P[list(f)]
        n = np.sum([np.cross(Q[i], Q[(i + 1) % len(f)]) for i in range(len(f))], axis=0)
        n /= np.linalg.norm(n)
        bad += sum(1 for j in range(k) if j not in f and np.dot(P[j] - Q.mean(axis=0), n) > tol)
    return bad


def vtk_det(cell, p):
    n = cell.GetNumberOfPoints()
    d = [0.0] * (3 * n)
    cell.InterpolateDerivs(list(p), d)
    X = np.array([cell.GetPoints().GetPoint(i) for i in range(n)])
    return np.linalg.det(np.array(d).reshape(3, n) @ X)


class Report:
    def __init__(self):
        self.failed = 0

    def check(self, ok, what):
        if not ok:
            self.failed += 1
            print("FAIL: " + what)
        return ok


def xdmf_expectations(path):
    """From the XDMF: per grid its time, the topology's cells [(VTK type, node ids)], the positions'
    dataset and the attributes {name: (h5 dataset, rows, components)}."""
    root = ET.parse(path).getroot()
    base = os.path.dirname(path)
    grids = []
    for g in root.iter("Grid"):
        if g.get("GridType") != "Uniform":
            continue
        def item(node):
            it = node.find("DataItem")
            f, d = it.text.strip().rsplit(":", 1)
            return os.path.join(base, f), d, [int(x) for x in it.get("Dimensions").split()]
        attrs = {}
        for a in g.findall("Attribute"):
            if a.get("Center", "Node") != "Node":
                continue  # cell fields (plastic_strain, a Function of hyperslabs): not checked here
            f, d, dims = item(a)
            attrs[a.get("Name")] = (f, d, dims[0], dims[1] if len(dims) > 1 else 1)
        grids.append({"time": float(g.find("Time").get("Value")), "topology": g.find("Topology"),
                      "topo_item": item(g.find("Topology")), "geometry": item(g.find("Geometry")), "attrs": attrs})
    return grids


def h5_read(h5files, f, d):
    import h5py
    if f not in h5files:
        h5files[f] = h5py.File(f, "r")
    return h5files[f][d][()]


def expected_cells(grid, h5files):
    topo = grid["topology"]
    f, d, _ = grid["topo_item"]
    data = h5_read(h5files, f, d)
    if topo.get("TopologyType") == "Mixed":
        flat, cells, i = data.reshape(-1), [], 0
        while i < flat.size:
            ct, n = XDMF_MIXED[int(flat[i])]
            cells.append((ct, flat[i + 1: i + 1 + n].tolist()))
            i += 1 + n
        return cells
    ct = XDMF_NAMED[topo.get("TopologyType")]
    return [(ct, row.tolist()) for row in data.reshape(int(topo.get("NumberOfElements")), -1)]


def fetch(reader, t):
    reader.UpdatePipeline(t)
    d = servermanager.Fetch(reader)
    return d.GetBlock(0) if d.IsA("vtkMultiBlockDataSet") else d


def check_point_data(rep, name, blk, grid, h5files, label):
    f, d, dims = grid["geometry"]
    X = np.array([blk.GetPoint(i) for i in range(blk.GetNumberOfPoints())])
    rep.check(blk.GetNumberOfPoints() == dims[0], "%s %s: %d points, the XDMF geometry has %d" % (name, label, blk.GetNumberOfPoints(), dims[0]))
    if X.shape[0] == dims[0]:
        dev = np.abs(X - h5_read(h5files, f, d)).max()
        rep.check(dev == 0.0, "%s %s: ParaView's points differ from %s by %.3g" % (name, label, d, dev))
    pd = blk.GetPointData()
    got = sorted(pd.GetArrayName(i) for i in range(pd.GetNumberOfArrays()))
    rep.check(got == sorted(grid["attrs"]), "%s %s: point arrays %s, the XDMF has %s" % (name, label, got, sorted(grid["attrs"])))
    summary = []
    for aname, (f, d, rows, ncomp) in sorted(grid["attrs"].items()):
        a = pd.GetArray(aname)
        if a is None:
            continue
        rep.check(a.GetNumberOfTuples() == rows == blk.GetNumberOfPoints() and a.GetNumberOfComponents() == ncomp,
                  "%s %s: array %s has %d x %d values, expected %d x %d" % (name, label, aname, a.GetNumberOfTuples(), a.GetNumberOfComponents(), rows, ncomp))
        if a.GetNumberOfTuples() != rows or a.GetNumberOfComponents() != ncomp:
            continue
        v = np.array([a.GetTuple(i) for i in range(rows)]).reshape(rows, ncomp)
        ref = h5_read(h5files, f, d).reshape(rows, ncomp)
        rep.check(np.array_equal(v, ref), "%s %s: array %s differs from %s (max %.3g)" % (name, label, aname, d, np.abs(v - ref).max()))
        summary.append("%s %dx%d" % (aname, rows, ncomp))
    return summary


def check_file(rep, name, reader_name, volume, want_area, box):
    grids = xdmf_expectations(name)
    h5files = {}
    make = getattr(pvs, reader_name)
    path = os.path.abspath(name)  # the Xdmf3 readers resolve the HDF5 file wrongly from a bare file name
    reader = make(FileNames=[path]) if reader_name == "XDMFReader" else make(FileName=[path])
    times = list(reader.TimestepValues) if reader.TimestepValues else [0.0]
    rep.check(len(times) == len(grids), "%s: ParaView sees %d time steps, the XDMF has %d grids" % (name, len(times), len(grids)))
    blk = fetch(reader, times[0])
    ncell = blk.GetNumberOfCells()
    cells = expected_cells(grids[0], h5files)
    if not rep.check(ncell == len(cells) > 0, "%s: ParaView makes %d cells, the XDMF topology has %d" % (name, ncell, len(cells))):
        pvs.Delete(reader)
        return
    counts, dev, vol, vmin, det_min = {}, 0.0, 0.0, 1e300, 1e300
    conn_bad = invalid = nonconvex_vtk = outside = 0
    for i in range(ncell):
        c = blk.GetCell(i)
        ct, n = c.GetCellType(), c.GetNumberOfPoints()
        counts[ct] = counts.get(ct, 0) + 1
        ids = [c.GetPointId(k) for k in range(n)]
        if i < len(cells) and (ct, ids) != cells[i]:
            conn_bad += 1
        P = np.array([c.GetPoints().GetPoint(k) for k in range(n)])
        w = [0.0] * n
        for p in SAMPLES:
            x = [0.0, 0.0, 0.0]
            c.EvaluateLocation(reference(0), list(p), x, w)
            cw = corner_weights(ct, p)
            dev = max(dev, np.abs(np.array(x) - np.dot(cw, P[: len(cw)])).max())
            det_min = min(det_min, DET_SIGN[ct] * vtk_det(c, p))
        v = face_volume(ct, P)
        vol += v
        vmin = min(vmin, v)
        h = np.ptp(P, axis=0).max()
        state = vtkCellValidator.Check(c, 1e-9 * h)
        invalid += (state & ~vtkCellValidator.Nonconvex) != 0
        nonconvex_vtk += (state & vtkCellValidator.Nonconvex) != 0
        outside += outside_corners(ct, P, 1e-12 * h)
    rep.check(conn_bad == 0, "%s: %d cells differ from the XDMF topology's type and nodes" % (name, conn_bad))
    measured = [i for i in range(ncell) if blk.GetCellType(i) not in NO_CELL_SIZE]
    csv = np.array([np.nan])
    if measured:  # (it warns once per cell it cannot measure)
        size = pvs.CellSize(Input=reader, ComputeVertexCount=0, ComputeLength=0, ComputeArea=0, ComputeVolume=1)
        size.UpdatePipeline(times[0])
        sd = servermanager.Fetch(size)
        sd = sd.GetBlock(0) if sd.IsA("vtkMultiBlockDataSet") else sd
        arr = sd.GetCellData().GetArray("Volume")
        csv = np.array([arr.GetValue(i) for i in measured])
        pvs.Delete(size)
    csize, csize_min = csv.sum(), csv.min()
    outer = pvs.ExtractSurface(Input=reader)
    surf = pvs.CellSize(Input=outer, ComputeVertexCount=0, ComputeLength=0, ComputeArea=1, ComputeVolume=0)
    surf.UpdatePipeline(times[0])
    sf = servermanager.Fetch(surf)
    sf = sf.GetBlock(0) if sf.IsA("vtkMultiBlockDataSet") else sf
    area = sum(sf.GetCellData().GetArray("Area").GetValue(i) for i in range(sf.GetNumberOfCells()))
    X = np.array([blk.GetPoint(i) for i in range(blk.GetNumberOfPoints())])
    ext = np.ptp(X, axis=0)
    scale = ext.max()
    if box:
        volume = ext.prod()
        want_area = 2 * (ext[0] * ext[1] + ext[1] * ext[2] + ext[2] * ext[0])
    if want_area is not None:
        rep.check(abs(area - want_area) <= 1e-12 * want_area, "%s: boundary area %.15g, the domain's %.15g" % (name, area, want_area))
    rep.check(dev <= 1e-12 * scale, "%s: VTK interpolation differs from the corner map by %.3g" % (name, dev))
    rep.check(vmin > 0 and not csize_min <= 0 and det_min > 0,
              "%s: non-positive cells (face volume min %.3g, Cell Size min %.3g, signed VTK det J min %.3g)" % (name, vmin, csize_min, det_min))
    rep.check(invalid == 0, "%s: vtkCellValidator rejects %d cells (other than as non-convex)" % (name, invalid))
    rep.check(outside == 0, "%s: %d corners lie outside a face of their cell" % (name, outside))
    if volume is not None:
        rep.check(abs(vol - volume) <= 1e-12 * volume and (len(measured) < ncell or abs(csize - volume) <= 1e-12 * volume),
                  "%s: volume %.15g (Cell Size %.15g), the domain's %.15g" % (name, vol, csize, volume))
    arrays = check_point_data(rep, name, blk, grids[0], h5files, "t=%g" % times[0])
    if len(times) > 1:
        check_point_data(rep, name, fetch(reader, times[-1]), grids[-1], h5files, "t=%g" % times[-1])
    types = ", ".join("%d %s x %d" % (ct, NAMES.get(ct, "?"), counts[ct]) for ct in sorted(counts))
    if len(measured) < ncell:
        types += "; Cell Size of %d cells only (it cannot measure VTK %s)" % (len(measured), sorted(NO_CELL_SIZE))
    print("%s (%s): %d cells [VTK %s], max |VTK interpolation - corner map| %.2e, volume %.15g (Cell Size %.15g), "
          "min cell volume %.3g (Cell Size %.3g), min signed VTK det J %.3g, cells vtkCellValidator rejects %d "
          "(and calls non-convex %d; corners outside a face %d), boundary area %.15g, %d points, %d time steps, point data %s"
          % (name, reader_name, ncell, types, dev, vol, csize, vmin, csize_min, det_min, invalid, nonconvex_vtk, outside, area,
             blk.GetNumberOfPoints(), len(times), ", ".join(arrays)))
    for f in h5files.values():
        f.close()
    for proxy in (surf, outer):
        pvs.Delete(proxy)
    pvs.Delete(reader)


def permuted_copy(name, permute, folder):
    """A copy of the XDMF file and its HDF5 file in folder whose topology lists the nodes of the cells
    of the types in permute {XDMF type: p} as node k = the file's node p[k]; the cells and every
    dataset are read from the copy."""
    import h5py
    import shutil
    grid = xdmf_expectations(name)[0]
    h5path, dset, _ = grid["topo_item"]
    copy = os.path.join(folder, os.path.basename(h5path))
    shutil.copy(h5path, copy)
    with h5py.File(copy, "r+") as f:
        data = f[dset][()]
        topo = grid["topology"].get("TopologyType")
        if topo == "Mixed":
            flat, i = data.reshape(-1).copy(), 0
            while i < flat.size:
                t, n = int(flat[i]), XDMF_MIXED[int(flat[i])][1]
                if str(t) in permute:
                    flat[i + 1: i + 1 + n] = flat[i + 1 + np.array(permute[str(t)])]
                i += 1 + n
            data = flat.reshape(data.shape)
        elif topo in permute:
            data = data[:, permute[topo]]
        f[dset][...] = data
    out = os.path.join(folder, os.path.basename(name))
    shutil.copy(name, out)
    return out


def main(argv):
    import tempfile
    rep, volume, area, box, reader, permute = Report(), None, None, False, "XDMFReader", {}
    args = list(argv)
    with tempfile.TemporaryDirectory() as tmp:
        while args:
            a = args.pop(0)
            if a == "--volume":
                volume, box = float(args.pop(0)), False
            elif a == "--area":
                area, box = float(args.pop(0)), False
            elif a == "--box":
                volume, area, box = None, None, True
            elif a == "--reader":
                reader = args.pop(0)
            elif a == "--permute":
                t, p = args.pop(0).split(":")
                permute[t] = [int(x) for x in p.split(",")]
            else:
                check_file(rep, permuted_copy(a, permute, tmp) if permute else a, reader, volume, area, box)
    print("%d check(s) failed" % rep.failed if rep.failed else "all checks passed")
    return 1 if rep.failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
