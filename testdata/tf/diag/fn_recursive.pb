
2
xPlaceholder*
dtype0*
shape
:
=
callPartitionedCallx*	
Tin0*

Tout0*

fR
fj
h

f
a
y>
againPartitionedCalla*	
Tin0*

Tout0*

fR
f"
yagain:output:0