"""End-to-end tiers: the browser, papermerge-cli, fuzzing, load, several nodes, the PyInstaller
build. Real processes and sockets throughout."""
