
:
xPlaceholder*
dtype0*
shape:
.
cPlaceholder*
dtype0
*
shape:

opWherec*
T0
