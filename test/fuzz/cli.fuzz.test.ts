/**
 * A sample of hostile inputs through the built CLI (issue 5 item 2): `navi profiles list` with a
 * hostile `.nav-config.json` or project profile, `navi tasks validate FILE`, `navi loop … --decisions
 * FILE`, and files that are not files at all (a FIFO, a symlink to /dev/zero — a symlink is
 * something a cloned repository can carry). Each run must end with exit 0 or 2, stderr lines
 * that are navi's own (`navi: …` / `warning: …`), no stack trace, within a hard timeout and
 * without its memory running away.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cleanEnv, stackLines, startNavi, type NaviResult } from '../support/cli.js';
import { arbMutation, arbShaped, jsonText, mutate, nested, raw, scratchDir, type Shape } from './support.js';

/**
 * Hang guard of one run: healthy ones take ~0.3 s idle, a few seconds with five at once on a
 * loaded two-core machine; 20 s is far above that and below the test's own 30 s.
 */
const RUN_TIMEOUT_MS = 20_000;
/**
 * A run whose resident memory passes this is killed and reported: a runaway guard (a config file
 * is a few KB, a healthy run ~60 MB), not a bound on normal memory use.
 */
const RSS_LIMIT_BYTES = 512 * 1024 * 1024;

interface BoundedResult extends NaviResult {
  /** Peak RSS seen, bytes. */
  peakRss: number;
  /** Killed by the RSS watchdog. */
  memoryExceeded: boolean;
  timeoutMs: number;
}

function rssOf(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** Runs the CLI with a hard timeout and an RSS watchdog (Linux /proc; elsewhere the timeout alone). */
async function navi(args: string[], cwd: string, timeoutMs = RUN_TIMEOUT_MS): Promise<BoundedResult> {
  const proc = startNavi(args, { cwd, env: cleanEnv(), timeoutMs });
  let peakRss = 0;
  let memoryExceeded = false;
  const watchdog = setInterval(() => {
    const pid = proc.child.pid;
    if (pid === undefined) return;
    const rss = rssOf(pid);
    peakRss = Math.max(peakRss, rss);
    if (rss > RSS_LIMIT_BYTES && !memoryExceeded) {
      memoryExceeded = true;
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
  }, 50);
  try {
    const result = await proc.result;
    return { ...result, peakRss, memoryExceeded, timeoutMs };
  } finally {
    clearInterval(watchdog);
  }
}

/** What is wrong with a run under the contract, or null. */
function runProblem(run: BoundedResult): string | null {
  if (run.memoryExceeded) return `memory ran away (RSS > ${RSS_LIMIT_BYTES / 2 ** 20} MB; killed)`;
  if (run.timedOut) return `hung (killed after ${run.timeoutMs} ms)`;
  if (run.code !== 0 && run.code !== 2) return `exit ${String(run.code)} (signal ${String(run.signal)}), not 0 or 2`;
  if (stackLines(run.stderr).length > 0) return `stack trace on stderr: ${run.stderr.slice(0, 500)}`;
  const lines = run.stderr.split('\n').filter((l) => l !== '');
  const foreign = lines.filter((l) => !/^(navi|warning): /.test(l));
  if (foreign.length > 0) return `stderr lines that are not navi's own messages: ${JSON.stringify(foreign.slice(0, 3))}`;
  if (run.code === 2 && !lines.some((l) => l.startsWith('navi: '))) return 'exit 2 without a navi: message';
  // A key or directory name holding ESC would drive the user's terminal (clear it, recolour it).
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u0009\u000b-\u001f\u007f]/.test(run.stderr + run.stdout)) return `raw control character in the output: ${JSON.stringify((run.stderr + run.stdout).slice(0, 300))}`;
  return null;
}

function describeRun(run: BoundedResult): string {
  return `exit ${String(run.code)} in ${run.durationMs} ms, peak RSS ${Math.round(run.peakRss / 2 ** 20)} MB\nstderr: ${run.stderr.slice(0, 600)}`;
}

