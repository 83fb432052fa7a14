
2
xPlaceholder*
dtype0*
shape
:

yRelunope*
T0