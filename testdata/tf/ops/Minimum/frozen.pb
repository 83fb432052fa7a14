
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
MinimumMinimumx0x1*
T0
&
IdentityIdentityMinimum*
T0"ª