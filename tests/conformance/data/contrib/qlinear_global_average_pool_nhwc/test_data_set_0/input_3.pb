BY_scaleJ
ף<