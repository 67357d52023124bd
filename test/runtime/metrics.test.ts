import parsePrometheusTextFormat from "parse-prometheus-text-format";
import { describe, expect, it } from "vitest";
import { buildTestVault, createKey, MASTER_KEY } from "../support/helpers.js";

const METRICS_TOKEN = "metrics-token-0123456789abcdef";

interface Family {
  name: string;
  type: string;
  metrics: { value?: string; labels?: Record<string, string>; buckets?: Record<string, string>; count?: string }[];
}

async function scrape(v: ReturnType<typeof buildTestVault>, token: string = MASTER_KEY): Promise<{ text: string; families: Map<string, Family> }> {
  const res = await v.request("GET", "/metrics", { token });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^text\/plain/);
  const text = await res.text();
  const families = new Map((parsePrometheusTextFormat(text) as Family[]).map((f) => [f.name, f]));
  return { text, families };
}

function valueOf(families: Map<string, Family>, name: string, labels: Record<string, string> = {}): number {
  const family = families.get(name);
  const metric = family?.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
  return Number(metric?.value ?? Number.NaN);
}

describe("GET /metrics", () => {
  it("serves the Prometheus text format, parsable, with the vault's metrics moving", async () => {
    const v = buildTestVault();
    await v.asMaster("POST", "/secrets", { key: "once", value: "burn-me-value", max_reads: 1 });
    await v.asMaster("GET", "/secrets/once");
    await v.request("GET", "/secrets", { token: "wrong" });
    const { families } = await scrape(v);
    expect(valueOf(families, "vault_secret_events_total", { type: "secret.burned" })).toBe(1);
    expect(valueOf(families, "vault_secret_events_total", { type: "secret.created" })).toBe(1);
    expect(valueOf(families, "vault_http_requests_total", { method: "GET", route: "/secrets/:key{.+}", status: "200" })).toBe(1);
    expect(valueOf(families, "vault_auth_failures_total")).toBe(1);
    expect(valueOf(families, "vault_active_secrets")).toBe(0);
    expect(valueOf(families, "vault_webhook_outbox_pending")).toBe(0);
    expect(families.get("vault_group_commit_batch_size")?.type).toBe("HISTOGRAM");
    expect(families.get("vault_group_commit_duration_seconds")?.type).toBe("HISTOGRAM");
    expect(families.get("vault_http_request_duration_seconds")?.type).toBe("HISTOGRAM");
  });

  it("never carries a secret key, public id, token or value in a label", async () => {
    const v = buildTestVault({ metricsToken: METRICS_TOKEN });
    await v.asMaster("POST", "/secrets", { key: "team/db-password", value: "hunter2-value" });
    const pub = (await (await v.asMaster("POST", "/secrets", { value: "dead-drop-value" })).json()) as { id: string };
    const key = await createKey(v, { permissions: ["read"], prefix: "team/" });
    await v.request("GET", "/secrets/team/db-password", { token: key.token });
    await v.asMaster("GET", `/secrets/${pub.id}`);
    const { text } = await scrape(v, METRICS_TOKEN);
    for (const secret of ["team/db-password", "hunter2-value", "dead-drop-value", pub.id, key.token, key.id, MASTER_KEY, METRICS_TOKEN]) {
      expect(text).not.toContain(secret);
    }
  });

  it("lets in the master key and VAULT_METRICS_TOKEN only; the metrics token reads nothing else", async () => {
    const v = buildTestVault({ metricsToken: METRICS_TOKEN });
    const admin = await createKey(v, { permissions: ["admin"] });
    expect((await v.request("GET", "/metrics", { token: null })).status).toBe(401);
    expect((await v.request("GET", "/metrics", { token: "not-a-token" })).status).toBe(401);
    expect((await v.request("GET", "/metrics", { token: admin.token })).status).toBe(403);
    expect((await v.request("GET", "/metrics", { token: METRICS_TOKEN })).status).toBe(200);
    for (const [method, path] of [["GET", "/secrets"], ["POST", "/secrets"], ["GET", "/audit"], ["GET", "/orgs"], ["GET", "/me"], ["GET", "/keys"]]) {
      expect((await v.request(method as string, path as string, { token: METRICS_TOKEN, body: method === "POST" ? { value: "x" } : undefined })).status, `${method} ${path}`).toBe(403);
    }
    // Without VAULT_METRICS_TOKEN that string is no token at all.
    expect((await buildTestVault().request("GET", "/metrics", { token: METRICS_TOKEN })).status).toBe(401);
  });
});
