
:
xPlaceholder*
dtype0*
shape:
9
opEinsumx*
equation
abc->abc*
T0*
N