
3
x0Placeholder*
shape
:*
dtype0
3
x1Placeholder*
shape
:*
dtype0
*
AddNAddNx0x1x0*
T0*
N
#
IdentityIdentityAddN*
T0"ª