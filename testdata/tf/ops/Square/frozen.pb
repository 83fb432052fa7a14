
7
x0Placeholder*
shape:*
dtype0

SquareSquarex0*
T0
%
IdentityIdentitySquare*
T0"ª