
3
x0Placeholder*
shape
:*
dtype0
/
x1Placeholder*
shape:*
dtype0
?
EqualEqualx0x1*
T0*
incompatible_shape_error(
$
IdentityIdentityEqual*
T0

E
NotEqualNotEqualx0x1*
T0*
incompatible_shape_error(
)

Identity_1IdentityNotEqual*
T0
"ª