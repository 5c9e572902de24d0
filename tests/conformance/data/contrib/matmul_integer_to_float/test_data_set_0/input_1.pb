Ba_scaleJ
ף<