
:
xPlaceholder*
dtype0*
shape:
C
wPlaceholder*
dtype0*$
shape:ÿÿÿÿÿÿÿÿÿ
S
opDepthwiseConv2dNativexw*
paddingVALID*
strides
*
T0