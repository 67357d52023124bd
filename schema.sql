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

-- Scoped API keys (domain/keys.ts): only the SHA-256 of the vsk_ token is
-- stored, looked up by that hash. Deleting a key deletes its row (later
-- requests with it: 401). Lists page in creation order by rowid.
CREATE TABLE scoped_keys (
  id           TEXT    PRIMARY KEY,             -- sk_...
  name         TEXT    NOT NULL,
  token_hash   TEXT    NOT NULL UNIQUE,         -- hex SHA-256 of the token
  permissions  TEXT    NOT NULL,                -- JSON array of read, write, delete, admin
  prefix       TEXT,                            -- NULL: every secret
  expires_at   INTEGER,                         -- ms; NULL: never
  created_at   INTEGER NOT NULL,
  last_used_at INTEGER                          -- ms, written at most once a minute per key
) STRICT;

-- The audit log (domain/audit.ts), global and org entries in one table and
-- one hash chain. Each row's hash is SHA-256 over the previous row's hash and
-- the row's own content; `at` never decreases along the chain (id order), so
-- a time range is an id range. The triggers below make the table
-- append-only in the database itself.
CREATE TABLE audit (
  id           INTEGER PRIMARY KEY,             -- chain order
  scope        TEXT    NOT NULL,                -- 'global' or an org id
  at           INTEGER NOT NULL,                -- ms
  action       TEXT    NOT NULL,                -- secret.read, key.created, auth.failed, ...
  key          TEXT,                            -- secret key or public id, key or webhook id
  actor        TEXT,                            -- 'master', a key id, or NULL
  principal_id TEXT,
  ip           TEXT,
  hash         TEXT    NOT NULL                 -- hex SHA-256, chained
) STRICT;
-- Queries: a scope's newest entries, optionally by action or key; each index
-- ends with the rowid, so an id range and ORDER BY id are index seeks.
CREATE INDEX audit_scope ON audit (scope);
CREATE INDEX audit_scope_action ON audit (scope, action);
CREATE INDEX audit_scope_key ON audit (scope, key);
-- since/until (time) to an id range.
CREATE INDEX audit_at ON audit (at);

CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
BEGIN
  SELECT RAISE(ABORT, 'audit rows are append-only');
END;
CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit
BEGIN
  SELECT RAISE(ABORT, 'audit rows are append-only');
END;

-- version: 3
-- Issue 5: webhooks, the event outbox and delivery attempts.
-- A secret event is queued in the transaction of the change that caused it
-- (domain/webhooks.ts WebhookOutbox): one webhook_events row holding the
-- exact body every attempt signs and sends, and one webhook_deliveries row
-- per subscribed webhook. The worker (webhooks/worker.ts) posts the due
-- deliveries and logs each attempt in webhook_attempts. Deleting a webhook
-- deletes its deliveries and attempts (ON DELETE CASCADE): nothing pending is
-- sent to it afterwards. Finished deliveries are removed after 7 days.

CREATE TABLE webhooks (
  id          TEXT    PRIMARY KEY,              -- wh_...
  org_id      TEXT    REFERENCES orgs (id),     -- NULL: a global webhook
  url         TEXT    NOT NULL,                 -- https://, normalized
  events      TEXT    NOT NULL,                 -- JSON array of event types, or ["*"]
  description TEXT,
  key_prefix  TEXT,                             -- creating scoped key's prefix: only its keys' events
  created_at  INTEGER NOT NULL
) STRICT;
CREATE INDEX webhooks_org ON webhooks (org_id);

CREATE TABLE webhook_events (
  id         TEXT    PRIMARY KEY,               -- evt_...
  type       TEXT    NOT NULL,
  body       TEXT    NOT NULL,                  -- the JSON payload as signed and sent; never a value
  created_at INTEGER NOT NULL
) STRICT;
CREATE INDEX webhook_events_created ON webhook_events (created_at);

CREATE TABLE webhook_deliveries (
  id              INTEGER PRIMARY KEY,
  webhook_id      TEXT    NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
  event_id        TEXT    NOT NULL REFERENCES webhook_events (id),
  state           TEXT    NOT NULL CHECK (state IN ('pending', 'delivered', 'failed')),
  attempts        INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
  next_attempt_at INTEGER,                      -- when a pending delivery is due; NULL once finished
  updated_at      INTEGER NOT NULL,
  CHECK ((state = 'pending') = (next_attempt_at IS NOT NULL))
) STRICT;
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at, id) WHERE state = 'pending';
CREATE INDEX webhook_deliveries_webhook ON webhook_deliveries (webhook_id);
CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_id);
CREATE INDEX webhook_deliveries_done ON webhook_deliveries (updated_at) WHERE state <> 'pending';

