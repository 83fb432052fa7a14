
2
xPlaceholder*
dtype0*
shape
:

yRelu*
T0