import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { VaultClient } from "@ephemeral-vault/client";
import { BIN, childEnv, cleanupTemp, E2E_MASTER_KEY, killChildren, ROOT, startVault, tempDir } from "../support/e2e-helpers.js";
import type { VaultProcess } from "../support/e2e-helpers.js";

// `ephemeral-vault get <link>` at a real terminal (docs/cli.md, docs/share.md "From the command line
// and the client"): the built command runs under a pseudo-terminal made by util-linux `script`, so its
// stdin and stderr are a tty and the passphrase is typed at its prompt. A wrong passphrase is refused by
// the vault before any read (the reveal proof), so the command asks again, 3 tries in all.

const PASSPHRASE = "correct horse battery staple";
const WRONG = ["tr0ub4dor&3 wrong one", "hunter2 hunter2 wrong"];
const VALUE = "line one\nline two\r\n\ttabbed — ünïcödé 🔐\n\n";
const PROMPT = "passphrase: ";
/** How long one step (a prompt, the exit) may take: PBKDF2 of 600,000 rounds per try on a busy machine. */
const STEP_MS = 20_000;

/** The command under a pseudo-terminal: what it writes to the terminal, and what is typed at it. */
interface Terminal {
  /** Everything written to the terminal so far (stderr, and stdout when not redirected). */
  screen: () => string;
  /** Waits until the terminal shows `text` `count` times in all. */
  waitFor: (text: string, count: number) => Promise<void>;
  /** Types `line` and Enter. */
  type: (line: string) => void;
  /** The exit code, once the command ends (within STEP_MS of the call). */
  exit: () => Promise<number | null>;
}

const quote = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;
const running = new Set<ChildProcess>();

/**
 * Runs `ephemeral-vault get <link>` under `script -qefc` (util-linux): the pty is its stdin and
 * stderr; its stdout goes to `stdoutFile`, so the value's bytes are read back unchanged by the
 * terminal's line discipline (off a terminal `get` adds no newline).
 */
function getAtTerminal(link: string, stdoutFile: string): Terminal {
  const command = `exec ${quote(process.execPath)} ${quote(BIN)} get ${quote(link)} > ${quote(stdoutFile)}`;
  const child = spawn("script", ["-qefc", command, "/dev/null"], {
    cwd: ROOT,
    env: childEnv({ SHELL: "/bin/sh", TERM: "dumb" }),
    stdio: ["pipe", "pipe", "pipe"],
  });
  running.add(child);
  let screen = "";
  const waiters = new Set<() => void>();
  const onOutput = (chunk: Buffer) => {
    screen += chunk.toString("utf8");
    for (const check of waiters) check();
  };
  child.stdout?.on("data", onOutput);
  child.stderr?.on("data", onOutput);
  const exited = new Promise<number | null>((resolve) =>
    child.once("exit", (code) => {
      running.delete(child);
      for (const check of waiters) check();
      resolve(code);
    }),
  );
  const occurrences = (text: string) => screen.split(text).length - 1;
  return {
    screen: () => screen,
    waitFor: (text, count) =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`the terminal did not show ${JSON.stringify(text)} ${count} time(s) within ${STEP_MS} ms; it shows:\n${screen}`));
        }, STEP_MS);
        const check = () => {
          if (occurrences(text) >= count) {
            clearTimeout(timer);
            waiters.delete(check);
            resolve();
          } else if (child.exitCode !== null || child.signalCode !== null) {
            clearTimeout(timer);
            waiters.delete(check);
            reject(new Error(`the command ended before the terminal showed ${JSON.stringify(text)} ${count} time(s); it shows:\n${screen}`));
          }
        };
        waiters.add(check);
        check();
      }),
    type: (line) => {
      child.stdin?.write(`${line}\r`);
    },
    exit: () =>
      Promise.race([
        exited,
        new Promise<number | null>((_, reject) =>
          setTimeout(() => reject(new Error(`the command did not end within ${STEP_MS} ms; the terminal shows:\n${screen}`)), STEP_MS).unref(),
        ),
      ]),
  };
}

