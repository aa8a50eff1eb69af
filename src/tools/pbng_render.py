"""pbng-render: pictures of a pbng result, rendered headless by ParaView (issue 21 item 3; docs/render.md).

Run through the wrapper build/bin/pbng-render (pvbatch this script, on its own Xvfb without a display), or as
    xvfb-run -a pvbatch src/tools/pbng_render.py FILE [outputs] [options]

FILE: a pbng result (FILE.h5 with FILE.xdmf beside it, or the .xdmf). Outputs (at least one):
  --png OUT.png        the chosen frames as panels side by side, each with its frame and time above it
  --frames-dir DIR     one PNG per chosen frame: DIR/frame_NNNNNN.png (NNNNNN: the result's frame number)
  --animation OUT      the chosen frames as a video (OUT.mp4, OUT.webm or OUT.gif; ffmpeg, --fps frames a second)
Options:
  --frames SPEC        which frames: "all", "A:B[:S]" (A..B-1 every S), or "0,10,20"; default: all for
                       --frames-dir and --animation, six spread over the run for --png alone
  --color C            displacement (|x - rest_position|, the default), color (the node colouring), partition
                       (the owning rank), in_contact (grey / red), constraints (the paper's Fig. 10: nodes in
                       contact red, bound nodes blue, others grey) or any node attribute of the file (its
                       magnitude for vectors); one colour scale over all chosen frames, with a scalar bar
  --size W,H           pixels of one frame (default 640,480)
  --camera X,Y,Z       the direction from the bodies to the camera (default 0.5,0.6,1.0), the bodies fitted in
                       view over all chosen frames; --view-up X,Y,Z (default 0,1,0)
  --fps N              frames a second of the animation (default 10)

Box and container obstacles of the run are drawn as outlines, spheres as grey balls. Errors (a missing or
unreadable file, an unknown field, frames out of range, no output asked, an unwritable output, ffmpeg missing
for --animation) are reported naming the problem, with exit status 2 and no partial output."""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

import h5py
import paraview.simple as pvs
from vtkmodules.vtkFiltersCore import vtkImageAppend
from vtkmodules.vtkIOImage import vtkPNGReader, vtkPNGWriter

NAMED = {"displacement": "rest_position", "color": "color", "partition": "partition", "in_contact": "in_contact"}
CATEGORIES = {"in_contact": [0.0, 0.75, 0.75, 0.75, 1.0, 0.85, 0.1, 0.1],  # grey, red
              "constraints": [0.0, 0.75, 0.75, 0.75, 1.0, 0.15, 0.3, 0.85, 2.0, 0.85, 0.1, 0.1]}  # grey, blue, red


def constraint_formula(fields):
    """The constraints colouring from the node attributes there are: 2 in contact (in_contact), else 1 bound (bound: a node
    of a weak constraint, /mesh/bound), else 0."""
    if "in_contact" in fields and "bound" in fields:
        return "2 * in_contact + bound * (1 - in_contact)"
    return "2 * in_contact" if "in_contact" in fields else "bound" if "bound" in fields else None


def fail(msg):
    print(f"pbng-render: {msg}", file=sys.stderr)
    sys.exit(2)


