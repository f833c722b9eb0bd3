/**
 * navi's own configuration in the tree (issue 35): `.nav-config.json` (and navigator's
 * `.agent/.nav-config.json`) decides the next run's sandbox, shell lists and model host;
 * `.mcp.json` names MCP servers navi starts — outside the sandbox — at the next start. A command
 * that rewrote one under `workspace-write` would get out at the next run, so where they exist they
 * are read-only inside, as git's control files are. One that does not exist yet is not made (an
 * empty config file is an invalid one): creating it stays possible, and the README says so.
 */
import { join } from 'node:path';

/** The files, relative to the working directory (where the config loader reads them), and why each matters. */
export const NAVI_CONFIG_FILES: Readonly<Record<string, string>> = {
  '.nav-config.json': "it decides the next run's sandbox, shell lists and model host",
  '.agent/.nav-config.json': "it decides the next run's sandbox, shell lists and model host",
  '.mcp.json': 'it names MCP servers navi starts, outside the sandbox, at the next start',
};

/** The configuration files of `cwd` that exist (absolute), to keep read-only inside. */
export function naviConfigPaths(cwd: string, exists: (path: string) => boolean): string[] {
  return Object.keys(NAVI_CONFIG_FILES)
    .map((name) => join(cwd, name))
    .filter(exists);
}

/** Why `path` (one of naviConfigPaths: a kept path) is kept read-only; undefined for git's and any other. */
export function naviConfigRole(path: string): string | undefined {
  const name = Object.keys(NAVI_CONFIG_FILES)
    .sort((a, b) => b.length - a.length)
    .find((n) => path.endsWith(`/${n}`));
  return name === undefined ? undefined : NAVI_CONFIG_FILES[name];
}
