
:
xPlaceholder*
dtype0*
shape:
0
opDepthToSpacex*
T0*

block_size