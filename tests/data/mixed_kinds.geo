// Box [0,1] x [0,0.5] x [0,0.25]: its left half extruded from quadrangles (hexahedra), its right half
// from triangles (prisms), conforming at x = 0.5: a file mixing volume element kinds (tests/data/mixed_hex_prism.msh).
SetFactory("Built-in");
lc = 0.25;
Point(1) = {0, 0, 0, lc}; Point(2) = {0.5, 0, 0, lc}; Point(3) = {1, 0, 0, lc};
Point(4) = {1, 0.5, 0, lc}; Point(5) = {0.5, 0.5, 0, lc}; Point(6) = {0, 0.5, 0, lc};
Line(1) = {1, 2}; Line(2) = {2, 3}; Line(3) = {3, 4}; Line(4) = {4, 5}; Line(5) = {5, 6}; Line(6) = {6, 1}; Line(7) = {2, 5};
Curve Loop(1) = {1, 7, 5, 6}; Plane Surface(1) = {1};
Curve Loop(2) = {2, 3, 4, -7}; Plane Surface(2) = {2};
Transfinite Curve{1, 5, 6, 7} = 3; Transfinite Surface{1}; Recombine Surface{1};
Extrude {0, 0, 0.25} {Surface{1, 2}; Layers{2}; Recombine;}
Physical Volume("body") = {1, 2};
