
2
xPlaceholder*
dtype0*
shape
:

rRelux*
T0

yRelur:3*
T0