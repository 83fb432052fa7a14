
:
xPlaceholder*
dtype0*
shape:
@
opEinsumx*
equationabcde...->abcde*
T0*
N