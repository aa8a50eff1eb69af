// Box [0,1] x [0,0.5] x [0,0.25] (volume 0.125) of prisms: an unstructured triangulation of the
// bottom extruded in two layers (tests/test_readers.c): gmsh -3 box_prism.geo.
SetFactory("Built-in");
lc = 0.3;
Point(1) = {0, 0, 0, lc}; Point(2) = {1, 0, 0, lc}; Point(3) = {1, 0.5, 0, lc}; Point(4) = {0, 0.5, 0, lc};
Line(1) = {1, 2}; Line(2) = {2, 3}; Line(3) = {3, 4}; Line(4) = {4, 1};
Curve Loop(1) = {1, 2, 3, 4}; Plane Surface(1) = {1};
cell[] = Extrude {0, 0, 0.25} {Surface{1}; Layers{2}; Recombine;};
// cell[]: top, volume, then the sides from the lines 1..4: y = 0, x = 1, y = 0.5, x = 0
Physical Surface("left") = {cell[5]};
Physical Surface("right") = {cell[3]};
Physical Volume("body") = {cell[1]};
