
;
x0Placeholder*
shape:*
dtype0
s
	AvgPool2DAvgPoolx0*
strides
*
data_formatNHWC*
T0*
ksize
*
paddingSAME
(
IdentityIdentity	AvgPool2D*
T0
v
AvgPool2D_1AvgPoolx0*
strides
*
data_formatNHWC*
T0*
ksize
*
paddingVALID
,

Identity_1IdentityAvgPool2D_1*
T0"ª