
7
x0Placeholder*
shape:*
dtype0
3
x1Placeholder*
shape
:*
dtype0
#
truedivRealDivx0x1*
T0
&
IdentityIdentitytruediv*
T0"ª