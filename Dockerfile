# Rappel edge node: a static binary on a distroless base, run as non-root.
#
#   docker build -t rappel .
#   docker run -p 8080:8080 -v rappel-data:/data -e RAPPEL_API_KEYS=... rappel
#
# Flags after the image name are appended to the entrypoint's (the last one
# given wins); every flag can also be set as RAPPEL_<FLAG> (README,
# Deployment).

# The builder runs `make build`: the binary embeds the data bundle (the
# synthetic corpus normalized with the plugins' code) and the docs page's
# Swagger UI files, which npm installs from the pinned package-lock.
FROM golang:1.26 AS build
RUN apt-get update \
	&& apt-get install -y --no-install-recommends make nodejs npm \
	&& rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# CGO off: the binary must run on an image without a C library.
ENV CGO_ENABLED=0
# SEED and DATE pin the generated corpus; DATE defaults to the build day.
ARG SEED=1
ARG DATE=
# What `rappel version`, /health and rappel_build_info report. The context
# holds no .git (.dockerignore), so pass them:
#   docker build --build-arg VERSION=$(git describe --tags --always --dirty) \
#     --build-arg COMMIT=$(git rev-parse HEAD) -t rappel .
# Unset, the binary says dev and unknown; BUILD_DATE defaults to now.
ARG VERSION=
ARG COMMIT=
ARG BUILD_DATE=
RUN make build SEED="$SEED" ${DATE:+DATE="$DATE"} \
	${VERSION:+VERSION="$VERSION"} ${COMMIT:+COMMIT="$COMMIT"} ${BUILD_DATE:+BUILD_DATE="$BUILD_DATE"} \
	&& mkdir -p /out/data \
	&& cp bin/rappel /out/rappel

# distroless/static has CA certificates (live feeds, ACME), tzdata, /tmp and
# the nonroot user (65532), and no shell or package manager.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/rappel /rappel
# The data dir exists in the image owned by nonroot, so that a new named
# volume mounted on it is writable by the server.
COPY --from=build --chown=65532:65532 /out/data /data
USER 65532:65532
VOLUME ["/data"]
ENV RAPPEL_LOG_FORMAT=json
# 8080 for plain HTTP. With --tls-domains the server listens on :80 and :443
# instead, which Docker lets a non-root process bind (it sets
# net.ipv4.ip_unprivileged_port_start to 0 in the container).
EXPOSE 8080
# A graceful stop drains requests, stops the feeds and flushes the alert
# outbox: give it `docker stop -t 30` (the default is 10 s).
STOPSIGNAL SIGTERM
ENTRYPOINT ["/rappel", "serve", "--addr", "0.0.0.0:8080", "--data-dir", "/data"]
