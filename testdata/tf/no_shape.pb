

xPlaceholder*
dtype0

yRelux*
T0