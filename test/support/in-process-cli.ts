/**
 * A scenario's run of navi in the test's own process where nothing needs a process of its own
 * (issue 36): the same code as the bin (`main(args, host, NAVI_COMMANDS)`, from the source),
 * with the test's environment, working directory and collected streams (test/support/in-process.ts).
 * A scenario that reads what navi printed, its exit code and what it stored needs no process —
 * spawning one costs Node's start-up and module loading every time. What only a process shows
 * stays spawned (`runNavi`): stdin, a signal, a terminal, the built bundle, a server or worker
 * that runs until stopped, a process that must not outlive its parent.
 */
import fs from 'node:fs';
import type { CommandName } from '../../src/cli/command-modules/invocation.js';
import { censusTestFile, parseLine, runNavi, type JsonObject, type NaviResult, type RunOptions } from './cli.js';
import { parseInProcess, runInProcess } from './in-process.js';

/**
 * Commands that always spawn the built CLI; every other one runs in the test's process. `serve`
 * and `worker` run until a signal, `mcp` installs its own stop handlers, `queue` leaves pg-boss's
 * supervision timers past the command, and `db migrate` makes the suite's templates (a process
 * each, once).
 */
const SPAWNED: ReadonlySet<CommandName> = new Set<CommandName>(['serve', 'worker', 'queue add', 'queue list', 'queue cancel', 'mcp list', 'mcp tools', 'db migrate']);

/**
 * A scenario's run of navi: in this process when it needs no stdin and no signal and its command
 * is not one of SPAWNED, else the built CLI spawned. Parsing decides (a usage error or `--help`
 * runs in process too). `NAVI_TEST_IN_PROCESS=0` spawns every run, as before (README, Development).
 */
export async function runNaviWhereItCan(args: readonly string[], opts: RunOptions): Promise<NaviResult> {
  if (process.env.NAVI_TEST_IN_PROCESS === '0' || opts.stdin !== undefined || opts.signalAfter !== undefined) return runNavi(args, opts);
  const parsed = await parseInProcess(args, { env: opts.env, cwd: opts.cwd });
  if (parsed.ran !== undefined && SPAWNED.has(parsed.ran.command)) return runNavi(args, opts);
  const started = Date.now();
  const run = await runInProcess(args, { env: opts.env, cwd: opts.cwd });
  countForCensus(args, opts.env, parsed.ran?.command);
  const lines = run.stdout.split('\n');
  if (lines.at(-1) === '') lines.pop();
  const events: JsonObject[] = [];
  const badLines: string[] = [];
  for (const line of lines) {
    const value = parseLine(line);
    if (value === undefined) badLines.push(line);
    else events.push(value);
  }
  const exitedAt = Date.now();
  return {
    ...run,
    signal: null,
    lines,
    events,
    badLines,
    durationMs: exitedAt - started,
    timedOut: false,
    signalsSentAt: [],
    exitedAt,
    pid: process.pid,
  };
}

/** bench/cli-census.js counts the CLI's processes; a run in this process is a line of its own there. */
function countForCensus(args: readonly string[], env: Record<string, string>, command: CommandName | undefined): void {
  const log = process.env.NAVI_CENSUS_LOG;
  if (log === undefined || log === '' || command === undefined) return;
  const opensStore = /^(run|loop|doctor|runs |sessions |memory )/.test(command);
  const store = !opensStore ? 'none' : env.DATABASE_URL !== undefined || args.includes('--db') ? 'postgres' : 'pglite';
  fs.appendFileSync(log, `${JSON.stringify({ args, inProcess: true, command, store, test: censusTestFile() })}\n`);
}
