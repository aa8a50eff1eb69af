// Box [0,1] x [0,0.5] x [0,0.25] (volume 0.125) of tetrahedra for the high-order reader tests
// (tests/test_readers.c): gmsh -3 -order 1|2|3 box_tet.geo. Physical groups as in cube.geo.
SetFactory("Built-in");
lc = 0.4;
Point(1) = {0, 0, 0, lc};     Point(2) = {1, 0, 0, lc};
Point(3) = {1, 0.5, 0, lc};   Point(4) = {0, 0.5, 0, lc};
Point(5) = {0, 0, 0.25, lc};  Point(6) = {1, 0, 0.25, lc};
Point(7) = {1, 0.5, 0.25, lc}; Point(8) = {0, 0.5, 0.25, lc};
Line(1) = {1, 2}; Line(2) = {2, 3}; Line(3) = {3, 4}; Line(4) = {4, 1};
Line(5) = {5, 6}; Line(6) = {6, 7}; Line(7) = {7, 8}; Line(8) = {8, 5};
Line(9) = {1, 5}; Line(10) = {2, 6}; Line(11) = {3, 7}; Line(12) = {4, 8};
Curve Loop(1) = {1, 2, 3, 4};     Plane Surface(1) = {1};   // z = 0
Curve Loop(2) = {5, 6, 7, 8};     Plane Surface(2) = {2};   // z = 0.25
Curve Loop(3) = {4, 9, -8, -12};  Plane Surface(3) = {3};   // x = 0
Curve Loop(4) = {2, 11, -6, -10}; Plane Surface(4) = {4};   // x = 1
Curve Loop(5) = {1, 10, -5, -9};  Plane Surface(5) = {5};   // y = 0
Curve Loop(6) = {3, 12, -7, -11}; Plane Surface(6) = {6};   // y = 0.5
Surface Loop(1) = {1, 2, 3, 4, 5, 6};
Volume(1) = {1};
Physical Surface("left") = {3};
Physical Surface("right") = {4};
Physical Volume("body") = {1};
