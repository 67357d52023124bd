-- ephemeral-vault: the whole schema.
--
-- Sections start with "-- version: N". db.ts applies, in order, every section
-- whose N is above the database's PRAGMA user_version, each in its own
-- transaction, and then sets user_version to N. Never edit a released
-- section: add a new one.
--
-- Times are Unix milliseconds (the API shows whole seconds).

-- version: 1

-- Settings of this database: the root key id check, the audit chain head, ...
CREATE TABLE meta (
  name  TEXT PRIMARY KEY,
  value TEXT NOT NULL
) STRICT;

-- One table for every secret, global and org-scoped: one lifecycle
-- (domain/secrets.ts). Burned and deleted secrets are removed outright;
-- an expired one stays as a value-less tombstone until prune.
CREATE TABLE secrets (
  id            INTEGER PRIMARY KEY,
  scope         TEXT    NOT NULL,                 -- 'global' or an org id
  key           TEXT    NOT NULL,                 -- caller's key, or the public id
  is_public     INTEGER NOT NULL DEFAULT 0 CHECK (is_public IN (0, 1)),
  state         TEXT    NOT NULL CHECK (state IN ('active', 'sealed', 'expired')),
  ciphertext    BLOB,                             -- crypto.ts envelope; NULL once expired
  created_at    INTEGER NOT NULL,
  updated_at    INTEGER NOT NULL,
  expires_at    INTEGER,                          -- NULL: no TTL
  max_reads     INTEGER CHECK (max_reads IS NULL OR max_reads >= 1),
  read_count    INTEGER NOT NULL DEFAULT 0 CHECK (read_count >= 0),
  burn_on_limit INTEGER NOT NULL DEFAULT 1 CHECK (burn_on_limit IN (0, 1)), -- org `delete`
  owner_id      TEXT,                             -- principal id for org secrets
  allowed_keys  TEXT,                             -- JSON array of principal key ids, or NULL
  CHECK (state = 'expired' OR ciphertext IS NOT NULL),
  CHECK (state <> 'expired' OR ciphertext IS NULL),
  CHECK (max_reads IS NULL OR read_count <= max_reads)
) STRICT;

-- At most one live secret per key in a scope; tombstones do not block reuse.
CREATE UNIQUE INDEX secrets_live_key ON secrets (scope, key) WHERE state IN ('active', 'sealed');
-- Listing a scope's live secrets in creation order.
CREATE INDEX secrets_live_list ON secrets (scope, id) WHERE state IN ('active', 'sealed');
-- The sweeper: live secrets by expiry.
CREATE INDEX secrets_due ON secrets (expires_at) WHERE state IN ('active', 'sealed') AND expires_at IS NOT NULL;
-- Prune: a scope's tombstones.
CREATE INDEX secrets_tombstones ON secrets (scope, id) WHERE state = 'expired';

-- version: 2
-- Issue 3: scoped API keys and the append-only, hash-chained audit log.

-- version: 3
-- Issue 5: webhooks, the event outbox and delivery attempts.

-- version: 4
-- Issue 4: organizations, principals, roles and principal keys.