def parse(argv):
    ap = argparse.ArgumentParser(prog="pbng-render", description=__doc__.split("\n\n")[0])
    ap.add_argument("file")
    ap.add_argument("--png")
    ap.add_argument("--frames-dir")
    ap.add_argument("--animation")
    ap.add_argument("--frames", default="")
    ap.add_argument("--color", default="displacement")
    ap.add_argument("--size", default="640,480")
    ap.add_argument("--camera", default="0.5,0.6,1.0")
    ap.add_argument("--view-up", default="0,1,0")
    ap.add_argument("--fps", type=float, default=10)
    a = ap.parse_args(argv)
    if not (a.png or a.frames_dir or a.animation):
        fail("no output: give --png OUT.png, --frames-dir DIR and/or --animation OUT.mp4")
    try:
        a.size = [int(v) for v in a.size.split(",")]
        a.camera = [float(v) for v in a.camera.split(",")]
        a.view_up = [float(v) for v in a.view_up.split(",")]
    except ValueError:
        fail(f"--size W,H, --camera X,Y,Z and --view-up X,Y,Z take numbers (got {a.size!r}, {a.camera!r}, {a.view_up!r})")
    if len(a.size) != 2 or min(a.size) < 16 or max(a.size) > 8192 or len(a.camera) != 3 or len(a.view_up) != 3:
        fail("--size W,H: two sizes in 16..8192; --camera and --view-up: three numbers")
    if not a.fps > 0:
        fail(f"--fps {a.fps}: must be > 0")
    if a.animation and os.path.splitext(a.animation)[1].lower() not in (".mp4", ".webm", ".gif"):
        fail(f"--animation {a.animation}: the name must end in .mp4, .webm or .gif")
    if a.animation and not shutil.which("ffmpeg"):
        fail("--animation needs ffmpeg (Debian package ffmpeg; .ci/install-deps --with-paraview installs it)")
    return a


def result_paths(path):
    """The result's .h5 and .xdmf, both there."""
    stem, ext = os.path.splitext(path)
    if ext not in (".h5", ".xdmf"):
        fail(f"{path}: give a pbng result, FILE.h5 (with FILE.xdmf beside it) or FILE.xdmf")
    h5, xdmf = stem + ".h5", stem + ".xdmf"
    for p in (h5, xdmf):
        if not os.path.isfile(p):
            fail(f"{path}: {p} is missing (pbng writes both)")
    try:
        with h5py.File(h5, "r") as f:
            if "frames" not in f or not len(f["frames"]):
                fail(f"{h5}: no frames")
    except OSError as err:
        fail(f"{h5}: cannot read it as HDF5 ({err})")
    return h5, xdmf


def chosen_frames(spec, n, panels_only):
    """The frame numbers asked for (0 <= k < n)."""
    if not spec:
        spec = "all" if not panels_only else ",".join(str(round(k * (n - 1) / 5)) for k in range(6))
    try:
        if spec == "all":
            frames = list(range(n))
        elif ":" in spec:
            parts = [int(v) if v else None for v in spec.split(":")]
            frames = list(range(n))[slice(*parts)]
        else:
            frames = [int(v) for v in spec.split(",")]
    except ValueError:
        fail(f"--frames {spec}: give all, A:B[:S] or a list 0,10,20")
    frames = sorted(set(frames))
    bad = [f for f in frames if not 0 <= f < n]
    if bad or not frames:
        fail(f"--frames {spec}: the result holds frames 0..{n - 1}" + (f" (not {bad[0]})" if bad else " (none chosen)"))
    return frames


def show_obstacles(h5, view):
    """The run's box and container obstacles (root attribute obstacles, or pd_obstacles: kind, then lo and hi)
    as black outlines, its spheres (kind 3: centre and radius) as grey balls."""
    with h5py.File(h5, "r") as f:
        key = "obstacles" if "obstacles" in f.attrs else "pd_obstacles"
        obstacles = f.attrs[key].reshape(-1, 7) if key in f.attrs else []
    for o in obstacles:
        if int(o[0]) == 3:  # pbng_obstacle: 3 sphere
            # drawn 2 % smaller: a sheet resting on it touches it at its vertices, and its flat triangles' chords
            # cut into the ball by up to l^2 / 8r, which would show through
            ball = pvs.Show(pvs.Sphere(Center=list(o[1:4]), Radius=0.98 * o[4], ThetaResolution=48, PhiResolution=48), view)
            ball.AmbientColor = ball.DiffuseColor = [0.55, 0.55, 0.6]
        elif int(o[0]) in (1, 2):  # 1 box, 2 container
            lo, hi = o[1:4], o[4:7]
            box = pvs.Box(XLength=hi[0] - lo[0], YLength=hi[1] - lo[1], ZLength=hi[2] - lo[2], Center=list((lo + hi) / 2))
            outline = pvs.Show(pvs.Outline(Input=box), view)
            outline.AmbientColor = outline.DiffuseColor = [0, 0, 0]


