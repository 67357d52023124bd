import type { Command } from "commander";
import type { BodyOf } from "@ephemeral-vault/client";
import { ConfigError } from "../../config.js";
import { callVault } from "./call.js";
import type { ConnectionFlags } from "./connection.js";
import { withConnectionOptions } from "./connection.js";
import { adminGroup } from "./keys.js";
import { parseTime } from "../output.js";
import { showAllPages, showDeleted, showList, showRecord } from "../print.js";
import type { Column } from "../output.js";
import type { ExitCode } from "../exit-codes.js";

interface JsonFlags extends ConnectionFlags {
  json?: boolean;
  quiet?: boolean;
}

const ORG_COLUMNS: Column[] = [["ID", "id"], ["NAME", "name"], ["CREATED", "created_at"]];
const PRINCIPAL_COLUMNS: Column[] = [["ID", "id"], ["NAME", "name"], ["ROLE", "role"], ["CREATED", "created_at"]];
const ROLE_COLUMNS: Column[] = [["NAME", "name"], ["PERMISSIONS", "permissions"], ["BUILTIN", "builtin"]];
const KEY_COLUMNS: Column[] = [["ID", "id"], ["NAME", "name"], ["VALID AFTER", "valid_after"], ["VALID BEFORE", "valid_before"], ["CREATED", "created_at"]];

/** A positional argument: its `<name>` and its help text. */
type Arg = readonly [name: string, description: string];

/** `<org>`, the first argument of every command below an org. */
const ORG: Arg = ["<org>", "the org's id"];
/** `<principal>` of the principal keys' commands. */
const PRINCIPAL: Arg = ["<principal>", "the principal's id"];

/** A subcommand with its arguments, the connection options (the org is an argument, so no --org) and --json. */
function sub(parent: Command, name: string, description: string, ...args: Arg[]): Command {
  const command = withConnectionOptions(parent.command(name).description(description), { org: false }).option("--json", "print the API's answer as JSON");
  for (const [arg, text] of args) command.argument(arg, text);
  return command;
}

/** `--metadata '{"team": "infra"}'`: a JSON object. @throws ConfigError otherwise. */
function parseMetadata(text: string | undefined): { metadata?: Record<string, unknown> } {
  if (text === undefined) return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    value = undefined;
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) throw new ConfigError("--metadata must be a JSON object, e.g. '{\"team\": \"infra\"}'");
  return { metadata: value as Record<string, unknown> };
}


/**
 * `ephemeral-vault orgs ...` (docs/orgs.md, the master key): organizations,
 * their principals, roles and principal keys, through the typed client.
 * Tables by default, `--json` for programs, `-q` for the new id (the key
 * itself for `orgs keys create`, printed once).
 */
export function registerOrgs(program: Command, exit: ExitCode): void {
  const orgs = adminGroup(program, "orgs", "organizations, their principals, roles and principal keys (the master key)", [
    'ORG="$(ephemeral-vault orgs create --name acme -q)"',
    'ephemeral-vault orgs roles create "$ORG" --name deployer --permissions rlc',
    'BOT="$(ephemeral-vault orgs principals create "$ORG" --name deploy-bot --role deployer -q)"',
    'ephemeral-vault orgs keys create "$ORG" "$BOT" --name laptop      (prints the key once)',
    "ephemeral-vault orgs ls",
    'ephemeral-vault orgs principals ls "$ORG"',
  ]);

  sub(orgs, "create", "make an organization")
    .requiredOption("--name <name>", "unique name, 1-128 characters")
    .option("--metadata <json>", "a JSON object")
    .option("-q, --quiet", "print only the id")
    .action(async (flags: JsonFlags & { name: string; metadata?: string }) => {
      const body = { name: flags.name, ...parseMetadata(flags.metadata) } as BodyOf<"/orgs", "post">;
      await callVault(flags, exit, async (client) => showRecord(flags, await client.orgs.create(body), ["id", "name", "created_at"]));
    });
  sub(orgs, "ls", "list the organizations").action(async (flags: JsonFlags) => {
    await callVault(flags, exit, async (client) => showAllPages(flags, (cursor) => client.orgs.list({ cursor }), "orgs", ORG_COLUMNS, "no organizations"));
  });
  sub(orgs, "show", "one organization with its metadata", ["<org>", "the org's id (org_...)"])
    .action(async (org: string, flags: JsonFlags) => {
      await callVault(flags, exit, async (client) => showRecord(flags, await client.orgs.get(org), ["id", "name", "metadata", "created_at"]));
    });
  sub(orgs, "rm", "delete an organization (refused while it has principals, roles or webhooks)", ORG)
    .action(async (org: string, flags: JsonFlags) => {
      await callVault(flags, exit, async (client) => showDeleted(flags, await client.orgs.delete(org)));
    });

  registerPrincipals(orgs.command("principals").description("an org's principals: create, list, delete"), exit);
  registerRoles(orgs.command("roles").description("an org's roles: create, list, update, delete (built-ins are fixed)"), exit);
  registerPrincipalKeys(orgs.command("keys").description("a principal's keys: create (printed once), list, revoke"), exit);
}

