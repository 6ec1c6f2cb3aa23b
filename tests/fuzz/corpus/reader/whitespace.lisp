(a
bc	d)