def show_colored(surface, view, color, times, fields):
    """The surface coloured by `color`, one scale over the times (a scalar bar for all but the categories)."""
    if color == "displacement":
        surface = pvs.Calculator(Input=surface, ResultArrayName="displacement", Function="mag(coords - rest_position)")
    if color == "constraints":
        surface = pvs.Calculator(Input=surface, ResultArrayName="constraints", Function=constraint_formula(fields))
    shown = pvs.Show(surface, view)
    pvs.ColorBy(shown, ("POINTS", color, "Magnitude"))
    lut = pvs.GetColorTransferFunction(color)
    if color in CATEGORIES:
        lut.RGBPoints = CATEGORIES[color]
        lut.RescaleTransferFunction(CATEGORIES[color][0], CATEGORIES[color][-4])
        shown.SetScalarBarVisibility(view, False)
        return
    lo, hi = float("inf"), -float("inf")
    for t in times:
        surface.UpdatePipeline(t)
        r = surface.PointData[color].GetRange(-1)
        lo, hi = min(lo, r[0]), max(hi, r[1])
    lut.ApplyPreset("Viridis (matplotlib)", True)
    lut.AutomaticRescaleRangeMode = "Never"
    lut.RescaleTransferFunction(lo, hi if hi > lo else lo + 1)
    shown.SetScalarBarVisibility(view, True)
    bar = pvs.GetScalarBar(lut, view)
    bar.Title, bar.ComponentTitle = color, ""
    bar.TitleColor = bar.LabelColor = [0, 0, 0]


def bodies_bounds(reader, times):
    """The bounding box of the bodies over the times (xmin, xmax, ymin, ymax, zmin, zmax)."""
    lo, hi = [float("inf")] * 3, [-float("inf")] * 3
    for t in times:
        reader.UpdatePipeline(t)
        b = reader.GetDataInformation().GetBounds()
        lo = [min(lo[d], b[2 * d]) for d in range(3)]
        hi = [max(hi[d], b[2 * d + 1]) for d in range(3)]
    return [v for d in range(3) for v in (lo[d], hi[d])]


def make_view(a, reader, h5, times):
    """The render view: white, the colouring, a label above, the camera fitted over the chosen times."""
    view = pvs.CreateView("RenderView")
    view.ViewSize = a.size
    view.UseColorPaletteForBackground = 0
    view.Background = [1, 1, 1]
    view.OrientationAxesVisibility = 0
    show_colored(pvs.ExtractSurface(Input=reader), view, a.color, times, reader.PointData.keys())
    text = pvs.Text(Text="")
    label = pvs.Show(text, view)
    label.FontSize = 14
    label.Color = [0, 0, 0]
    label.WindowLocation = "Upper Center"
    view.CameraPosition = a.camera
    view.CameraFocalPoint = [0, 0, 0]
    view.CameraViewUp = a.view_up
    view.ResetCamera(*bodies_bounds(reader, times))  # the obstacles added after may reach beyond
    show_obstacles(h5, view)
    return view, text


def render_frames(view, text, times, frames, directory):
    """One PNG per frame into directory: frame_NNNNNN.png."""
    paths = []
    for f in frames:
        text.Text = f"frame {f}, t = {times[f]:.4g}"
        view.ViewTime = times[f]
        pvs.Render(view)
        path = os.path.join(directory, f"frame_{f:06d}.png")
        pvs.SaveScreenshot(path, view)
        paths.append(path)
    return paths


def write_panels(paths, out):
    append = vtkImageAppend()
    append.SetAppendAxis(0)
    for p in paths:
        r = vtkPNGReader()
        r.SetFileName(p)
        r.Update()
        append.AddInputData(r.GetOutput())
    append.Update()
    w = vtkPNGWriter()
    w.SetFileName(out)
    w.SetInputData(append.GetOutput())
    w.Write()


