B	head_sinkJ³¢ª¿é¿
š×¿U½/½