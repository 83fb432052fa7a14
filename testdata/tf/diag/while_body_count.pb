
2
xPlaceholder*
dtype0*
shape
:
@
wStatelessWhilex*

T
*
bodyR
b*
condR
cž
Q

c
a
ok)
tConst*
dtype0
*
valueB
Z"
ok
t:output:0
I

b
a
y
z
rRelua*
T0"

yr:y:0"

zr:y:0