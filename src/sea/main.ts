import { main } from "../cli.js";
import { prepareSeaFiles } from "./files.js";

// The single executable's entry (scripts/build-binary.mjs bundles it to one
// CommonJS file): the same commands, flags and exit codes as bin/ephemeral-vault.js.
try {
  prepareSeaFiles();
} catch (err) {
  process.stderr.write(`ephemeral-vault: ${(err as Error).message}\n`);
  process.exit(1);
}
main(process.argv.slice(2)).then(
  (code) => {
    if (code !== undefined) process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`ephemeral-vault: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
