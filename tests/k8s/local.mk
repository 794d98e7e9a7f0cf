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