CREATE TABLE webhook_attempts (
  id          INTEGER PRIMARY KEY,
  delivery_id INTEGER NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
  webhook_id  TEXT    NOT NULL,
  event_id    TEXT    NOT NULL,
  type        TEXT    NOT NULL,
  attempt     INTEGER NOT NULL CHECK (attempt >= 1),
  status      TEXT    NOT NULL CHECK (status IN ('delivered', 'retrying', 'failed')),
  http_status INTEGER,                          -- the receiver's status; NULL when none came
  error       TEXT,                             -- short reason; NULL on success
  at          INTEGER NOT NULL
) STRICT;
CREATE INDEX webhook_attempts_webhook ON webhook_attempts (webhook_id, id);
CREATE INDEX webhook_attempts_delivery ON webhook_attempts (delivery_id);

-- version: 4
-- Issue 4: organizations, principals, roles and principal keys.
-- Org secrets live in `secrets` with scope = the org id. No cascading
-- deletes: the foreign keys make the database refuse to drop an org, a
-- principal or a role something still refers to (decisions.md section 6).
-- Lists page in creation order by rowid.

CREATE TABLE orgs (
  id         TEXT    PRIMARY KEY,               -- org_...
  name       TEXT    NOT NULL UNIQUE,
  metadata   TEXT    NOT NULL DEFAULT '{}',     -- JSON object, at most 16 KiB
  created_at INTEGER NOT NULL
) STRICT;

-- Custom roles only; the built-in roles (reader, writer, admin, owner) are
-- constants in domain/permissions.ts and their names are reserved.
CREATE TABLE roles (
  id          INTEGER PRIMARY KEY,
  org_id      TEXT    NOT NULL REFERENCES orgs (id),
  name        TEXT    NOT NULL,
  permissions TEXT    NOT NULL,                 -- letters of rRlLcCpPaAmMdD, each at most once
  created_at  INTEGER NOT NULL,
  UNIQUE (org_id, name)
) STRICT;

CREATE TABLE principals (
  id         TEXT    PRIMARY KEY,               -- prn_...
  org_id     TEXT    NOT NULL REFERENCES orgs (id),
  name       TEXT    NOT NULL,
  role       TEXT    NOT NULL,                  -- a built-in role name or a custom role of the org
  metadata   TEXT    NOT NULL DEFAULT '{}',
  created_at INTEGER NOT NULL,
  UNIQUE (org_id, name)
) STRICT;
CREATE INDEX principals_role ON principals (org_id, role);

-- Principal keys: only the SHA-256 of the vpk_ token is stored. Revoking a
-- key deletes its row.
CREATE TABLE principal_keys (
  id           TEXT    PRIMARY KEY,             -- pk_...
  principal_id TEXT    NOT NULL REFERENCES principals (id),
  org_id       TEXT    NOT NULL REFERENCES orgs (id),
  name         TEXT    NOT NULL,
  token_hash   TEXT    NOT NULL UNIQUE,
  valid_after  INTEGER,                         -- ms; NULL: valid at once
  valid_before INTEGER,                         -- ms; NULL: no end
  created_at   INTEGER NOT NULL,
  CHECK (valid_before IS NULL OR valid_after IS NULL OR valid_before > valid_after)
) STRICT;
CREATE INDEX principal_keys_principal ON principal_keys (principal_id);

-- version: 6
-- Webhook health: consecutive deliveries that ended failed (every attempt
-- failed), reset by a delivered one. At VAULT_WEBHOOK_FAILING_AFTER the
-- webhook is failing (failing_since, ms): its deliveries get one attempt
-- each, no retries, until one is delivered again.
ALTER TABLE webhooks ADD COLUMN failed_deliveries INTEGER NOT NULL DEFAULT 0;
ALTER TABLE webhooks ADD COLUMN failing_since INTEGER;

-- version: 7
-- Audit time bounds (since/until) find their id by a binary search over the
-- primary key (`at` never decreases along the chain), so the index on `at`
-- is one index less to write on every audited request.
DROP INDEX audit_at;

