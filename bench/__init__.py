"""The benchmarks of dms. Each is a module run from the repository root, e.g.
`.venv/bin/python -m bench.load --help`, or all of them with `-m bench.run_all`; they take
samples and the throwaway PostgreSQL and Redis from `tests.harness`. Install what they need
first: `scripts/setup.sh --bench`."""
