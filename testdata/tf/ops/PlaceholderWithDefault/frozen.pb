
3
x0Placeholder*
shape
:*
dtype0
N
ConstConst*1
value(B&"k¿^•¿Zf;¿Hj?ÖE3¿C¤Z?*
dtype0
Y
PlaceholderWithDefaultPlaceholderWithDefaultConst*
shape
:*
dtype0
1
addAddV2PlaceholderWithDefaultx0*
T0
"
IdentityIdentityadd*
T0"ª