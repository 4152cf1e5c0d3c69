# syntax=docker/dockerfile:1
# The kubetidb operator image: tidb-controller-manager and tidb-discovery (the per-cluster discovery
# Deployment runs the same image) as static binaries on distroless, running as non-root 65532, and
# /backup-manager, which the Backup and Restore Jobs run (docs/backup-manager.md).
#   make image IMAGE=repo/tidb-operator:tag        (or: docker build --build-arg VERSION=v0.1.0 -t ... .)
# Cross-builds with buildx: docker buildx build --platform linux/amd64,linux/arm64 -t ... .

ARG GO_VERSION=1.26

FROM --platform=$BUILDPLATFORM golang:${GO_VERSION} AS builder
WORKDIR /src
# Dependencies first, so a source change does not download modules again.
COPY go.mod go.sum ./
RUN --mount=type=cache,target=/go/pkg/mod go mod download
COPY cmd/ cmd/
COPY pkg/ pkg/
ARG TARGETOS=linux
ARG TARGETARCH
ARG VERSION=v0.0.0-dev
ARG GIT_COMMIT=unknown
# The same flags as `make build`: static (CGO off), reproducible paths, stripped, version stamped.
RUN --mount=type=cache,target=/go/pkg/mod --mount=type=cache,target=/root/.cache/go-build \
    set -eu; \
    pkg=github.com/kubetidb/tidb-operator/pkg/version; \
    ldflags="-s -w -X ${pkg}.gitVersion=${VERSION} -X ${pkg}.gitCommit=${GIT_COMMIT} -X ${pkg}.buildDate=$(date -u +%Y-%m-%dT%H:%M:%SZ)"; \
    for cmd in controller-manager:tidb-controller-manager discovery:tidb-discovery backup-manager:backup-manager; do \
      CGO_ENABLED=0 GOOS=${TARGETOS} GOARCH=${TARGETARCH} \
        go build -trimpath -ldflags "${ldflags}" -o "/out/${cmd#*:}" "./cmd/${cmd%%:*}"; \
    done

FROM gcr.io/distroless/static:nonroot
LABEL org.opencontainers.image.title="kubetidb tidb-operator" \
      org.opencontainers.image.source="https://github.com/kubetidb/tidb-operator"
COPY --from=builder /out/tidb-controller-manager /out/tidb-discovery /usr/local/bin/
COPY --from=builder /out/backup-manager /backup-manager
USER 65532:65532
ENTRYPOINT ["/usr/local/bin/tidb-controller-manager"]
