"""Inside the box: the run of a program, recorded statement by statement. The only part of
the app that imports PyTorch; the server starts it as a process (`explorer.record.zygote`)."""
