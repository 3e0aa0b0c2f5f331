# Shortcuts for the scripts in scripts/ (which are what the README and CI use).
.PHONY: run test dist bench

run:
	scripts/run

test:
	scripts/test

dist:
	scripts/dist

bench:
	.venv/bin/python bench/tree.py
	.venv/bin/python bench/upload.py
	.venv/bin/python bench/ocr.py
	.venv/bin/python bench/search.py
	.venv/bin/python bench/load.py
	.venv/bin/python bench/hostile.py
	.venv/bin/python bench/scale.py
	.venv/bin/python bench/scaleout.py
