"""Pictures of a pbng result, rendered by ParaView (issue 17's bench/contact.py, issue 18's drape).

Run: xvfb-run -a pvbatch bench/render_frames.py FILE.xdmf OUT.png [--frames 0,100,200,...] [--size 480,360]
                                                [--color in_contact|displacement|FIELD] [--camera x,y,z]

One panel per frame (the XDMF's time steps by frame number; default: six spread over the run), the
surface coloured by --color: the node attribute `in_contact` (the default; the paper's red nodes: 1 red,
0 grey), `displacement` (|x - rest_position|, one colour scale over all panels, with a scalar bar), or any
other node attribute of the file (its magnitude for vectors). The same camera for every panel: looking
from the direction --camera, fitted to the bodies in all the panels' frames. The panels are pasted side
by side into OUT.png with the frame's time written above each. Needs the Debian packages paraview, xvfb
(pvbatch wants an X display for its render window) and python3-h5py. Box and container obstacles are
drawn as outlines, spheres as grey balls."""
import argparse
import os
import sys
import tempfile

import h5py
import paraview.simple as pvs
from vtkmodules.vtkIOImage import vtkPNGReader, vtkPNGWriter
from vtkmodules.vtkFiltersCore import vtkImageAppend


def parse():
    ap = argparse.ArgumentParser()
    ap.add_argument("xdmf")
    ap.add_argument("png")
    ap.add_argument("--frames", default="")
    ap.add_argument("--size", default="480,360")
    ap.add_argument("--color", default="in_contact", help="in_contact, displacement or a node attribute's name")
    ap.add_argument("--camera", default="0.5,0.6,1.0", help="the camera's direction from the bodies")
    return ap.parse_args()


def frames_to_show(times, wanted):
    if wanted:
        return [int(f) for f in wanted.split(",")]
    n = len(times) - 1
    return sorted({round(k * n / 5) for k in range(6)})


def show_obstacles(xdmf, view):
    """The run's box and container obstacles (root attribute obstacles of the HDF5 file beside the XDMF:
    kind, then lo and hi) as black outlines, its spheres (kind 3: centre and radius) as grey balls."""
    with h5py.File(os.path.splitext(xdmf)[0] + ".h5", "r") as f:
        key = "obstacles" if "obstacles" in f.attrs else "pd_obstacles"  # the contacts' or the peridynamic contact step's
        obstacles = f.attrs[key].reshape(-1, 7) if key in f.attrs else []
    for o in obstacles:
        if int(o[0]) == 3:  # pbng_obstacle: 3 sphere
            # drawn 2 % smaller: a sheet resting on it touches it at its vertices, and its flat triangles' chords
            # cut into the ball by up to l^2 / 8r (1.3e-3 m for l = 0.05, r = 0.25), which would show through
            ball = pvs.Show(pvs.Sphere(Center=list(o[1:4]), Radius=0.98 * o[4], ThetaResolution=48, PhiResolution=48), view)
            ball.AmbientColor = ball.DiffuseColor = [0.55, 0.55, 0.6]
            continue
        if int(o[0]) not in (1, 2):  # 1 box, 2 container
            continue
        lo, hi = o[1:4], o[4:7]
        box = pvs.Box(XLength=hi[0] - lo[0], YLength=hi[1] - lo[1], ZLength=hi[2] - lo[2], Center=list((lo + hi) / 2))
        outline = pvs.Show(pvs.Outline(Input=box), view)
        outline.AmbientColor = outline.DiffuseColor = [0, 0, 0]


