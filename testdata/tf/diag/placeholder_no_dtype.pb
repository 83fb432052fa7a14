
!
xPlaceholder*
shape:

yRelux*
T0