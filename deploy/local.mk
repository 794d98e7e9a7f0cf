# deploy: what runs taskbox as a service: the systemd units and the config
# they use, the container image's Containerfile and config, the Kubernetes
# manifests, the Debian packaging, and their tests (tests/package, the
# package stage of tests/run-all.sh, run as root outside make check).
EXTRA_DIST += Containerfile \
	deploy/systemd/taskbox.socket deploy/systemd/taskbox.service \
	deploy/systemd/config.json deploy/container/config.json \
	deploy/kubernetes/kustomization.yaml deploy/kubernetes/namespaces.yaml \
	deploy/kubernetes/rbac.yaml deploy/kubernetes/configmap.yaml \
	deploy/kubernetes/secret.yaml deploy/kubernetes/deployment.yaml \
	deploy/kubernetes/service.yaml \
	debian/changelog debian/control debian/copyright debian/rules \
	debian/source/format debian/taskbox.install debian/taskbox.docs \
	debian/taskbox.postrm debian/taskbox.sysusers \
	debian/taskbox-provider-dev.install debian/taskbox-provider-dev.docs \
	debian/taskbox-provider-dev.examples \
	tests/package/run.sh tests/package/lib.sh tests/package/build.sh \
	tests/package/install.sh tests/package/systemd.sh tests/package/image.sh \
	tests/package/manifests.sh tests/package/readme.sh \
	tests/package/session.mjs tests/package/discovery.py tests/package/openapi.py \
	tests/package/rbac.py
