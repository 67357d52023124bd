# ephemeral-vault: one process, one SQLite file in the /data volume (or PostgreSQL
# with VAULT_DATABASE_URL).
# Build:  docker build -t ephemeral-vault .
# Run:    docker run -d --name vault -p 127.0.0.1:8484:8484 -v vault-data:/data \
#           --env-file vault.env ephemeral-vault
# See docs/deploy.md (settings, reverse proxy, backups).
#
# Node.js 24 ("Krypton"), an LTS line supported until April 2028: Node 20 reached
# its end of life in April 2026 and Node 22 ends in April 2027 (docs/deploy.md).

# Build stage: builds the package and packs it with `npm pack`, so the image holds
# exactly the files the npm package ships (package.json "files": bin, client, dist,
# schema.sql, schema-pg.sql, docs, README.md, LICENSE), never a hand-picked list.
# The production dependencies are installed apart, from the lock file, with the
# compiler at hand for better-sqlite3 when no prebuilt binary fits. The client
# package (@ephemeral-vault/client, the workspace packages/client) is bundled in
# the packed package (package.json "bundleDependencies"): npm ci only links the
# workspace, and that link, which points into the source tree, is left out.
FROM node:24-slim AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
# The whole context (.dockerignore keeps data, keys and build output out).
COPY . .
# `npm ci`, then the build (the client package, then tsup): dist/ is built here. The package has
# no `prepare` script (docs/deploy.md, "The npm package"): the build is explicit.
RUN npm ci \
 && npm run build \
 && mkdir /pkg \
 && npm pack --ignore-scripts --pack-destination /pkg \
 && mv /pkg/ephemeral-vault-*.tgz /pkg/ephemeral-vault.tgz
WORKDIR /deps
RUN cp /src/package.json /src/package-lock.json ./ \
 && mkdir -p packages/client \
 && cp /src/packages/client/package.json packages/client/ \
 && npm ci --omit=dev --ignore-scripts \
 && npm rebuild better-sqlite3 \
 && rm -r node_modules/@ephemeral-vault

FROM node:24-slim
ENV NODE_ENV=production \
    VAULT_HOST=0.0.0.0 \
    VAULT_PORT=8484 \
    VAULT_DATA_DIR=/data
WORKDIR /app
# The packed package (the client bundled in its node_modules), unpacked as npm
# would install it, and its dependencies.
COPY --from=build /pkg/ephemeral-vault.tgz /tmp/ephemeral-vault.tgz
RUN tar -xzf /tmp/ephemeral-vault.tgz -C /app --strip-components=1 --no-same-owner \
 && rm /tmp/ephemeral-vault.tgz
COPY --from=build /deps/node_modules ./node_modules
# The image's `node` user (uid 1000) owns the data directory, mode 0700; a
# named volume takes this ownership when first mounted.
RUN mkdir -p /data && chown node:node /data && chmod 0700 /data
USER node
VOLUME ["/data"]
EXPOSE 8484
# The port the vault listens on: VAULT_PORT, else PORT, else 8484 (as the vault reads them).
HEALTHCHECK --interval=30s --timeout=5s --start-period=10s --retries=3 \
  CMD ["node", "-e", "const p = process.env.VAULT_PORT || process.env.PORT || '8484'; fetch('http://127.0.0.1:' + p + '/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# SIGTERM is a graceful stop: in-flight requests finish, the group commit is flushed.
STOPSIGNAL SIGTERM
ENTRYPOINT ["node", "bin/ephemeral-vault.js"]
