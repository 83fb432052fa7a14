
2
xPlaceholder*
dtype0*
shape
:

yNextIterationx*
T0