describe("get <link> asks for the passphrase at a terminal, 3 tries", () => {
  let vault: VaultProcess;
  let dir: string;
  beforeAll(async () => {
    dir = tempDir();
    vault = await startVault(join(dir, "data"));
  });
  afterAll(async () => {
    for (const child of running) child.kill("SIGKILL");
    await killChildren();
    cleanupTemp();
  });

  const share = async (maxFailedReveals?: number) => {
    const client = new VaultClient({ addr: vault.url, token: E2E_MASTER_KEY });
    const { url, id } = await client.share(VALUE, { passphrase: PASSPHRASE, maxReads: 1, maxFailedReveals });
    expect(url).toMatch(/#[^#]+\.p$/);
    return { url, id };
  };
  const actions = async (id: string) => {
    const res = await vault.request("GET", `/audit?key=${id}`);
    expect(res.status).toBe(200);
    return ((await res.json()) as { entries: Array<{ action: string }> }).entries.map((e) => e.action).reverse();
  };

  it("wrong, wrong, right: the value printed byte-exact, the secret spent once, no passphrase echoed", async () => {
    const { url, id } = await share();
    const out = join(dir, "right.out");
    const tty = getAtTerminal(url, out);
    for (const [i, answer] of [...WRONG, PASSPHRASE].entries()) {
      await tty.waitFor(PROMPT, i + 1);
      tty.type(answer);
    }
    expect(await tty.exit(), tty.screen()).toBe(0);
    expect(readFileSync(out).equals(Buffer.from(VALUE, "utf8"))).toBe(true);
    const screen = tty.screen();
    expect(screen.split(PROMPT)).toHaveLength(4);
    expect(screen.match(/wrong passphrase; nothing was read/g)).toHaveLength(2);
    for (const typed of [...WRONG, PASSPHRASE]) expect(screen).not.toContain(typed);
    expect(screen).not.toContain("line one");
    expect(await actions(id)).toEqual(["secret.created", "secret.reveal_refused", "secret.reveal_refused", "secret.read", "secret.burned"]);
    // Spent: its one read is gone.
    expect((await vault.request("HEAD", `/secrets/${id}`)).status).toBe(404);
  }, 90_000);

  it("three wrong: exit 1 with a message that it gave up, nothing read; the right passphrase still opens it", async () => {
    const { url, id } = await share();
    const out = join(dir, "wrong.out");
    const tty = getAtTerminal(url, out);
    for (const [i, answer] of [...WRONG, "a third wrong passphrase"].entries()) {
      await tty.waitFor(PROMPT, i + 1);
      tty.type(answer);
    }
    expect(await tty.exit(), tty.screen()).toBe(1);
    expect(readFileSync(out, "utf8")).toBe("");
    const screen = tty.screen();
    expect(screen.split(PROMPT)).toHaveLength(4);
    expect(screen.match(/wrong passphrase; nothing was read, try again/g)).toHaveLength(2);
    expect(screen).toMatch(/ephemeral-vault: gave up after 3 wrong passphrases; nothing was read\r?\n$/);
    for (const typed of [...WRONG, "a third wrong passphrase"]) expect(screen).not.toContain(typed);
    expect(await actions(id)).toEqual(["secret.created", "secret.reveal_refused", "secret.reveal_refused", "secret.reveal_refused"]);
    expect((await vault.request("HEAD", `/secrets/${id}`)).status).toBe(200);

    const again = getAtTerminal(url, join(dir, "again.out"));
    await again.waitFor(PROMPT, 1);
    again.type(PASSPHRASE);
    expect(await again.exit(), again.screen()).toBe(0);
    expect(readFileSync(join(dir, "again.out"), "utf8")).toBe(VALUE);
    expect((await vault.request("HEAD", `/secrets/${id}`)).status).toBe(404);
  }, 120_000);

  it("a link whose wrong tries destroyed it (max_failed_reveals 2): says so after the 2nd and asks no 3rd time", async () => {
    const { url, id } = await share(2);
    const tty = getAtTerminal(url, join(dir, "burned.out"));
    for (const [i, answer] of WRONG.entries()) {
      await tty.waitFor(PROMPT, i + 1);
      tty.type(answer);
    }
    expect(await tty.exit(), tty.screen()).toBe(1);
    const screen = tty.screen();
    expect(screen.split(PROMPT)).toHaveLength(3);
    expect(screen.match(/try again/g)).toHaveLength(1);
    expect(screen).toMatch(/ephemeral-vault: the secret is gone: too many wrong passphrases destroyed it \(or it expired\); nothing was read\r?\n$/);
    expect(await actions(id)).toEqual(["secret.created", "secret.reveal_refused", "secret.reveal_refused", "secret.reveal_limit_reached", "secret.burned"]);
  }, 90_000);
});
