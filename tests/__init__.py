"""The test suite of dms: test folders that mirror the packages of `dms/`, end-to-end tiers in
`e2e/`, and every helper shared between them (and with `bench/`) in `tests.harness`."""