-- version: 8
-- Repeated failed authentications from one remote address within the
-- brute-force window are coalesced (access-guard.ts AuthFailureCoalescer):
-- the first ones get a row each, the rest one `auth.failed` row whose count
-- says how many requests it stands for. NULL: the row stands for one event.
-- The chain hash covers count when it is not NULL, so rows written before
-- keep their hashes.
ALTER TABLE audit ADD COLUMN count INTEGER CHECK (count IS NULL OR count >= 1);

-- version: 9
-- The audit key index leaves out the rows of public secrets (a key of 64
-- lower-case hex characters: the public id shape, which keyed secrets may not
-- take) and rows without a key. A public id is 256 random bits, so each of its
-- rows landed on a random leaf of this index: a page written to the WAL per
-- row and per batch. A query by a public id scans the scope's rows instead
-- (SqliteAuditStore.page); a query by any other key seeks this index, whose
-- WHERE the query repeats word for word (SQLite uses a partial index only then).
DROP INDEX audit_scope_key;
CREATE INDEX audit_scope_key ON audit (scope, key) WHERE NOT (length(key) = 64 AND key NOT GLOB '*[^0-9a-f]*');

-- version: 10
-- Audit spans replace the three audit indexes (SqliteAuditStore). An index
-- entry per row cost a commit of 45 reads about 11 WAL frames: entries of one
-- scope, action or key land on one leaf, and an index leaf that fills is
-- rebalanced with its siblings (SQLite's quick balance is for table b-trees
-- only), so every index rewrote two or three leaves per COMMIT. A span is one
-- entry per batch for each scope ('s', value ''), each (scope, action) ('a')
-- and each (scope, key) ('k') the batch wrote: the ids from lo to hi, both
-- inclusive, hold every row of the batch with that value in that range, and
-- perhaps others of the batch in between. A span covers at most 64 ids (a
-- larger batch gets more spans: SqliteAuditStore MAX_SPAN_IDS). Spans of one
-- (kind, scope, value) never overlap, so a query walks them by lo, newest
-- first, and reads their id ranges of the table, skipping the rows that do
-- not match: at most 63 for each span that holds a match.
-- Keys of a public id's shape (64 lower-case hex: random, one span per row)
-- and rows without a key get no key span; a query by a public id walks the
-- scope's spans, as it scanned the scope's index before.
-- Existing rows get spans of the same bound: one per block of 64 ids.
CREATE TABLE audit_span (
  kind  TEXT    NOT NULL CHECK (kind IN ('s', 'a', 'k')),
  scope TEXT    NOT NULL,
  value TEXT    NOT NULL,                       -- '' for 's', the action for 'a', the key for 'k'
  lo    INTEGER NOT NULL,                       -- first audit id of the span
  hi    INTEGER NOT NULL CHECK (hi >= lo),      -- last audit id of the span
  PRIMARY KEY (kind, scope, value, lo)
) WITHOUT ROWID, STRICT;
INSERT INTO audit_span (kind, scope, value, lo, hi)
  SELECT 's', scope, '', min(id), max(id) FROM audit GROUP BY scope, id >> 6;
INSERT INTO audit_span (kind, scope, value, lo, hi)
  SELECT 'a', scope, action, min(id), max(id) FROM audit GROUP BY scope, action, id >> 6;
INSERT INTO audit_span (kind, scope, value, lo, hi)
  SELECT 'k', scope, key, min(id), max(id) FROM audit
  WHERE key IS NOT NULL AND NOT (length(key) = 64 AND key NOT GLOB '*[^0-9a-f]*')
  GROUP BY scope, key, id >> 6;
CREATE TRIGGER audit_span_no_update BEFORE UPDATE ON audit_span
BEGIN
  SELECT RAISE(ABORT, 'audit rows are append-only');
END;
CREATE TRIGGER audit_span_no_delete BEFORE DELETE ON audit_span
BEGIN
  SELECT RAISE(ABORT, 'audit rows are append-only');
END;
DROP INDEX audit_scope;
DROP INDEX audit_scope_action;
DROP INDEX audit_scope_key;

