/**
 * Where a command's action leaves its exit code (docs/cli.md, "Exit codes and errors": 0 ok, 1 API
 * refused, 2 usage or connection). Its own module: the command modules need it, and the
 * registry (registry.ts) loads them.
 */
export interface ExitCode {
  code: number;
}
