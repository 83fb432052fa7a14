
:
xPlaceholder*
dtype0*
shape:
:
opEinsumx*
equation	aabc->abc*
T0*
N