-- version: 11
-- Each webhook's own signing secret (docs/webhooks.md "Verifying a
-- delivery"): derived from VAULT_WEBHOOK_SECRET, the webhook id and the
-- generation, never stored. A rotation moves to the next generation; the
-- previous one still signs deliveries until previous_signing_until.
ALTER TABLE webhooks ADD COLUMN signing_generation INTEGER NOT NULL DEFAULT 0 CHECK (signing_generation >= 0);
ALTER TABLE webhooks ADD COLUMN previous_signing_until INTEGER;

-- version: 12
-- Principal key lineage: parent_key_id is the key that minted this one
-- through POST /me/keys; NULL for a key the master key made, and for every
-- key made before this version. Revoking a key revokes its descendants,
-- transitively, in the same transaction (domain/principal-keys.ts); no
-- foreign key, so that the store deletes them itself, each with its audit row.
ALTER TABLE principal_keys ADD COLUMN parent_key_id TEXT;
CREATE INDEX principal_keys_parent ON principal_keys (parent_key_id) WHERE parent_key_id IS NOT NULL;

-- version: 13
-- A key's audit rows are chained instead of spanned (SqliteAuditStore): a
-- read of another key no longer writes a key span on a random leaf of
-- audit_span. Each row of a (scope, key) that gets key spans names the
-- previous row of that (scope, key) in `prev` (set at insert, never changed,
-- not covered by the chain hash; NULL: none, or a row written before this
-- version, whose predecessors the key spans find). The newest row of a key
-- is kept in its live secret's row (`audit_head`, moved by the batch that
-- writes the key's rows: the secret's page is dirty anyway); a key span is
-- written only for rows of a key with no live secret when their batch
-- commits (a 404, key and webhook ids, a burn, a delete, an expiry), and by
-- the secrets store when a live secret stops being live (SqliteSecretStore
-- remove and expire: its head would otherwise be lost; a trigger doing the
-- same doubled the sweeper's time per expiry), and for one row in about 64
-- (a checkpoint). A query by key starts at the live secret's head, else the
-- key's newest span, and follows `prev`.
ALTER TABLE audit ADD COLUMN prev INTEGER;
ALTER TABLE secrets ADD COLUMN audit_head INTEGER;

-- version: 14
-- Read counts are written behind (store/sqlite/read-tally.ts): inside a
-- batch, a counted read of a secret with an audit chain moves its count and
-- its key's audit head in memory, and the secret's row is written back by
-- the next batch that writes it anyway, or about once a second; the audit
-- log, which records every counted read in the read's own transaction, is
-- the redo log. A row's read_count always counts exactly the reads at or
-- below its audit_head. Meta `reads_flushed` is an audit id at or below
-- which every row is in the secrets' rows; after a crash the vault replays
-- the rows above it before it serves (store/sqlite/read-replay.ts). A build
-- before this version would not replay them, hence the version.
INSERT INTO meta (name, value) SELECT 'reads_flushed', coalesce(max(id), 0) FROM audit;

-- version: 15
-- Written-back read counts (store/sqlite/read-tally.ts): the read tally
-- writes a secret's pending pair (read_count, audit_head) here, not into the
-- secret's row. A secrets row of about 170 bytes shares its page with about
-- 24 others, so at a million secrets read at random every write-back wrote a
-- page of its own (a WAL frame, then a checkpoint write); a row here is about
-- 14 bytes, about 290 share a page, and the tally writes back the pending
-- secrets of one range of 256 ids together. A row here supersedes its
-- secret's pair, and agrees with itself as the secret's row does (read_count
-- counts exactly the reads at or below audit_head); a change of the secret's
-- row (patch, replace, seal, expire, remove, a compare-and-set read) first
-- folds it into the row and deletes it, so it exists only for a live secret
-- whose row has not been written since. No foreign key: the stores keep it.
CREATE TABLE secret_reads (
  id         INTEGER PRIMARY KEY,                   -- secrets.id
  read_count INTEGER NOT NULL CHECK (read_count >= 0),
  audit_head INTEGER
) STRICT;

-- version: 16
-- A row's key-chain link is under its chain hash (SqliteAuditStore insert,
-- model/audit-chain.ts rowHash): from the row id recorded here on, each
-- row's hash covers `prev` too, so a link rewritten without the root key
-- shows in `audit verify`. Rows below it keep their hashes and verify under
-- the rule they were written with; `audit verify` checks every row's link
-- against the rows themselves all the same (store/sqlite/audit-verify.ts;
-- docs/audit.md, "What is tamper-evident"). The boundary needs no MAC: a
-- row's hash holds under one rule only, so moving it breaks the chain.
INSERT INTO meta (name, value) SELECT 'audit_prev_from', coalesce(max(id), 0) + 1 FROM audit;
-- version: 17
-- Reveal checks of end-to-end links (docs/share.md, "The reveal proof"): a
-- public secret made with `reveal_check` keeps here the SHA-256 of the proof
-- its link holder must send to POST /s/<id>/reveal (never the proof), the
-- sender's max_failed_reveals and the refusals so far. Keyed by the public
-- id (a fresh 256-bit id, never reused, unlike a rowid), in a table of its
-- own so the read path of every other secret is unchanged. A reveal that
-- burns the secret (its last read, or the refusal that reaches
-- max_failed_reveals) deletes the row with the secret; a row whose secret
-- expired or was read by the API names no live secret (the id is never
-- reused) and is removed by a prune of the global scope.
CREATE TABLE reveal_checks (
  key          TEXT    PRIMARY KEY,                  -- the public id (secrets.key, scope 'global')
  check_hash   BLOB    NOT NULL CHECK (length(check_hash) = 32),
  max_failures INTEGER CHECK (max_failures IS NULL OR max_failures >= 1),
  failures     INTEGER NOT NULL DEFAULT 0 CHECK (failures >= 0)
) STRICT;
-- version: 18
-- Anonymous links (docs/share.md, "Anonymous links"): a public secret made
-- without a token by the create page carries the network it came from (an
-- IPv4 address, or an IPv6 /48), so the anonymous caps count it per network
-- and in all, and the free tier of token holders does not count it (NULL for
-- every other secret, and for every secret made before this version).
ALTER TABLE secrets ADD COLUMN anonymous_net TEXT;
CREATE INDEX secrets_anonymous ON secrets (anonymous_net) WHERE anonymous_net IS NOT NULL AND state IN ('active', 'sealed');
-- version: 19
-- A secret's value version (docs/operations.md, "Encryption at rest"): 1 for
-- a new secret, one more in the same statement as every write of a new
-- ciphertext (a replace, `rekey`), and bound into the value's AAD (envelope
-- v3, crypto/aad.ts aadForValue), so a replace's older ciphertext pasted
-- back into its row no longer opens: a replace keeps the row and its
-- created_at. Rows written before this version get 0; a v1 or v2 envelope
-- opens only at 0, so an old one pasted into a row replaced since does not.
ALTER TABLE secrets ADD COLUMN value_version INTEGER NOT NULL DEFAULT 0 CHECK (value_version >= 0);
-- version: 20
-- Requests (docs/requests.md): a token holder asks someone for a secret. The
-- row holds what the answer page shows (the description, who asked) and
-- what the answer is encrypted to (the asker's public key): never a private
-- key, never a value. `reveal_check` is the SHA-256 of the reveal proof the
-- asker derives from the private key (NULL: the answer is read with the
-- answer id only), copied to the answer's reveal check. One answer per
-- request: the guarded UPDATE ... WHERE state = 'open' that records it runs
-- in the same transaction as the answer's insert (a public secret,
-- `answer_id`). `expires_at` is the request's until it is answered, then
-- the answer's (answered_at + ttl_seconds); the sweeper deletes the rows
-- past it (an open one with `request.expired`).
CREATE TABLE requests (
  id           TEXT    PRIMARY KEY CHECK (length(id) = 64),  -- 256-bit capability, hex
  scope        TEXT    NOT NULL,                             -- 'global' or an org id
  owner_id     TEXT,                                         -- scoped key or principal that asked; NULL: the master key
  asker        TEXT    NOT NULL,                             -- the name the answer page shows
  description  TEXT    NOT NULL,
  public_key   TEXT    NOT NULL,                             -- P-256 point, base64url
  reveal_check BLOB    CHECK (reveal_check IS NULL OR length(reveal_check) = 32),
  ttl_seconds  INTEGER NOT NULL CHECK (ttl_seconds >= 1),
  max_reads    INTEGER NOT NULL CHECK (max_reads >= 1),
  state        TEXT    NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'answered')),
  created_at   INTEGER NOT NULL,
  expires_at   INTEGER NOT NULL,
  answered_at  INTEGER,
  answer_id    TEXT
) STRICT;
CREATE INDEX requests_scope ON requests (scope, owner_id);
CREATE INDEX requests_due ON requests (expires_at);
-- version: 21
-- Receipts (docs/share.md, "Receipts"): the sender's capability on one public
-- secret, stored as the SHA-256 of its token (never the token). Keyed by the
-- secret's row id and public id, which the token's first bytes and the
-- secret's events carry: a public create appends to this one B-tree in row
-- id order, with no random-keyed index to write (docs/performance.md,
-- "Receipts"); the public id tells apart a row id SQLite gave again after
-- its row was deleted. The row follows its secret: `read_count` and
-- `last_read_at` at each read, then the end (`state` burned, expired or
-- deleted, `ended_at`); it outlives the secret by the TTL the secret had (7
-- days for one without), `keep_until`, when the sweeper deletes it. Never
-- the value, the link key or an address.
CREATE TABLE receipts (
  secret_id    INTEGER NOT NULL,                                  -- secrets.id when it was made
  public_id    BLOB    NOT NULL CHECK (length(public_id) = 32),   -- secrets.key, as bytes
  token_hash   BLOB    NOT NULL CHECK (length(token_hash) = 32),  -- SHA-256 of the vrc_ token
  created_at   INTEGER NOT NULL,
  expires_at   INTEGER,
  max_reads    INTEGER,
  read_count   INTEGER NOT NULL DEFAULT 0 CHECK (read_count >= 0),
  last_read_at INTEGER,
  state        TEXT    NOT NULL DEFAULT 'live' CHECK (state IN ('live', 'burned', 'expired', 'deleted')),
  ended_at     INTEGER,
  keep_until   INTEGER,
  CHECK ((state = 'live') = (ended_at IS NULL)),
  PRIMARY KEY (secret_id, public_id)
) STRICT, WITHOUT ROWID;
CREATE INDEX receipts_keep ON receipts (keep_until) WHERE keep_until IS NOT NULL;
-- version: 22
-- Idempotency keys (docs/api.md, "Retries"): the first answer of a request
-- sent with an `Idempotency-Key`, kept with its change, in its transaction,
-- for VAULT_IDEMPOTENCY_WINDOW seconds, so a retry gets it again and changes
-- nothing. Keyed by the SHA-256 of the token's identity and the key (never
-- the key or the token); `fingerprint` the SHA-256 of the method, path and
-- body the key was first used with; `body` the answer encrypted under the
-- vault's key (a read's answer holds a value), deleted by the sweeper at
-- `expires_at` like a burned value.
CREATE TABLE idempotency (
  id_hash     BLOB    PRIMARY KEY CHECK (length(id_hash) = 32),
  fingerprint BLOB    NOT NULL CHECK (length(fingerprint) = 32),
  status      INTEGER NOT NULL,
  body        BLOB    NOT NULL,
  created_at  INTEGER NOT NULL,
  expires_at  INTEGER NOT NULL
) STRICT, WITHOUT ROWID;
CREATE INDEX idempotency_due ON idempotency (expires_at);
-- version: 23
-- Single sign-on (docs/sso.md): the person an identity provider vouches for
-- (its issuer and the ID token's `sub`) and the principal they are, made at
-- their first sign-in. No foreign key: a principal deleted by an operator
-- leaves its link, and the person's next sign-in makes a new principal and
-- moves the link there. Never a token or a claim beyond the subject.
CREATE TABLE oidc_identities (
  issuer       TEXT    NOT NULL,
  subject      TEXT    NOT NULL,
  org_id       TEXT    NOT NULL,
  principal_id TEXT    NOT NULL,
  created_at   INTEGER NOT NULL,
  PRIMARY KEY (issuer, subject)
) STRICT, WITHOUT ROWID;
-- version: 24
-- A file link's metadata shown before the reveal (docs/share.md, "The file's
-- metadata before the reveal"): the create's `file_meta`, the file's name,
-- type and size encrypted under the link key (opaque to the vault), keyed
-- by the public id. Deleted with its secret (burn, expiry, delete); a row
-- left by a secret gone otherwise is removed by a prune of the global scope.
CREATE TABLE file_metas (
  key       TEXT PRIMARY KEY,                  -- the public id (secrets.key, scope 'global')
  file_meta TEXT NOT NULL CHECK (length(file_meta) BETWEEN 1 AND 1400)
) STRICT;
