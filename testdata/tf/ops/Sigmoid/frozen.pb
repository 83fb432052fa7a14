
7
x0Placeholder*
shape:*
dtype0

SigmoidSigmoidx0*
T0
&
IdentityIdentitySigmoid*
T0"ª