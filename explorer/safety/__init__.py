"""What keeps a run in bounds: the program's allow-list and guards (the teaching layer), its
limits, and the operating system's wall around the process that runs it (SECURITY.md)."""
