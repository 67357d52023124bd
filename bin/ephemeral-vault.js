#!/usr/bin/env node
import { main } from "../dist/cli.js";

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== undefined) process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`ephemeral-vault: ${err && err.message ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
