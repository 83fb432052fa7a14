
:
xPlaceholder*
dtype0*
shape:
;
opEinsumx*
equation
abcd->abce*
T0*
N