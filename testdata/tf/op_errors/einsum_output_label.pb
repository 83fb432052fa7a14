
:
xPlaceholder*
dtype0*
shape:
C
opEinsumxx*
equationabcd,abcd->abcz*
T0*
N