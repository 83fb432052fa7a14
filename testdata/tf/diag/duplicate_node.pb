
2
xPlaceholder*
dtype0*
shape
:

xRelu*
T0