
2
xPlaceholder*
dtype0*
shape
:
8
outer/enter0Enterx*
T0*

frame_nameouter
B
outer/merge0Mergeouter/enter0outer/next0*
N*
T0
2

outer/trueConst*
dtype0
*
valueB
Z
U
outer/true_inEnter
outer/true*
T0
*

frame_nameouter*
is_constant(
%

outer/condLoopCondouter/true_in
:
outer/switch0Switchouter/merge0
outer/cond*
T0
/
	outer/id0Identityouter/switch0:1*
T0
R
outer/inner/enter0Enterouter/switch0:0*
T0*

frame_nameouter/inner
T
outer/inner/merge0Mergeouter/inner/enter0outer/inner/next0*
N*
T0
d
outer/inner/true_inEnterouter/true_in*
T0
*

frame_nameouter/inner*
is_constant(
1
outer/inner/condLoopCondouter/inner/true_in
L
outer/inner/switch0Switchouter/inner/merge0outer/inner/cond*
T0
;
outer/inner/id0Identityouter/inner/switch0:1*
T0
<
outer/inner/next0NextIterationouter/inner/id0*
T0
7
outer/inner/exit0Exitouter/inner/switch0*
T0
8
outer/next0NextIterationouter/inner/exit0*
T0
+
outer/exit0Exitouter/switch0*
T0