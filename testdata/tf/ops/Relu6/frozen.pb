
3
x0Placeholder*
shape
:*
dtype0

Relu6Relu6x0*
T0
$
IdentityIdentityRelu6*
T0"ª