
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
cq
7


c
a)
tConst*
dtype0
*
valueB
Z
6

b
a
y
rRelua*
T0"

yr:y:0