# Warden's container image (README.md, "Running in a container"):
#   docker build -t warden --build-arg WARDEN_REVISION=$(git rev-parse HEAD) .
# The build stage compiles the TypeScript with the dev dependencies; the image keeps only
# the production ones, the compiled code and the command line.

FROM node:24-bookworm-slim AS build
WORKDIR /app
# Dependencies first, in a layer of their own: a change to the sources does not install
# them again. No install script is needed: better-sqlite3 13 ships its SQLite prebuilt as
# a Node-API module for each platform, so nothing is compiled (no python3, make or g++).
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund \
 && npm cache clean --force
# .dockerignore lets in the package files, the TypeScript sources and bin/ only.
COPY . .
# Left out of the image: the TypeScript sources (but for the dashboard's stylesheet and
# script, which it serves from src/dashboard/assets), better-sqlite3's sources and its
# prebuilt modules for other systems (only this one's is loaded: 2 MB each), type declarations, source maps,
# and the packages' readmes and change logs (licences stay).
RUN npm run build \
 && npm prune --omit=dev --no-audit --no-fund \
 && rm -rf node_modules/better-sqlite3/deps node_modules/better-sqlite3/src \
 && find node_modules/better-sqlite3/prebuilds -type f ! -name "$(node -p 'process.platform + "-" + process.arch').node" -delete \
 && find node_modules \( -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' -o -name '*.map' -o -iname 'README*' -o -iname 'CHANGELOG*' -o -iname 'HISTORY*' \) -type f -delete \
 && find node_modules -mindepth 1 -maxdepth 1 -name '@*' -type d -empty -delete \
 && mv src/dashboard/assets /tmp/dashboard-assets \
 && rm -rf src tsconfig.json tsconfig.build.json \
 && mkdir -p src/dashboard \
 && mv /tmp/dashboard-assets src/dashboard/assets
# V8's compile cache (bin/warden.js), made here for the command line's modules: the image's
# /app is not writable by the node user, so `docker exec warden warden admin …` reads it and
# starts without compiling them again. Same base image, same Node.js: the entries hold.
RUN WARDEN_DATA_DIR=/tmp/warm node bin/warden.js admin owner list \
 && node bin/warden.js --version \
 && rm -rf /tmp/warm

FROM node:24-bookworm-slim
# The version is package.json's (the container test checks that they agree); where the
# image was built from is given at build time: --build-arg WARDEN_SOURCE=<repository URL>
# --build-arg WARDEN_REVISION=$(git rev-parse HEAD).
ARG WARDEN_VERSION=0.1.0
ARG WARDEN_SOURCE=unknown
ARG WARDEN_REVISION=unknown
LABEL org.opencontainers.image.title="Warden" \
      org.opencontainers.image.description="Self-hostable entitlement and access service" \
      org.opencontainers.image.version="${WARDEN_VERSION}" \
      org.opencontainers.image.source="${WARDEN_SOURCE}" \
      org.opencontainers.image.revision="${WARDEN_REVISION}"
# Listen on every address of the container; the data folder is the volume. Node's young
# generation bounded at 8 MB a semi-space: at Node 24's own bound (32 MB) it grew under
# retrieve's garbage until a million customers' service peaked at 318-326 MB whatever the
# answer cache's size; bounded, 232 MB with the 64 MB cache full, and no slower (docs/decisions.md).
ENV NODE_ENV=production HOST=0.0.0.0 PORT=8080 WARDEN_DATA_DIR=/data NODE_OPTIONS=--max-semi-space-size=8
# The volume is made owned by the user that writes it, before it is declared, so that a new
# named volume starts with that owner.
RUN ln -s /app/bin/warden.js /usr/local/bin/warden \
 && mkdir /data \
 && chown node:node /data
COPY --from=build /app /app
WORKDIR /app
USER node
VOLUME /data
EXPOSE 8080
# The slim image has no curl or wget, but it has bash, whose /dev/tcp asks /healthz for a
# few milliseconds of CPU: a whole `node` with fetch took ~100 ms a probe, and under load
# missed the 5 s timeout often enough to mark a serving container unhealthy (issue 49).
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 \
  CMD ["bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/$PORT && printf 'GET /healthz HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nConnection: close\\r\\n\\r\\n' >&3 && read -r status <&3 && [[ $status == 'HTTP/1.1 200 '* ]]"]
# `warden serve` is PID 1 (the base image's entry point execs it): it handles SIGTERM
# itself, finishing the requests and webhook attempts under way, and exits 0.
CMD ["warden", "serve"]
