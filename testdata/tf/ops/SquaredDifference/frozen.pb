
7
x0Placeholder*
shape:*
dtype0
3
x1Placeholder*
shape
:*
dtype0
7
SquaredDifferenceSquaredDifferencex0x1*
T0
0
IdentityIdentitySquaredDifference*
T0"ª