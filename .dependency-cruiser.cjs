// The layer check (`npm run lint:layers`, docs/testing.md "The layer check"): the import
// rules of src/, in the order of docs/architecture.md's picture (http → domain → store →
// engines). Type-only imports count: a layer that needs another's type depends on it.
// There is no exception list: a violation is fixed in the code, never allowed here.

/** Engine-specific store code, HTTP edge and the outer front ends. */
const OUTER = "^src/(store/(sqlite|pg)|http|cli|mcp|webhooks|runtime|ops|assembly)/";

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment: "No import cycle in src/: each layer builds on the ones below it only.",
      from: { path: "^src/" },
      to: { circular: true },
    },
    {
      name: "domain-stays-inner",
      severity: "error",
      comment:
        "src/domain holds the decisions; it reaches storage through the engine-neutral " +
        "interfaces of src/store/*.ts only, and knows nothing of HTTP, the CLI, MCP or the pages.",
      from: { path: "^src/domain/" },
      to: { path: OUTER },
    },
    {
      name: "engines-behind-the-store",
      severity: "error",
      comment:
        "The engines (src/store/sqlite, src/store/pg) are reached through the engine-neutral files of " +
        "src/store (store/tools.ts for the offline tools, store/engine.ts, ...); which engine runs is chosen " +
        "there or in the assembly (vault.ts, open-node.ts, server.ts, embed.ts, internal.ts), never above.",
      from: { path: "^src/(ops|cli|http|mcp|domain|webhooks|inject|config)/" },
      to: { path: "^src/store/(sqlite|pg)/" },
    },
    {
      name: "store-below-domain",
      severity: "error",
      comment: "src/store (interfaces and both engines) sits below src/domain and src/http: it imports neither.",
      from: { path: "^src/store/" },
      to: { path: "^src/(domain|http)/" },
    },
    {
      name: "edges-not-cli",
      severity: "error",
      comment: "Nothing but the assembly is built on the CLI (the CLI is one more front end, at the top).",
      from: { path: "^src/(http|mcp|ops|runtime|webhooks|domain|store|model|inject|crypto|config|log)/" },
      to: { path: "^src/cli/" },
    },
    {
      name: "assembly-at-the-top",
      severity: "error",
      comment:
        "src/assembly (createVault, a node's storage, the server, startVault) is built on every layer; only the " +
        "entries (src/index.ts, src/internal.ts, src/cli.ts), the serve command and the single executable start it.",
      from: { path: "^src/", pathNot: "^src/(assembly/|index\\.ts$|internal\\.ts$|cli\\.ts$|cli/admin/serve\\.ts$|sea/)" },
      to: { path: "^src/assembly/" },
    },
    {
      name: "ops-are-offline-tools",
      severity: "error",
      comment:
        "src/ops holds the offline tools (backup, restore, rekey, migrate --from-sqlite), run by the admin commands " +
        "of src/cli/admin only; the running server's parts are src/runtime.",
      from: { path: "^src/", pathNot: "^src/(ops|cli/admin)/" },
      to: { path: "^src/ops/" },
    },
    {
      name: "cli-client-over-http",
      severity: "error",
      comment:
        "src/cli/client (the commands that call a vault over HTTP) imports no admin command nor the server's layers; " +
        "of the runtime only the address file, which the server writes and the client reads (its one shared format).",
      from: { path: "^src/cli/client/" },
      to: { path: "^src/(cli/admin|assembly|ops|store|domain|http|runtime|webhooks)/", pathNot: "^src/runtime/address-file\\.ts$" },
    },
    {
      name: "client-standalone",
      severity: "error",
      comment: "packages/client is the published client (@ephemeral-vault/client): it imports nothing of the server.",
      from: { path: "^packages/client/src/" },
      to: { path: "^src/" },
    },
    {
      name: "model-is-the-floor",
      severity: "error",
      comment:
        "src/model (entities, records, Permission, errors, the audit chain's math) is what domain and " +
        "store share: it imports neither, nor anything above them (crypto only).",
      from: { path: "^src/model/" },
      to: { path: "^src/", pathNot: "^src/(model|crypto/(hmac|tokens|random))" },
    },
    {
      name: "inject-below-front-ends",
      severity: "error",
      comment:
        "src/inject (secrets into a child's environment: names, planning, reading, masking, the child) " +
        "serves both the CLI (run, export) and the MCP server (run_command); it imports neither.",
      from: { path: "^src/inject/" },
      to: { path: "^src/(cli|mcp|http)/" },
    },
    {
      name: "tally-behind-its-index",
      severity: "error",
      comment:
        "The SQLite read tally (read counts written behind, their table, the replay) is one seam: " +
        "code outside src/store/sqlite/tally/ imports its entry tally/index.ts only.",
      from: { pathNot: "^src/store/sqlite/tally/" },
      to: { path: "^src/store/sqlite/tally/", pathNot: "^src/store/sqlite/tally/index\\.ts$" },
    },
    {
      name: "pg-batch-one-entry",
      severity: "error",
      comment:
        "src/store/pg/batch (the PostgreSQL unit of work, group commit, ordering declaration, write-behind, " +
        "corked connection, prefetch, prepared statements) is reached through its entry, batch/index.ts, only.",
      from: { path: "^src/", pathNot: "^src/store/pg/batch/" },
      to: { path: "^src/store/pg/batch/", pathNot: "^src/store/pg/batch/index\\.ts$" },
    },
    {
      name: "crypto-is-a-leaf",
      severity: "error",
      comment: "src/crypto (cipher, HMAC, tokens, license) imports no store, HTTP or domain code.",
      from: { path: "^src/crypto/" },
      to: { path: "^src/(store|http|domain)/" },
    },
  ],
  options: {
    includeOnly: "^(src|packages/client/src)/",
    doNotFollow: { path: "node_modules" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      extensions: [".ts", ".tsx", ".d.ts", ".js", ".mjs"],
    },
    reporterOptions: {
      text: { highlightFocused: true },
    },
  },
};
