BX0_scaleJ
ף<