// Hollow tube along x for the multilevel tests (tests/test_multilevel.sh, tests/test_coarsen.c): outer
// radius 0.5, inner 0.4, length 3; `gmsh -3 -format msh22 tube.geo -o tube.msh`, then
// `python3 msh22_to_tetgen.py tube.msh tube` (TetGen tube.node / tube.ele).
SetFactory("OpenCASCADE");
L = 3; R = 0.5; r = 0.4;
Cylinder(1) = {0, 0, 0, L, 0, 0, R};
Cylinder(2) = {0, 0, 0, L, 0, 0, r};
BooleanDifference(3) = { Volume{1}; Delete; }{ Volume{2}; Delete; };
Mesh.CharacteristicLengthMax = 0.13;
Physical Volume("tube") = {3};
