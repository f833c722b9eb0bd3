// @ts-check
/**
 * Where the test suite's CPU goes, process by process: a stand-in for the built CLI that runs it
 * unchanged and, as each process exits, appends one JSON line (arguments, CPU, page faults,
 * whether it opened PGlite) to a log; `--summary` adds the log up by command and store.
 * Not part of `npm run bench` (README "Development", issue 23).
 *
 *   NAVI_CENSUS_LOG=/tmp/census.jsonl NAVI_SCENARIO_CLI=$PWD/bench/cli-census.js npx vitest run
 *   node bench/cli-census.js --summary /tmp/census.jsonl
 *
 * The tests spawn `node $NAVI_SCENARIO_CLI …` (test/support/cli.ts), and `navi worker` spawns its
 * loops through its own argv[1], so those are counted too. A process killed by a signal writes
 * no line. PGlite is told by its page faults: opening it takes ~20,000 (the WebAssembly heap),
 * a process without it ~2,000–6,000.
 */
import fs from 'node:fs';
import process from 'node:process';
import { URL } from 'node:url';

/** Page faults above which a process is taken to have opened PGlite. */
const PGLITE_FAULTS = 15_000;
/** Commands split by their subcommand in the summary. */
const WITH_SUBCOMMAND = new Set(['sessions', 'queue', 'tasks', 'runs', 'memory', 'db']);
/** navi's command words: `COMMANDS` in src/cli/shorthand.ts (this file runs unbuilt and imports no TypeScript). */
const COMMANDS = new Set(['run', 'loop', 'tasks', 'runs', 'sessions', 'profiles', 'memory', 'mcp', 'db', 'doctor', 'init', 'completion', 'queue', 'worker', 'serve']);

/**
 * @typedef {{ args: string[], cpuMs: number, sysMs: number, faults: number, wallMs: number, code: number, test?: string }} Entry
 * A run in the test's process (test/support/in-process-cli.ts): no process, so no CPU of its own.
 * @typedef {{ args: string[], inProcess: true, command: string, store: 'pglite' | 'postgres' | 'none', test?: string }} InProcessEntry
 */

/** @param {string[]} args */
function commandOf(args) {
  const at = args.findIndex((a) => COMMANDS.has(a));
  if (at === -1) return args.some((a) => /\s/.test(a)) ? 'run (a prompt)' : '(none)';
  const word = /** @type {string} */ (args[at]);
  const sub = args[at + 1];
  return WITH_SUBCOMMAND.has(word) && sub !== undefined && !sub.startsWith('-') ? `${word} ${sub}` : word;
}

/** @param {string} file */
function summary(file) {
  const all = fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => /** @type {Entry | InProcessEntry} */ (JSON.parse(line)));
  const entries = /** @type {Entry[]} */ (all.filter((e) => !('inProcess' in e)));
  const inProcess = /** @type {InProcessEntry[]} */ (all.filter((e) => 'inProcess' in e));
  /** @type {Map<string, { n: number, cpuMs: number, sysMs: number }>} */
  const groups = new Map();
  for (const e of entries) {
    const key = `${commandOf(e.args)}\t${e.faults > PGLITE_FAULTS ? 'PGlite' : 'PostgreSQL or none'}`;
    const g = groups.get(key) ?? { n: 0, cpuMs: 0, sysMs: 0 };
    g.n += 1;
    g.cpuMs += e.cpuMs;
    g.sysMs += e.sysMs;
    groups.set(key, g);
  }
  const total = entries.reduce((s, e) => s + e.cpuMs, 0);
  const pglite = entries.filter((e) => e.faults > PGLITE_FAULTS).length;
  const out = [
    `${entries.length} processes (${pglite} opened PGlite), ${(total / 1000).toFixed(0)} s of CPU`,
    `${inProcess.length} runs in the tests' processes (${inProcess.filter((e) => e.store === 'pglite').length} on PGlite)`,
    'command\tstore\tprocesses\tCPU s\tmean ms\tsystem %',
  ];
  for (const [key, g] of [...groups].sort((a, b) => b[1].cpuMs - a[1].cpuMs)) {
    out.push(`${key}\t${g.n}\t${(g.cpuMs / 1000).toFixed(1)}\t${(g.cpuMs / g.n).toFixed(0)}\t${((100 * g.sysMs) / Math.max(1, g.cpuMs)).toFixed(0)}`);
  }
  /** @type {Map<string, { n: number, pglite: number, cpuMs: number }>} */
  const files = new Map();
  for (const e of entries) {
    const f = files.get(e.test ?? '') ?? { n: 0, pglite: 0, cpuMs: 0 };
    f.n += 1;
    if (e.faults > PGLITE_FAULTS) f.pglite += 1;
    f.cpuMs += e.cpuMs;
    files.set(e.test ?? '', f);
  }
  out.push('', 'test file\tprocesses\tPGlite\tCPU s');
  for (const [name, f] of [...files].sort((a, b) => b[1].cpuMs - a[1].cpuMs).slice(0, 30)) {
    out.push(`${name || '(not known)'}\t${f.n}\t${f.pglite}\t${(f.cpuMs / 1000).toFixed(1)}`);
  }
  process.stdout.write(out.join('\n') + '\n');
}

if (process.argv[2] === '--summary') {
  const file = process.argv[3];
  if (file === undefined) {
    process.stderr.write('usage: node bench/cli-census.js --summary LOG\n');
    process.exit(2);
  }
  summary(file);
} else {
  const log = process.env.NAVI_CENSUS_LOG;
  if (log === undefined || log === '') {
    process.stderr.write('bench/cli-census.js: set NAVI_CENSUS_LOG to the file to append to\n');
    process.exit(2);
  }
  const started = Date.now();
  process.on('exit', (code) => {
    const usage = process.resourceUsage();
    /** @type {Entry} */
    const entry = {
      args: process.argv.slice(2).map((a) => a.slice(0, 60)),
      cpuMs: Math.round((usage.userCPUTime + usage.systemCPUTime) / 1000),
      sysMs: Math.round(usage.systemCPUTime / 1000),
      faults: usage.minorPageFault,
      wallMs: Date.now() - started,
      code,
      test: process.env.NAVI_CENSUS_TEST ?? '',
    };
    // One write of one line: appends from concurrent processes do not interleave.
    fs.appendFileSync(log, JSON.stringify(entry) + '\n');
  });
  await import(new URL('../dist/cli/main.cjs', import.meta.url).href);
}
