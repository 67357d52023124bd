import { closeSync, constants, fchmodSync, ftruncateSync, openSync, readFileSync, unlinkSync, writeSync } from "node:fs";
import { basename } from "node:path";
import { DEFAULT_FILE_TYPE, isMediaType, safeFileName } from "@ephemeral-vault/client";
import type { Opened, SharedFile } from "@ephemeral-vault/client";
import { lookup } from "mime-types";
import { ConfigError } from "../../config.js";

/**
 * Files for `share --file` and `get <link> -o` (docs/cli.md, "Files"; the
 * envelope: docs/share.md, "Files"): the file read with its base name and
 * media type, and where an opened link's content is written.
 */

/**
 * The media type of a file name, from its extension (the `mime-types`
 * table, that is the IANA registry and common use); a type with a
 * parameter or none known: `application/octet-stream`.
 */
export function mediaTypeOf(name: string): string {
  const found = lookup(name);
  return found !== false && isMediaType(found) ? found : DEFAULT_FILE_TYPE;
}

/**
 * Reads `path` as the file `share --file` shares: its base name, its media
 * type from the extension (mediaTypeOf) and its bytes.
 * @throws ConfigError (exit 2) when it cannot be read.
 */
export function readShareFile(path: string): SharedFile {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (err) {
    throw new ConfigError(`--file: cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? "error"})`);
  }
  const name = basename(path);
  return { name, type: mediaTypeOf(name), bytes: new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.length) };
}

/** Where `get <link>` puts what it opened: a file opened before the read (`-o`), or stdout. */
export interface Output {
  /** Writes the opened value or file's bytes, and says on stderr what a file was. */
  write(opened: Opened): void;
  /** Removes a file made for a read that then failed (nothing was written to it). */
  abandon(): void;
}

/**
 * The output of `get <link> [-o FILE] [--force]`, settled BEFORE the read so
 * that a refusal spends nothing: `-o FILE` is created now, mode 0600,
 * refused when it exists unless `force` (then replaced only once the read
 * opened, its mode made 0600; a failed read leaves it as it was).
 * Without `-o`, text goes to stdout as before (a newline added at a
 * terminal), and a file's bytes go to stdout only when it is not a
 * terminal; at a terminal the file is saved instead in the current
 * directory under safeFileName of its name, never over an existing file
 * (docs/cli.md, "Files"), so the one read is not lost.
 * @throws ConfigError (exit 2) for an existing FILE without `force`, or one that cannot be created.
 */
export function outputOf(path: string | undefined, force: boolean): Output {
  if (path === undefined) return stdoutOutput();
  let fd: number;
  let existed = false;
  try {
    try {
      fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST" || !force) throw err;
      existed = true;
      fd = openSync(path, constants.O_WRONLY);
    }
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? "error";
    if (code === "EEXIST") throw new ConfigError(`-o: ${path} exists; give --force to overwrite it (nothing was read)`);
    throw new ConfigError(`-o: cannot create ${path} (${code}; nothing was read)`);
  }
  const close = () => closeSync(fd);
  return {
    write: (opened) => {
      ftruncateSync(fd, 0);
      fchmodSync(fd, 0o600);
      writeAll(fd, contentOf(opened));
      close();
      if (typeof opened !== "string") process.stderr.write(fileNotice(opened.file, `saved as ${path}`));
    },
    abandon: () => {
      close();
      if (!existed) unlinkSync(path);
    },
  };
}

function stdoutOutput(): Output {
  return {
    write: (opened) => {
      if (typeof opened === "string") {
        process.stdout.write(process.stdout.isTTY ? `${opened}\n` : opened);
        return;
      }
      if (!process.stdout.isTTY) {
        process.stdout.write(opened.file.bytes);
        process.stderr.write(fileNotice(opened.file, "written to stdout"));
        return;
      }
      const saved = saveBeside(opened.file);
      process.stderr.write(fileNotice(opened.file, `not printed to the terminal: saved as ./${saved} (choose with -o FILE, or pipe it)`));
    },
    abandon: () => {},
  };
}

/** The bytes of an opened value: the text's UTF-8, or the file's bytes. */
function contentOf(opened: Opened): Uint8Array {
  return typeof opened === "string" ? new TextEncoder().encode(opened) : opened.file.bytes;
}

/** What `get` says on stderr about a file it opened: its name (made safe to show), type and size. */
function fileNotice(file: SharedFile, where: string): string {
  return `ephemeral-vault: a file: ${safeFileName(file.name)} (${file.type}, ${file.bytes.length} bytes), ${where}\n`;
}

function writeAll(fd: number, bytes: Uint8Array): void {
  for (let off = 0; off < bytes.length; ) off += writeSync(fd, bytes, off, bytes.length - off);
}

/**
 * Saves a file in the current directory under safeFileName of its name,
 * mode 0600, never over an existing file: `name (1).ext`, `name (2).ext`, ...
 * @returns the name it was saved as.
 */
function saveBeside(file: SharedFile): string {
  const safe = safeFileName(file.name);
  const dot = safe.lastIndexOf(".");
  const [stem, ext] = dot > 0 ? [safe.slice(0, dot), safe.slice(dot)] : [safe, ""];
  for (let n = 0; ; n++) {
    const name = n === 0 ? safe : `${stem} (${n})${ext}`;
    let fd: number;
    try {
      fd = openSync(name, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "EEXIST" && n < 1000) continue;
      throw err;
    }
    writeAll(fd, file.bytes);
    closeSync(fd);
    return name;
  }
}
