# bench: build rules (included from the top Makefile.am)
# The benchmarks are not part of `make check`: bench/run.sh runs them.
EXTRA_DIST += \
	bench/run.sh \
	bench/bench.mjs \
	bench/http.mjs \
	bench/modern.mjs \
	bench/remote.mjs \
	bench/k8s.mjs \
	bench/cgstart.mjs \
	bench/echo.c \
	bench/stamp.c \
	bench/seen.c \
	bench/lib/figures.mjs \
	bench/lib/httpclient.mjs \
	bench/lib/httpload.mjs \
	bench/lib/httpreport.mjs \
	bench/lib/httpservers.mjs \
	bench/lib/modernload.mjs \
	bench/lib/modernprofile.mjs \
	bench/lib/modernreport.mjs \
	bench/lib/parked.mjs \
	bench/lib/procfs.mjs \
	bench/lib/providerbench.mjs \
	bench/lib/providerreport.mjs \
	bench/lib/rawstdio.mjs \
	bench/lib/remoteload.mjs \
	bench/lib/remotereport.mjs \
	bench/lib/remotesetup.mjs \
	bench/lib/report.mjs \
	bench/lib/rounds.mjs \
	bench/lib/scale.mjs \
	bench/lib/servers.mjs \
	bench/lib/stats.mjs \
	bench/lib/taskcalls.mjs \
	bench/lib/wait.mjs \
	bench/peer/fixed.mjs \
	bench/peer/held.mjs \
	bench/peer/server.mjs \
	bench/package.json \
	bench/package-lock.json \
	bench/results/RESULTS.md bench/results/README.md \
	bench/results/FINDINGS.md \
	bench/results/results.json \
	bench/results/latency.dat \
	bench/results/latency.png \
	bench/results/http.md \
	bench/results/http.json \
	bench/results/http.dat \
	bench/results/http.png \
	bench/results/modern.md \
	bench/results/cgstart.md \
	bench/results/cgstart.json \
	bench/results/modern.json \
	bench/results/remote.md \
	bench/results/remote.json \
	bench/results/k8s.md \
	bench/results/k8s.json
