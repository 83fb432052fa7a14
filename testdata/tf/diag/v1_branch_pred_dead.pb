
2
xPlaceholder*
dtype0*
shape
:
2
	lp/enter0Enterx*
T0*

frame_namelp
9
	lp/merge0Merge	lp/enter0lp/next0*
N*
T0
/
lp/trueConst*
dtype0
*
valueB
Z
L

lp/true_inEnterlp/true*
T0
*

frame_namelp*
is_constant(

lp/condLoopCond
lp/true_in
1

lp/switch0Switch	lp/merge0lp/cond*
T0
)
lp/id0Identitylp/switch0:1*
T0
.
lp/swSwitchlp/id0lp/switch0:0*
T0

lp/tRelulp/sw:1*
T0
.
lp/mMergelp/tlp/sw:0*
N*
T0
(
lp/next0NextIterationlp/m*
T0
%
lp/exit0Exit
lp/switch0*
T0