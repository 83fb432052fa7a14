
L
xPlaceholder*
dtype0*-
shape$:"ÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿÿ
B
opEinsumxx*
equationabcd,abcd->abc*
T0*
N