
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
c“
Y

c
a
a2
ok)
tConst*
dtype0
*
valueB
Z"
ok
t:output:0
6

b
a
y
rRelua*
T0"

yr:y:0