
7
x0Placeholder*
shape:*
dtype0

FloorFloorx0*
T0
$
IdentityIdentityFloor*
T0"ª