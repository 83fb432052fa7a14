
2
xPlaceholder*
dtype0*
shape
:
C
cConst*
dtype0**
value!B€€€€€ €€€€€ €€€€€ 

yAddxc*
T0