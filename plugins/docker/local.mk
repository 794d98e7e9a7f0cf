# plugins/docker: build rules (included from the top Makefile.am)
