
:
xPlaceholder*
dtype0*
shape:
4
opDepthToSpacex*
T0*

block_size€€€€