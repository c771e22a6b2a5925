# One image for every part of the product; docker-compose.yml picks the part with its command.
# `docker build -t ai-engine-manager .`
#
# Build stage: the toolchains. Node and npm install every dependency and generate the code and
# the OpenAPI document from the protos (npm's prepare step builds protoc-gen-openapiv2 with Go),
# build the docs site, compile the services and the edge to JavaScript (npm run build), install
# the production dependencies into that output, and build what sandboxes need ahead of time: the
# launcher helpers and seccomp filter from C (gcc, libseccomp-dev) and the sandbox agent (Go).
FROM golang:1.26-bookworm AS go

FROM node:24-bookworm AS build
COPY --from=go /usr/local/go /usr/local/go
ENV PATH=/usr/local/go/bin:$PATH
RUN apt-get update \
 && apt-get install -y --no-install-recommends gcc libc6-dev libseccomp-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN npm ci
RUN npm run build -- /app \
 && cd /app \
 && npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
 && AIEM_PREPARE_STRICT=true node services/sandbox/src/runtime/prepare-cli.js /opt/aiem/agent-cache

# Runtime stage: Node 24 and what the parts run at run time, the compiled output with its
# production dependencies, and the prebuilt sandbox files. No compiler, no TypeScript runner.
FROM node:24-bookworm-slim AS runtime
RUN apt-get update \
 && apt-get install -y --no-install-recommends bubblewrap ca-certificates e2fsprogs \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /app /app
COPY --from=build /opt/aiem/agent-cache /opt/aiem/agent-cache
WORKDIR /app
# The parts run as an unprivileged user. The sandbox part is the exception, and runs as root
# (docker-compose.yml says so): it maps each sandbox's user namespace to a uid range of its own
# and gives it cgroups and a loop-mounted storage image, all of which need root.
RUN groupadd --system --gid 10001 aiem \
 && useradd --system --uid 10001 --gid aiem --home-dir /data --shell /usr/sbin/nologin aiem \
 && mkdir -p /data \
 && chown aiem:aiem /data
ENV NODE_ENV=production \
    AIEM_HOST=0.0.0.0 \
    AIEM_DATA_DIR=/data \
    AIEM_METRICS_HOST=0.0.0.0 \
    AIEM_SANDBOX_AGENT_CACHE=/opt/aiem/agent-cache
VOLUME /data
# The API and docs; Prometheus metrics on a port of their own.
EXPOSE 8080 9464
USER aiem
CMD ["node", "edge/src/main.js"]
