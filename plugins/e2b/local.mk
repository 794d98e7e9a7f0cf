# plugins/e2b: build rules (included from the top Makefile.am)
