
7
x0Placeholder*
shape:*
dtype0
3
x1Placeholder*
shape
:*
dtype0
%
FloorModFloorModx0x1*
T0
'
IdentityIdentityFloorMod*
T0"ª