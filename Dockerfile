# syntax=docker/dockerfile:1
# Steward: multi-stage build on Node 24 (slim). Runs as a non-root user; the data dir is a volume.

FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY bin ./bin
COPY scripts ./scripts
COPY src ./src
COPY migrations ./migrations
COPY skills ./skills
# The postinstall step builds the embedded-database template from src/ and migrations/,
# so they are copied first. Dev dependencies (tests, linters) stay out of the image, and so
# does the `node` package (189 MB): it brings Node 24 to machines with an older one, and this
# image is Node 24 already.
RUN npm ci --omit=dev --no-audit --no-fund && npm cache clean --force \
 && rm -rf node_modules/node node_modules/.bin/node

FROM node:24-bookworm-slim
ENV NODE_ENV=production \
    STEWARD_DATA_DIR=/data \
    HOST=0.0.0.0 \
    PORT=3000
RUN groupadd --system steward \
 && useradd --system --gid steward --home-dir /data --shell /usr/sbin/nologin steward \
 && mkdir -p /data && chown steward:steward /data && chmod 700 /data
WORKDIR /app
COPY --from=build /app /app
USER steward
# Conversations, the embedded database (when DATABASE_URL is unset), user skills and keys.
VOLUME ["/data"]
EXPOSE 3000
# HOST=0.0.0.0 needs STEWARD_API_TOKEN: Steward refuses to listen publicly without one.
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/readyz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
STOPSIGNAL SIGTERM
ENV GLIBC_TUNABLES=glibc.malloc.trim_threshold=131072:glibc.malloc.mmap_threshold=131072:glibc.malloc.arena_max=2
CMD ["node", "--liftoff-only", "--max-semi-space-size=1", "--heap-growing-percent=20", "--no-maglev", "--no-sparkplug", "bin/steward.js", "start"]
