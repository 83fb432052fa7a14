
:
xPlaceholder*
dtype0*
shape:

opConst*
dtype0