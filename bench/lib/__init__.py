"""The parts of the larger benchmarks, by what they do (each benchmark's entry module in bench/
keeps its command line, its phases and its report): hostile_*, load_*, search_*, scaleout_*,
and what several of them share (corpus: realistic text, cpu: CPU time)."""
