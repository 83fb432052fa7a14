
:
xPlaceholder*
dtype0*
shape:
C
wPlaceholder*
dtype0*$
shape:ÿÿÿÿÿÿÿÿÿ
D
opConv2Dxw*
paddingVALID*
strides
*
T0