// Two bodies side by side, meshed apart (no shared nodes: bench/defaults.py binds them with weak constraints):
// [0, 1]^3 and [1, 3] x [0, 1] x [0, 1]; the first clamped at x = 0, gravity -y.
// gmsh -3 -format msh22 two_blocks.geo -setnumber lc L -o two_blocks.msh
SetFactory("OpenCASCADE");
DefineConstant[ lc = {0.1, Name "lc"} ];
Box(1) = {0, 0, 0, 1, 1, 1};
Box(2) = {1, 0, 0, 2, 1, 1};
Mesh.CharacteristicLengthMax = lc;
Physical Volume("left") = {1};
Physical Volume("right") = {2};