def write_animation(paths, out, fps, tmp):
    """ffmpeg over the frames (renamed in order: ffmpeg's image sequence wants consecutive numbers)."""
    for k, p in enumerate(paths):
        os.link(p, os.path.join(tmp, f"seq_{k:06d}.png"))
    ext = os.path.splitext(out)[1].lower()
    codec = {".mp4": ["-c:v", "libx264", "-pix_fmt", "yuv420p", "-vf", "pad=ceil(iw/2)*2:ceil(ih/2)*2"],
             ".webm": ["-c:v", "libvpx-vp9"], ".gif": []}[ext]
    cmd = ["ffmpeg", "-loglevel", "error", "-y", "-framerate", f"{fps:g}", "-i", os.path.join(tmp, "seq_%06d.png")] + codec + [out]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode:
        fail(f"--animation {out}: ffmpeg failed: {p.stderr.strip()[-400:]}")


def check_writable(a):
    """Every output's directory exists and is writable (checked before any rendering)."""
    for path in [p for p in (a.png, a.animation) if p]:
        d = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(d) or not os.access(d, os.W_OK):
            fail(f"{path}: cannot write there ({d} is not a writable directory)")
    if a.frames_dir and os.path.exists(a.frames_dir) and not os.path.isdir(a.frames_dir):
        fail(f"--frames-dir {a.frames_dir}: exists and is not a directory")
    parent = os.path.dirname(os.path.abspath(a.frames_dir)) if a.frames_dir else None
    if parent and not (os.path.isdir(parent) and os.access(parent, os.W_OK)):
        fail(f"--frames-dir {a.frames_dir}: cannot create it ({parent} is not a writable directory)")


def main(argv):
    a = parse(argv)
    h5, xdmf = result_paths(a.file)
    check_writable(a)
    reader = pvs.XDMFReader(FileNames=[os.path.abspath(xdmf)])
    pvs.UpdatePipeline()
    times = list(reader.TimestepValues) or [0.0]
    frames = chosen_frames(a.frames, len(times), bool(a.png) and not (a.frames_dir or a.animation))
    field = NAMED.get(a.color, a.color)
    if a.color == "constraints":
        if constraint_formula(reader.PointData.keys()) is None:
            fail(f"{xdmf}: --color constraints needs in_contact (a contact run) or bound (weak constraints); it has "
                 f"{', '.join(reader.PointData.keys())}")
    elif field not in reader.PointData.keys():
        fail(f"{xdmf}: no node attribute {field} for --color {a.color} (it has {', '.join(reader.PointData.keys())}; "
             "displacement, color, partition are always there)")
    view, text = make_view(a, reader, h5, [times[f] for f in frames])
    with tempfile.TemporaryDirectory(dir=os.path.dirname(os.path.abspath(a.png or a.animation or a.frames_dir))) as tmp:
        paths = render_frames(view, text, times, frames, tmp)
        if a.png:  # written beside, then renamed: no partial file under the name asked for
            write_panels(paths, os.path.join(tmp, "panels.png"))
            os.replace(os.path.join(tmp, "panels.png"), a.png)
        if a.animation:
            seq = os.path.join(tmp, "seq")
            os.mkdir(seq)
            write_animation(paths, os.path.join(tmp, "anim" + os.path.splitext(a.animation)[1]), a.fps, seq)
            os.replace(os.path.join(tmp, "anim" + os.path.splitext(a.animation)[1]), a.animation)
        if a.frames_dir:
            os.makedirs(a.frames_dir, exist_ok=True)
            for p in paths:
                shutil.copyfile(p, os.path.join(a.frames_dir, os.path.basename(p)))
    print(f"pbng-render: {a.file}: {len(frames)} frame(s) ({frames[0]}..{frames[-1]}), coloured by {a.color}, {a.size[0]}x{a.size[1]}"
          + "".join(f"; {k} {v}" for k, v in (("panels", a.png), ("frames in", a.frames_dir), ("animation", a.animation)) if v))


if __name__ == "__main__":
    main(sys.argv[1:])