let root: { root: string; cleanup(): void };
let n = 0;
/** A fresh project directory with `files` (relative path → content). */
function project(files: Record<string, string | Buffer>): string {
  const dir = path.join(root.root, `p${n++}`);
  for (const [rel, content] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.writeFileSync(path.join(dir, rel), content);
  }
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

beforeAll(() => {
  assertBuilt();
  root = scratchDir('cli');
});
afterAll(() => root.cleanup());

/** A small deterministic sample of generated configs (the property suite runs thousands in-process). */
const CONFIG_SHAPE: Shape = {
  loop_mode: { enabled: 'bool', max_iterations: 'int', never_pause_on_stagnation: 'bool', iteration_approval: { enum: ['none', 'strict'] } },
  llm: { host: 'host', model: 'str', num_ctx: 'int', keep_alive: 'duration', temperature: 'num' },
  db: { url: 'url', data_dir: 'str' },
  default_profile: 'id',
  tools: { shell: { allow: 'strlist', deny: 'strlist', timeout_s: 'num' } },
  budget: { deadline: 'duration' },
};
const generatedConfigs = fc.sample(
  fc.tuple(arbShaped(CONFIG_SHAPE), arbMutation).map(([tree, m]) => mutate(jsonText(tree), m)),
  { seed: 20_250_101, numRuns: 8 },
);

const CONFIGS: Array<[string, string | Buffer]> = [
  ['empty', ''],
  ['BOM only', '\uFEFF'],
  ['invalid UTF-8', Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d])],
  ['NUL', '{"llm":{"model":"a\u0000b"}}'],
  ['1e309', '{"llm":{"num_ctx":1e309}}'],
  ['__proto__', '{"__proto__":{"polluted":1},"loop_mode":{"__proto__":{"x":1}}}'],
  ['10 000 levels in loop_mode', jsonText({ kind: 'object', entries: [['loop_mode', nested(10_000, raw('1'), false)]] })],
  ['1 000 000 unclosed [', '['.repeat(1_000_000)],
  ['newline in a key', '{"loop_mode":{"a\\nb":1}}'],
  ['ESC in an unknown key', '{"\\u001b[2J\\u001b[H":1}'],
  ...generatedConfigs.map((c, i): [string, Buffer] => [`generated #${i}`, c]),
];

describe.concurrent('navi profiles list with a hostile .nav-config.json', () => {
  it.each(CONFIGS)('%s', async (_name, content) => {
    const run = await navi(['profiles', 'list'], project({ '.nav-config.json': content }));
    expect(runProblem(run), describeRun(run)).toBeNull();
  });
});

const PROFILES: Array<[string, Record<string, string | Buffer>]> = [
  ['invalid JSON', { 'profiles/p/config.json': '{"model": }', 'profiles/p/system_prompt.txt': 'hi' }],
  ['empty prompt', { 'profiles/p/config.json': '{}', 'profiles/p/system_prompt.txt': '\uFEFF \n' }],
  ['10 000 levels in tools', { 'profiles/p/config.json': jsonText({ kind: 'object', entries: [['tools', nested(10_000, raw('1'), false)]] }), 'profiles/p/system_prompt.txt': 'hi' }],
  ['wrong types', { 'profiles/p/config.json': '{"max_iterations":"9","temperature":[],"tools":{"agent":"shell"}}', 'profiles/p/system_prompt.txt': 'hi' }],
  ['binary prompt', { 'profiles/p/config.json': '{}', 'profiles/p/system_prompt.txt': Buffer.from([0, 1, 0xff]) }],
  ['ESC in the directory name', { 'profiles/a\u001b[31mb/config.json': '{"x":1}', 'profiles/a\u001b[31mb/system_prompt.txt': 'hi' }],
];

describe.concurrent('navi profiles list with a hostile project profile', () => {
  it.each(PROFILES)('%s', async (_name, files) => {
    const run = await navi(['profiles', 'list'], project(files));
    expect(runProblem(run), describeRun(run)).toBeNull();
  });
});

