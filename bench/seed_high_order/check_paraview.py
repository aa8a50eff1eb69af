"""Opens pbng's XDMF files with ParaView's XDMF reader and checks, per element kind, that the cells
ParaView builds interpolate the rest geometry correctly: at sample parametric points each cell's
own (VTK) interpolation must equal the affine/trilinear map of its corners (a wrong node permutation
moves interior points), and that the cell volumes (Jacobian determinants) are positive and sum to
the domain's volume. Run: pvbatch check.py FILE.xdmf ..."""
import sys
import itertools
from paraview.simple import XDMFReader, servermanager
from paraview import vtk as pvvtk
try:
    from vtkmodules.vtkCommonCore import reference
except ImportError:
    reference = pvvtk.reference

def corners_map(cell, p):
    n = cell.GetNumberOfPoints()
    ct = cell.GetCellType()
    P = [cell.GetPoints().GetPoint(i) for i in range(n)]
    if ct in (10, 24):  # tetra / quadratic tetra: barycentric (1-r-s-t, r, s, t)
        w = [1 - p[0] - p[1] - p[2], p[0], p[1], p[2]]
        return [sum(w[k] * P[k][d] for k in range(4)) for d in range(3)]
    if ct in (12, 29):  # hexahedron / triquadratic: trilinear on corners 0..7 (VTK order)
        r, s, t = p
        w = [(1-r)*(1-s)*(1-t), r*(1-s)*(1-t), r*s*(1-t), (1-r)*s*(1-t), (1-r)*(1-s)*t, r*(1-s)*t, r*s*t, (1-r)*s*t]
        return [sum(w[k] * P[k][d] for k in range(8)) for d in range(3)]
    raise ValueError(ct)

samples = [(0.1, 0.2, 0.3), (0.25, 0.25, 0.25), (0.05, 0.6, 0.1)]
for name in sys.argv[1:]:
    r = XDMFReader(FileNames=[name])
    r.UpdatePipeline(0.0)
    d = servermanager.Fetch(r)
    blk = d.GetBlock(0) if d.IsA("vtkMultiBlockDataSet") else d
    types = sorted(set(blk.GetCellType(i) for i in range(blk.GetNumberOfCells())))
    dev, vol, vmin = 0.0, 0.0, 1e300
    for i in range(blk.GetNumberOfCells()):
        c = blk.GetCell(i)
        w = [0.0] * c.GetNumberOfPoints()
        for p in samples:
            x = [0.0, 0.0, 0.0]
            c.EvaluateLocation(reference(0), list(p), x, w)
            y = corners_map(c, p)
            dev = max(dev, max(abs(x[k] - y[k]) for k in range(3)))
        # volume from the corners (straight-sided rest cells)
        P = [c.GetPoints().GetPoint(k) for k in range(c.GetNumberOfPoints())]
        def tetvol(a, b, cc, dd):
            u = [b[k]-a[k] for k in range(3)]; v = [cc[k]-a[k] for k in range(3)]; z = [dd[k]-a[k] for k in range(3)]
            return (u[0]*(v[1]*z[2]-v[2]*z[1]) - u[1]*(v[0]*z[2]-v[2]*z[0]) + u[2]*(v[0]*z[1]-v[1]*z[0])) / 6
        if c.GetCellType() in (10, 24):
            v = tetvol(P[0], P[1], P[2], P[3])
        else:  # hexahedron: 5 tets of its corners (VTK order)
            v = sum(tetvol(P[a], P[b], P[cc], P[dd]) for a, b, cc, dd in ((0,1,3,4),(1,2,3,6),(1,4,5,6),(3,4,6,7),(1,3,4,6)))
        vol += v; vmin = min(vmin, v)
    print("%s: %d cells, VTK types %s, max |VTK interpolation - corner map| %.2e, volume %.12g, min cell volume %.3g"
          % (name, blk.GetNumberOfCells(), types, dev, vol, vmin))
