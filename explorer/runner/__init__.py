"""Running a program and recording what autograd did: the worker pool and its zygote, the
statement-by-statement execution, the graph and backward recorders, and the Trace they make,
checked again when it comes back from the run."""