const TASKS: Array<[string, string | Buffer]> = [
  ['billion laughs', 'a: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nprompt: x\n'],
  ['!!js/function', 'prompt: !!js/function "function () {}"\n'],
  ['!!binary', 'prompt: !!binary aGVsbG8=\n'],
  ['merge key', 'prompt: x\nloop:\n  <<: {max_iterations: 3}\n'],
  ['multi-document', 'prompt: a\n---\nprompt: b\n'],
  ['tabs', 'prompt: x\nloop:\n\tmax_iterations: 3\n'],
  ['10 000 levels', `prompt: x\nloop: ${'['.repeat(10_000)}${']'.repeat(10_000)}\n`],
  ['invalid UTF-8', Buffer.concat([Buffer.from('prompt: '), Buffer.from([0xff, 0xfe]), Buffer.from('\n')])],
  ['ESC in a key', '"\\u001b[2J": 1\nprompt: x\n'],
  ['valid', 'prompt: Make npm test pass.\nchecks:\n  - {name: tests, run: npm test}\n'],
];

describe.concurrent('navi tasks validate FILE with a hostile task file', () => {
  it.each(TASKS)('%s', async (_name, content) => {
    const run = await navi(['tasks', 'validate', 'tasks/t.yaml'], project({ 'tasks/t.yaml': content }));
    expect(runProblem(run), describeRun(run)).toBeNull();
    // Problems are printed on stdout one per line, each naming the file.
    for (const line of run.lines.filter((l) => l !== '')) expect(line).toMatch(/^(ok {2})?tasks\/t\.yaml/);
  });
});

const DECISIONS: Array<[string, string]> = [
  ['not JSON', 'continue\n'],
  ['unknown word', '{"decision":"maybe"}\n'],
  ['extra key with ESC', '{"decision":"continue","\\u001b[2J":1}\n'],
  ['10 000 levels of feedback', `{"decision":"adjust","feedback":${'['.repeat(10_000)}${']'.repeat(10_000)}}\n`],
];

describe.concurrent('navi loop --decisions FILE with a hostile decisions file (refused before any database or model)', () => {
  it.each(DECISIONS)('%s', async (_name, content) => {
    const dir = project({ 'd.jsonl': content });
    const run = await navi(['loop', 'do the thing', '--approval', 'strict', '--decisions', 'd.jsonl', '--db', 'postgres://127.0.0.1:1/none', '--ollama-host', 'http://127.0.0.1:1'], dir);
    expect(runProblem(run), describeRun(run)).toBeNull();
    expect(run.code).toBe(2);
  });
});

describe('files that are not regular files (a cloned repository can hold symlinks to devices)', () => {
  const hasFifo = (() => {
    try {
      execFileSync('mkfifo', ['--version'], { stdio: 'ignore' });
      return fs.existsSync('/dev/zero');
    } catch {
      return false;
    }
  })();

  it.skipIf(!hasFifo)('.nav-config.json is a symlink to /dev/zero: exit 2, bounded memory', async () => {
    const dir = project({});
    fs.symlinkSync('/dev/zero', path.join(dir, '.nav-config.json'));
    const run = await navi(['profiles', 'list'], dir);
    expect(runProblem(run), describeRun(run)).toBeNull();
  });

  it.skipIf(!hasFifo)('.nav-config.json is a FIFO nobody writes to: exit 2, no hang', async () => {
    const dir = project({});
    execFileSync('mkfifo', [path.join(dir, '.nav-config.json')]);
    // A read that waited for a writer would never end: the run's hang guard catches it.
    const run = await navi(['profiles', 'list'], dir);
    expect(runProblem(run), describeRun(run)).toBeNull();
  });

  it.skipIf(!hasFifo)('profiles/p/system_prompt.txt is a symlink to /dev/zero: exit 2, bounded memory', async () => {
    const dir = project({ 'profiles/p/config.json': '{}' });
    fs.symlinkSync('/dev/zero', path.join(dir, 'profiles', 'p', 'system_prompt.txt'));
    const run = await navi(['profiles', 'list'], dir);
    expect(runProblem(run), describeRun(run)).toBeNull();
  });

  it.skipIf(!hasFifo)('tasks/t.yaml is a symlink to /dev/zero (passes the 1 MB size check: st_size is 0): exit 2, bounded memory', async () => {
    const dir = project({});
    fs.mkdirSync(path.join(dir, 'tasks'));
    fs.symlinkSync('/dev/zero', path.join(dir, 'tasks', 't.yaml'));
    const run = await navi(['tasks', 'list'], dir);
    expect(runProblem(run), describeRun(run)).toBeNull();
  });
});
