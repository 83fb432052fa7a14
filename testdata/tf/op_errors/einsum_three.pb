
:
xPlaceholder*
dtype0*
shape:
C
opEinsumxxx*
equationab,bc,cd->ad*
T0*
N