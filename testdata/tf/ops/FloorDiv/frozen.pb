
3
x0Placeholder*
shape
:*
dtype0
3
x1Placeholder*
shape
:*
dtype0
%
floordivFloorDivx0x1*
T0
'
IdentityIdentityfloordiv*
T0"ª