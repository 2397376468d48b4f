"""The server's side of a run: the worker pool that starts the box and takes its answers, and
the kept results. Never imports PyTorch."""
