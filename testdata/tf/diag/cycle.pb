
2
xPlaceholder*
dtype0*
shape
:

aAddxb*
T0

bRelua*
T0