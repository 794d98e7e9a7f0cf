# docs: the man pages (installed), the plugin guide and the example plugin
# it walks through (distributed; tests/install/install-test.sh builds the
# example against an installed prefix), and a check that the man pages
# format without a warning.
dist_man_MANS = docs/taskbox.1 docs/taskbox-provider.3
EXTRA_DIST += docs/plugin-guide.md docs/architecture.md docs/answer-budget.md \
	docs/http-hostile-clients.md docs/identity.md docs/oauth.md docs/audit.md \
	docs/descriptors.md \
	docs/service.md docs/tools.md docs/waits.md docs/http.md docs/eras.md \
	docs/configuration.md docs/plugins.md \
	examples/dirbox/dirbox.c \
	examples/dirbox/Makefile examples/dirbox/README.md \
	tests/unit/man-pages.sh
TESTS += tests/unit/man-pages.sh
