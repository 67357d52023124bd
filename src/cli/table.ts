/**
 * The `ls` table: KEY (or a public secret's id), READS (`read_count/max_reads`,
 * `/-` without a limit), EXPIRES (UTC, or `never`), and STATE for org secrets.
 * Values never appear: only these metadata fields are read.
 * @param entries list metadata as the API returns it (expires_at in Unix seconds).
 * @returns the text, one line per entry under a header; `no secrets` when empty.
 */
export function formatTable(entries: ReadonlyArray<Record<string, unknown>>): string {
  if (entries.length === 0) return "no secrets\n";
  const withState = entries.some((e) => typeof e.state === "string");
  const rows = entries.map((e) => {
    const name = typeof e.key === "string" ? e.key : typeof e.id === "string" ? e.id : "?";
    const reads = `${num(e.read_count) ?? 0}/${num(e.max_reads) ?? "-"}`;
    const expiresAt = num(e.expires_at);
    const expires = expiresAt === undefined ? "never" : new Date(expiresAt * 1000).toISOString().replace(/\.000Z$/, "Z");
    return withState ? [name, reads, expires, typeof e.state === "string" ? e.state : ""] : [name, reads, expires];
  });
  const header = withState ? ["KEY", "READS", "EXPIRES", "STATE"] : ["KEY", "READS", "EXPIRES"];
  const all = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((r) => (r[i] ?? "").length)));
  return all.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i] ?? 0))).join("  ")).join("\n") + "\n";
}

function num(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}
