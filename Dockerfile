# One image for the hub (`wshub serve`) and for workspace machines (`wshub runtime`),
# so the runtime a Pod runs is always the hub's own version. Agent CLIs (Claude Code,
# Codex, ...) are not included: build FROM this image and add the ones you use.
#
#   docker build -t wshub --build-arg VERSION=$(git describe --tags --always) --build-arg COMMIT=$(git rev-parse HEAD) .
#
# The build context has no .git (.dockerignore), so `wshub version` says the version and
# commit given here.
FROM golang:1.26-bookworm AS build
ARG VERSION=dev
ARG COMMIT=
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.buildVersion=${VERSION} -X main.buildCommit=${COMMIT}" -o /out/wshub ./cmd/wshub

FROM debian:bookworm-slim
# git for checkouts and pushes, bubblewrap, passt and iproute2 (pasta and ip, the
# network of "full" projects) for the agent sandbox, ssh for ssh remotes.
RUN apt-get update \
 && apt-get install -y --no-install-recommends git bubblewrap passt iproute2 ca-certificates openssh-client \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --gid 10001 wshub \
 && useradd --uid 10001 --gid 10001 --create-home --home-dir /home/wshub wshub \
 && install -d -o 10001 -g 10001 /var/lib/wshub /workspace
COPY --from=build /out/wshub /usr/local/bin/wshub
# Numeric, so that Kubernetes can check runAsNonRoot, and the same uid and gid as the
# manifests' runAsUser, runAsGroup and fsGroup (deploy/kubernetes) and the workspace
# Pods' (adapters/kube).
USER 10001:10001
WORKDIR /home/wshub
ENV WSHUB_DATA_DIR=/var/lib/wshub
EXPOSE 8080
ENTRYPOINT ["wshub"]
CMD ["serve"]