def show_colored(surface, view, color, times):
    """The surface coloured by in_contact (grey / red), by |x - rest_position| or by a node attribute (its
    magnitude), one scale over the panels' times (a scalar bar for all but in_contact)."""
    if color == "displacement":
        surface = pvs.Calculator(Input=surface, ResultArrayName="displacement", Function="mag(coords - rest_position)")
    shown = pvs.Show(surface, view)
    pvs.ColorBy(shown, ("POINTS", color, "Magnitude"))
    lut = pvs.GetColorTransferFunction(color)
    if color == "in_contact":
        lut.RGBPoints = [0.0, 0.75, 0.75, 0.75, 1.0, 0.85, 0.1, 0.1]
        lut.RescaleTransferFunction(0.0, 1.0)
        shown.SetScalarBarVisibility(view, False)
        return shown, lut
    lo, hi = float("inf"), -float("inf")
    for t in times:
        surface.UpdatePipeline(t)
        r = surface.PointData[color].GetRange(-1)
        lo, hi = min(lo, r[0]), max(hi, r[1])
    lut.ApplyPreset("Viridis (matplotlib)", True)
    lut.AutomaticRescaleRangeMode = "Never"
    lut.RescaleTransferFunction(lo, hi if hi > lo else lo + 1)
    shown.SetScalarBarVisibility(view, True)
    return shown, lut


def bodies_bounds(reader, times):
    """The bounding box of the bodies over the panels' times (xmin, xmax, ymin, ymax, zmin, zmax)."""
    lo, hi = [float("inf")] * 3, [-float("inf")] * 3
    for t in times:
        reader.UpdatePipeline(t)
        b = reader.GetDataInformation().GetBounds()
        lo = [min(lo[d], b[2 * d]) for d in range(3)]
        hi = [max(hi[d], b[2 * d + 1]) for d in range(3)]
    return [v for d in range(3) for v in (lo[d], hi[d])]


def render_panel(reader, view, time, path):
    view.ViewTime = time
    pvs.Render(view)
    pvs.SaveScreenshot(path, view)


def main():
    a = parse()
    w, h = (int(v) for v in a.size.split(","))
    reader = pvs.XDMFReader(FileNames=[os.path.abspath(a.xdmf)])
    pvs.UpdatePipeline()
    times = list(reader.TimestepValues)
    frames = [f for f in frames_to_show(times, a.frames) if 0 <= f < len(times)]
    field = "rest_position" if a.color == "displacement" else a.color
    if field not in reader.PointData.keys():
        sys.exit(f"{a.xdmf}: no node attribute {field} (--color {a.color}; it has {', '.join(reader.PointData.keys())})")
    view = pvs.CreateView("RenderView")
    view.ViewSize = [w, h]
    view.UseColorPaletteForBackground = 0
    view.Background = [1, 1, 1]
    view.OrientationAxesVisibility = 0
    shown, lut = show_colored(pvs.ExtractSurface(Input=reader), view, a.color, [times[f] for f in frames])
    text = pvs.Text(Text="")
    label = pvs.Show(text, view)
    label.FontSize = 14
    label.Color = [0, 0, 0]
    label.WindowLocation = "Upper Center"
    view.CameraPosition = [float(v) for v in a.camera.split(",")]
    view.CameraFocalPoint = [0, 0, 0]
    view.CameraViewUp = [0, 1, 0]
    view.ResetCamera(*bodies_bounds(reader, [times[f] for f in frames]))  # the obstacles' outlines added after may reach beyond
    show_obstacles(a.xdmf, view)
    append = vtkImageAppend()
    append.SetAppendAxis(0)
    with tempfile.TemporaryDirectory() as tmp:
        for f in frames:
            text.Text = f"frame {f}, t = {times[f]:.3f}"
            path = os.path.join(tmp, f"panel{f:06d}.png")
            render_panel(reader, view, times[f], path)
            r = vtkPNGReader()
            r.SetFileName(path)
            r.Update()
            append.AddInputData(r.GetOutput())
        append.Update()
        out = vtkPNGWriter()
        out.SetFileName(a.png)
        out.SetInputData(append.GetOutput())
        out.Write()
    print(f"{a.png}: frames {', '.join(map(str, frames))}")


if __name__ == "__main__":
    main()
