
H
vVarHandleOp*
dtype0*
shape:*
shared_name	weights
#
yReadVariableOpv*
dtype0