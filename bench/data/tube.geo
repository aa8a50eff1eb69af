// The hollow tube of issue 15 (bench/multilevel.py): length 6 along x, outer radius 0.5, inner 0.4.
// gmsh -3 -format msh22 tube.geo -setnumber lc 0.13 -o tube.msh: 2,547 nodes (coarser lc: coarse levels).
SetFactory("OpenCASCADE");
DefineConstant[ lc = {0.13, Name "lc"} ];
L = 6; R = 0.5; r = 0.4;
Cylinder(1) = {0, 0, 0, L, 0, 0, R};
Cylinder(2) = {0, 0, 0, L, 0, 0, r};
BooleanDifference(3) = { Volume{1}; Delete; }{ Volume{2}; Delete; };
Mesh.CharacteristicLengthMax = lc;
Physical Volume("tube") = {3};
