
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
cš
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
E

b
a
y$
rCasta*

DstT0*

SrcT0"

yr:y:0