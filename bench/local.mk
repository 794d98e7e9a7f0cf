# bench: build rules (included from the top Makefile.am)
# The benchmarks are not part of `make check`: bench/run.sh runs them.
EXTRA_DIST += \
	bench/run.sh \
	bench/bench.mjs \
	bench/echo.c \
	bench/lib/figures.mjs \
	bench/lib/procfs.mjs \
	bench/lib/report.mjs \
	bench/lib/rounds.mjs \
	bench/lib/scale.mjs \
	bench/lib/servers.mjs \
	bench/lib/stats.mjs \
	bench/lib/wait.mjs \
	bench/package.json \
	bench/package-lock.json \
	bench/results/RESULTS.md \
	bench/results/FINDINGS.md \
	bench/results/results.json \
	bench/results/latency.dat \
	bench/results/latency.png
