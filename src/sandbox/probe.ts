/**
 * Whether a sandbox can be set up here: the launcher is on PATH and a trivial command runs in
 * it. Probed once per process (per launcher): the answer does not change while navi runs, and a
 * loop would otherwise pay a bwrap start for nothing before every command.
 */
import { execFile } from 'node:child_process';
import { accessSync, constants } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';

/** A probe that has not answered by then counts as failed (a hung launcher). */
const PROBE_TIMEOUT_MS = 10_000;

/** The first executable `name` in `PATH`, or undefined. */
export function findOnPath(name: string, path: string | undefined): string | undefined {
  for (const dir of (path ?? '').split(delimiter)) {
    if (dir === '' || !isAbsolute(dir)) continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** The namespaces a sandboxed command uses, around `true`: if this runs, commands will. */
export const BWRAP_PROBE_ARGS: readonly string[] = [
  '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--unshare-pid', '--die-with-parent', '--unshare-net', 'true',
];

/** A profile that allows everything: the probe checks only that sandbox-exec works at all. */
export const SEATBELT_PROBE_ARGS: readonly string[] = ['-p', '(version 1)(allow default)', '/usr/bin/true'];

const probes = new Map<string, Promise<string | undefined>>();

/** Runs `launcher args` once; undefined when it exited 0, else why not (its first line of stderr). */
export function probeLauncher(launcher: string, args: readonly string[]): Promise<string | undefined> {
  const key = `${launcher}\0${args.join('\0')}`;
  let probe = probes.get(key);
  if (probe === undefined) {
    probe = new Promise((resolve) => {
      execFile(launcher, [...args], { timeout: PROBE_TIMEOUT_MS }, (error, _stdout, stderr) => {
        if (error === null) return resolve(undefined);
        const line = String(stderr).split('\n').find((l) => l.trim() !== '')?.trim();
        resolve(line ?? error.message.split('\n')[0] ?? 'failed');
      });
    });
    probes.set(key, probe);
  }
  return probe;
}
