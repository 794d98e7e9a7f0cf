# tests/k8s: the loopback fake kube-apiserver (python3, standard library)
# that the k8s provider's tests run against, the pod root filesystem it
# bases pods on, and the judge of its fidelity: the real kubectl 1.30+
# (skipped, saying so, where there is none).
EXTRA_DIST += tests/k8s/fake_apiserver.py tests/k8s/rootfs.sh \
	tests/k8s/kubectl-judge.sh
if INTEGRATION_TESTS
TESTS += tests/k8s/kubectl-judge.sh
endif

# The plugin against the fake's other modes: pods/exec speaking only
# v4.channel.k8s.io, and Sandboxes whose pods are named apart from them
# (the annotation agents.x-k8s.io/pod-name).
EXTRA_DIST += tests/k8s/v4.test.mjs tests/k8s/pod-name.test.mjs tests/k8s/harness.mjs
if INTEGRATION_TESTS
TESTS += tests/k8s/v4.test.mjs tests/k8s/pod-name.test.mjs
endif

# Ownership (ABI 1.5): describe and list through a small host of those ops,
# on kind pod and kind sandbox, with the fake paging one object at a time.
check_PROGRAMS += tests/k8s/owner-driver
tests_k8s_owner_driver_SOURCES = tests/k8s/owner-driver.c
tests_k8s_owner_driver_CFLAGS = $(AM_CFLAGS) $(JANSSON_CFLAGS)
tests_k8s_owner_driver_LDADD = $(JANSSON_LIBS)
EXTRA_DIST += tests/k8s/owner.test.mjs
if INTEGRATION_TESTS
TESTS += tests/k8s/owner.test.mjs
endif
