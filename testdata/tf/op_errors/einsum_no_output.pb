
:
xPlaceholder*
dtype0*
shape:
9
opEinsumxx*
equationab,bc*
T0*
N