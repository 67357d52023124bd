import type { Child } from "hono/jsx";
import { fill } from "../strings.js";
import { AuditTable } from "./audit-table.js";
import type { ConsoleCtx, Registrar } from "./kit.js";
import { Frame, mayOnSecrets, rows, secretsBase, takeFlash, text } from "./kit.js";
import { pageQuery } from "./widgets.js";

/** What the console's pages show besides the API's answers (built by createApp from the vault's settings and its domain). */
export interface ConsoleInfo {
  version: string;
  /** "SQLite file" or "PostgreSQL". */
  engine: string;
  /** The license: its holder and expiry (Unix seconds, null: none); undefined without a valid license (the free tier). */
  license: () => { holder: string; expiresAt: number | null } | undefined;
  /** The free tier's active-secret limit. */
  freeTierLimit: number;
  /** Secrets that count toward the free tier (global and org together). */
  freeTierUse: () => Promise<number>;
  /** Current time, Unix milliseconds. */
  now: () => number;
  /**
   * Which of the public ids (a page of the token's own list) were made with
   * a reveal check, in one lookup: the secrets page's Kind `end-to-end link`
   * (docs/console.md, "Secrets"; docs/share.md, "The reveal proof").
   */
  endToEnd: (ids: readonly string[]) => Promise<Set<string>>;
  /** The audit hash chain's state, by the check `ephemeral-vault audit verify` runs; undefined where it cannot run here. */
  verifyAudit?: (() => Promise<ChainState>) | undefined;
}

/** The audit chain's state: intact through `rows` entries, or broken at entry `at` (a row id, or `chain#seq` on PostgreSQL). */
export type ChainState = { ok: true; rows: number } | { ok: false; rows: number; at: string; reason: string };

/** How many list pages of 1000 the overview reads to count secrets. */
const COUNT_PAGES = 10;

/** Counts active, sealed and soon-expiring secrets from the API's list (what this token may list). */
async function countSecrets(ctx: ConsoleCtx, nowMs: number): Promise<{ active: number; sealed: number; soon: number; more: boolean } | undefined> {
  if (!mayOnSecrets(ctx.session.caps, "list")) return undefined;
  let cursor: string | undefined;
  const counts = { active: 0, sealed: 0, soon: 0, more: false };
  for (let i = 0; i < COUNT_PAGES; i++) {
    const answer = await ctx.api("GET", pageQuery(secretsBase(ctx.session.caps), 1000, cursor));
    if (answer.status !== 200) return undefined;
    for (const row of rows(answer, "secrets")) {
      if (row.state === "sealed") counts.sealed += 1;
      else counts.active += 1;
      if (typeof row.expires_at === "number" && row.expires_at * 1000 - nowMs <= 86_400_000) counts.soon += 1;
    }
    cursor = typeof answer.body.next_cursor === "string" ? answer.body.next_cursor : undefined;
    if (cursor === undefined) return counts;
  }
  counts.more = true;
  return counts;
}

/** One fact of the overview's list: its term and its value. */
function Fact(props: { term: string; children?: Child }) {
  return (
    <div>
      <dt>{props.term}</dt>
      <dd>{props.children}</dd>
    </div>
  );
}

/**
 * GET /ui/overview (docs/console.md, "Overview"): secret counts (what the
 * token may list), free-tier use or the license, version, engine, health
 * and the last 20 audit entries the token may read.
 */
export function overviewRoutes(r: Registrar, info: ConsoleInfo): void {
  r.page("overview", async (ctx) => {
    const { s, session } = ctx;
    const caps = session.caps;
    const counts = await countSecrets(ctx, info.now());
    const health = await ctx.api("GET", "/health");
    const auditPath = caps.kind === "principal" ? (caps.letters.includes("a") ? `/orgs/${caps.orgId}/audit?limit=20` : undefined) : "/audit?limit=20";
    const audit = auditPath === undefined ? undefined : await ctx.api("GET", auditPath);
    const license = info.license();
    // The vault-wide count only for who may list every global secret (the master key, admin keys without a prefix).
    const vaultWide = caps.kind === "master" || (caps.kind === "scoped" && caps.permissions.includes("admin") && caps.prefix === null);
    const tierUse = license === undefined && vaultWide ? await info.freeTierUse() : undefined;
    const more = counts?.more === true ? "+" : "";
    return (
      <Frame ctx={ctx} title={s.overviewTitle} section="overview" flash={takeFlash(ctx)}>
        <dl class="facts">
          {counts === undefined ? (
            <Fact term={s.activeSecrets}>{s.notListed}</Fact>
          ) : (
            <>
              <Fact term={s.activeSecrets}>{`${counts.active}${more}`}</Fact>
              <Fact term={s.sealedSecrets}>{`${counts.sealed}${more}`}</Fact>
              <Fact term={s.expiringSoon}>{`${counts.soon}${more}`}</Fact>
            </>
          )}
          <Fact term={s.planLabel}>
            {license === undefined
              ? fill(s.freeTier, { n: tierUse ?? "?", limit: info.freeTierLimit })
              : fill(s.licensed, {
                  holder: license.holder,
                  until: license.expiresAt === null ? s.licenseNoExpiry : fill(s.licenseUntil, { time: new Date(license.expiresAt * 1000).toISOString().slice(0, 10) }),
                })}
          </Fact>
          <Fact term={s.version}>{info.version}</Fact>
          <Fact term={s.engine}>{info.engine}</Fact>
          <Fact term={s.health}>{text(health.body.status)}</Fact>
        </dl>
        {audit === undefined || audit.status !== 200 ? null : (
          <section>
            <h2>{s.recentAudit}</h2>
            <AuditTable s={s} entries={rows(audit, "entries")} />
          </section>
        )}
      </Frame>
    );
  });
}
