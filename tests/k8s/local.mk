# tests/k8s: the loopback fake kube-apiserver (python3, standard library)
# that the k8s provider's tests run against, the pod root filesystem it
# bases pods on, and the judge of its fidelity: the real kubectl 1.30+
# (skipped, saying so, where there is none).
EXTRA_DIST += tests/k8s/fake_apiserver.py tests/k8s/rootfs.sh \
	tests/k8s/kubectl-judge.sh
if INTEGRATION_TESTS
TESTS += tests/k8s/kubectl-judge.sh
endif
