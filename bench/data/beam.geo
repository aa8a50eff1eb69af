// A slender beam (bench/defaults.py): 10 x 0.5 x 0.5, clamped at x = 0, gravity -y.
// gmsh -3 -format msh22 beam.geo -setnumber lc L -o beam.msh (lc 0.1: ~2K nodes).
SetFactory("OpenCASCADE");
DefineConstant[ lc = {0.1, Name "lc"} ];
Box(1) = {0, 0, 0, 10, 0.5, 0.5};
Mesh.CharacteristicLengthMax = lc;
Physical Volume("beam") = {1};
