# syntax=docker/dockerfile:1
# Extension API image. Runtime configuration:
#   DATABASE_URL  PostgreSQL connection string (postgres://user:pass@host:5432/db). When unset, the
#                 service runs an embedded PostgreSQL (PGlite) in DATA_DIR=/app/data: mount a volume
#                 there, and run a single replica (the data directory is locked to one process).
#   TOKEN_ISSUER  the public base URL; required with DATABASE_URL (every replica names the same issuer).
#   SECRETS_KEY or SECRETS_KEY_FILE  the key that encrypts the secrets stored in the database; required with
#                 DATABASE_URL. With the embedded store, point SECRETS_KEY_FILE at a mounted secret or a second,
#                 owner-only volume: /app is read-only to the service, and the key must not sit beside the data.
#   TRUST_PROXY   addresses or CIDR ranges of the load balancers in front (X-Forwarded-For is believed from them).
#   LOG_LEVEL, BODY_LIMIT_BYTES, REQUEST_TIMEOUT_MS, HANDLER_TIMEOUT_MS, SHUTDOWN_GRACE_MS,
#   DB_POOL_MAX, DB_CONNECT_TIMEOUT_MS, DB_STATEMENT_TIMEOUT_MS: see src/config.ts.

# Node 24, the current LTS (the dependency tree needs 22.12 or later); .ci/run runs npm test on it.
ARG NODE_IMAGE=node:24-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci
COPY tsconfig.json tsconfig.build.json openapi.json ./
COPY src ./src
COPY db ./db
COPY scripts ./scripts
RUN npm run build

FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev && npm cache clean --force

FROM ${NODE_IMAGE}
WORKDIR /app
ENV HOST=0.0.0.0 PORT=3000 NODE_ENV=production DATA_DIR=/app/data NODE_OPTIONS=--enable-source-maps
# Application files stay root-owned (read-only to the service); only the data directory is writable.
COPY --from=deps /app/node_modules ./node_modules
COPY package.json openapi.json ./
COPY --from=build /app/dist ./dist
RUN mkdir -p /app/data && chown node:node /app/data
VOLUME ["/app/data"]
USER node
EXPOSE 3000
# The embedded database takes a few seconds to open and migrate on first start.
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/livez').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# --no-memory-reducer: see "Runtime flags" in README.md (a V8 slowdown after idle periods).
CMD ["node", "--no-memory-reducer", "dist/src/server.js"]
