
;
x0Placeholder*
shape:*
dtype0
/
x1Placeholder*
shape:*
dtype0
:
BiasAddBiasAddx0x1*
data_formatNHWC*
T0
&
IdentityIdentityBiasAdd*
T0
'
	BiasAddV1	BiasAddV1x0x1*
T0
*

Identity_1Identity	BiasAddV1*
T0"ª