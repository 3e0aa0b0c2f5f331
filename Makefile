# Shortcuts for the scripts in scripts/ (which are what the README and CI use).
.PHONY: run test dist bench

run:
	scripts/run

test:
	scripts/test

dist:
	scripts/dist

bench:
	.venv/bin/python -m bench.tree
	.venv/bin/python -m bench.upload
	.venv/bin/python -m bench.ocr
	.venv/bin/python -m bench.search
	.venv/bin/python -m bench.load
	.venv/bin/python -m bench.hostile
	.venv/bin/python -m bench.scale
	.venv/bin/python -m bench.scaleout
	.venv/bin/python -m bench.import
	.venv/bin/python -m bench.idle
	.venv/bin/python -m bench.trash
	.venv/bin/python -m bench.pageops
	.venv/bin/python -m bench.s3upload
