"""The benchmark (`python -m explorer.bench`) and the harness that serves the app for tests
and load runs: run from a checkout, not installed with the package."""
