# core/supervisor: build rules (included from the top Makefile.am)