function registerPrincipals(principals: Command, exit: ExitCode): void {
  sub(principals, "create", "add a principal with a role", ORG)
    .requiredOption("--name <name>", "unique in the org, 1-128 characters")
    .requiredOption("--role <role>", "reader, writer, admin, owner, or a custom role")
    .option("--metadata <json>", "a JSON object")
    .option("-q, --quiet", "print only the id")
    .action(async (org: string, flags: JsonFlags & { name: string; role: string; metadata?: string }) => {
      const body = { name: flags.name, role: flags.role, ...parseMetadata(flags.metadata) } as BodyOf<"/orgs/{org_id}/principals", "post">;
      await callVault(flags, exit, async (client) =>
        showRecord(flags, await client.orgs.of(org).principals.create(body), ["id", "name", "role", "org_id", "created_at"]),
      );
    });
  sub(principals, "ls", "list an org's principals", ORG)
    .action(async (org: string, flags: JsonFlags) => {
      await callVault(flags, exit, async (client) => {
        const api = client.orgs.of(org).principals;
        await showAllPages(flags, (cursor) => api.list({ cursor }), "principals", PRINCIPAL_COLUMNS, "no principals");
      });
    });
  sub(principals, "rm", "delete a principal (refused while it has keys)", ORG, ["<id>", "the principal's id (prn_...)"])
    .action(async (org: string, id: string, flags: JsonFlags) => {
      await callVault(flags, exit, async (client) => showDeleted(flags, await client.orgs.of(org).principals.delete(id)));
    });
}

function registerRoles(roles: Command, exit: ExitCode): void {
  sub(roles, "create", "make a custom role", ORG)
    .requiredOption("--name <name>", "lowercase: ^[a-z][a-z0-9_-]{0,63}$")
    .requiredOption("--permissions <letters>", "permission letters, e.g. rlc (docs/orgs.md)")
    .action(async (org: string, flags: JsonFlags & { name: string; permissions: string }) => {
      await callVault(flags, exit, async (client) =>
        showRecord(flags, await client.orgs.of(org).roles.create({ name: flags.name, permissions: flags.permissions }), ["name", "permissions", "org_id"]),
      );
    });
  sub(roles, "ls", "list an org's roles, built-in ones first", ORG)
    .action(async (org: string, flags: JsonFlags) => {
      await callVault(flags, exit, async (client) => {
        const answer = await client.orgs.of(org).roles.list();
        const all = answer.roles as unknown as Array<Record<string, unknown>>;
        showList(flags, all, ROLE_COLUMNS, "no roles");
      });
    });
  sub(roles, "update", "new permissions for a custom role", ORG, ["<name>", "the role's name"])
    .requiredOption("--permissions <letters>", "permission letters")
    .action(async (org: string, name: string, flags: JsonFlags & { permissions: string }) => {
      await callVault(flags, exit, async (client) =>
        showRecord(flags, await client.orgs.of(org).roles.update(name, { permissions: flags.permissions }), ["name", "permissions", "org_id"]),
      );
    });
  sub(roles, "rm", "delete a custom role (refused while a principal holds it)", ORG, ["<name>", "the role's name"])
    .action(async (org: string, name: string, flags: JsonFlags) => {
      await callVault(flags, exit, async (client) => showDeleted(flags, await client.orgs.of(org).roles.delete(name)));
    });
}

function registerPrincipalKeys(keys: Command, exit: ExitCode): void {
  sub(keys, "create", "make a key for a principal; the key is printed once", ORG, ["<principal>", "the principal's id (prn_...)"])
    .requiredOption("--name <name>", "a label, 1-128 characters")
    .option("--valid-after <time>", "not before this time (Unix seconds or an ISO date)")
    .option("--valid-before <time>", "not from this time on (Unix seconds or an ISO date)")
    .option("-q, --quiet", "print only the key")
    .action(async (org: string, principal: string, flags: JsonFlags & { name: string; validAfter?: string; validBefore?: string }) => {
      const body = {
        name: flags.name,
        ...(flags.validAfter === undefined ? {} : { valid_after: parseTime(flags.validAfter, "--valid-after") }),
        ...(flags.validBefore === undefined ? {} : { valid_before: parseTime(flags.validBefore, "--valid-before") }),
      } as BodyOf<"/orgs/{org_id}/principals/{id}/keys", "post">;
      await callVault(flags, exit, async (client) =>
        showRecord(flags, await client.orgs.of(org).principals.createKey(principal, body), ["id", "name", "valid_after", "valid_before", "created_at"], "key"),
      );
    });
  sub(keys, "ls", "list a principal's keys (never the keys themselves)", ORG, PRINCIPAL)
    .action(async (org: string, principal: string, flags: JsonFlags) => {
      await callVault(flags, exit, async (client) => {
        const answer = await client.orgs.of(org).principals.listKeys(principal);
        const all = answer.keys as unknown as Array<Record<string, unknown>>;
        showList(flags, all, KEY_COLUMNS, "no keys");
      });
    });
  sub(keys, "rm", "revoke a principal key at once", ORG, PRINCIPAL, ["<key_id>", "the key's id (pk_...)"])
    .action(async (org: string, principal: string, keyId: string, flags: JsonFlags) => {
      await callVault(flags, exit, async (client) => showDeleted(flags, await client.orgs.of(org).principals.deleteKey(principal, keyId)));
    });
}
