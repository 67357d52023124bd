# ephemeral-vault: one process, one SQLite file in the /data volume.
# Build:  docker build -t ephemeral-vault .
# Run:    docker run -d --name vault -p 127.0.0.1:8484:8484 -v vault-data:/data \
#           --env-file vault.env ephemeral-vault
# See docs/deploy.md (settings, reverse proxy, backups).

# Build stage: compiles better-sqlite3 when no prebuilt binary fits, and the
# TypeScript; only the runtime files go on.
FROM node:20-slim AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json tsconfig.json tsup.config.ts schema.sql ./
COPY src ./src
COPY bin ./bin
# `npm ci` runs the `prepare` script (tsup), so the sources must be in place.
RUN npm ci && npm prune --omit=dev

FROM node:20-slim
ENV NODE_ENV=production \
    VAULT_HOST=0.0.0.0 \
    VAULT_PORT=8484 \
    VAULT_DATA_DIR=/data
WORKDIR /app
COPY --from=build /app/package.json /app/schema.sql ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/bin ./bin
COPY docs ./docs
COPY README.md LICENSE ./
# The image's `node` user (uid 1000) owns the data directory, mode 0700; a
# named volume takes this ownership when first mounted.
RUN mkdir -p /data && chown node:node /data && chmod 0700 /data
USER node
VOLUME ["/data"]
EXPOSE 8484
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:8484/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# SIGTERM is a graceful stop: in-flight requests finish, the group commit is flushed.
STOPSIGNAL SIGTERM
ENTRYPOINT ["node", "bin/ephemeral-vault.js"]
