/**
 * Where a one-shot `navi run` spends its time (companion of bench/run.ts; not part of `npm run bench`).
 *
 *   ./node_modules/.bin/tsx bench/profile.ts [imports] [pglite] [cpu] [--root DIR] [--runs N]
 *
 * - imports: cost of importing each heavy module alone in a fresh process (median of N), and the
 *   marginal cost of each step along the path `navi run` actually loads.
 * - pglite:  opening an existing PGlite data directory, step by step, with variants of the
 *   options (median of N fresh processes each).
 * - cpu:     `node --cpu-prof` of the one-shot run (PGlite and, when reachable, PostgreSQL)
 *   against the fake server; CPU time by package inside each phase of the run, phases cut by
 *   the fake server's own timestamps (same monotonic clock as the profile), top functions.
 * - gap:     `node --cpu-prof` of `navi run --session` over 100 (--history N) messages making 30 tool
 *   turns (todo list), CPU by package summed over the per-iteration gaps (response k flushed →
 *   request k+1 received), and how much of the gap the main thread sat idle (waiting on the DB).
 * - store:   the database work of one tool-loop iteration timed in-process, per operation (append
 *   assistant message, addUsage, append tool result, getTodos), median/p90 of 200 iterations,
 *   with 10 and 1000 messages of history, on both backends; also one transaction holding them.
 * Default: imports, pglite and cpu. Temporary files go to the OS temp directory.
 */
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import type http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import crypto from 'node:crypto';
import { startFakeOllama, type FakeScript } from '../test/support/fake-ollama.js';

const argv = process.argv.slice(2);
const flag = (name: string): string | undefined => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
const ROOT = path.resolve(flag('--root') ?? fileURLToPath(new URL('..', import.meta.url)));
const RUNS = Number(flag('--runs') ?? 5);
const HISTORY = Number(flag('--history') ?? 100);
const sections = argv.filter((a) => ['imports', 'pglite', 'cpu', 'gap', 'store'].includes(a));
const want = (s: string): boolean => (sections.length === 0 ? s !== 'gap' && s !== 'store' : sections.includes(s));
const PG_ADMIN = flag('--pg-admin') ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'navi-profile-'));
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] ?? NaN) : ((s[m - 1] ?? 0) + (s[m] ?? 0)) / 2;
};
const f1 = (x: number): string => x.toFixed(1).padStart(7);
const say = (s = ''): void => void process.stdout.write(`${s}\n`);

/**
 * What to import for a module of the `navi run` path: the file the build emitted for it — the
 * bundle's `dist/modules.json` maps lazily loaded modules to their files; a tsc build (older
 * roots) mirrors src/ — or, for a dependency the build left external, its bare name. Null when
 * the module has no file of its own (it is bundled into the file of an earlier step).
 */
function builtModule(mod: string): string | null {
  const manifest = path.join(ROOT, 'dist', 'modules.json');
  const fileUrl = (rel: string): string => pathToFileURL(path.join(ROOT, 'dist', rel)).href;
  if (fs.existsSync(manifest)) {
    const modules = JSON.parse(fs.readFileSync(manifest, 'utf8')) as Record<string, string>;
    const file = modules[mod];
    if (file !== undefined) return fileUrl(file);
    return mod.startsWith('src/') || mod.startsWith('node_modules/') ? null : mod;
  }
  if (mod.startsWith('src/')) return fileUrl(mod.slice(4).replace(/\.ts$/, '.js'));
  const nm = /^node_modules\/((?:@[^/]+\/)?[^/]+)\/(?:dist\/|src\/)?(.*?)(?:\/?index)?\.m?js$/.exec(mod);
  return nm ? `${nm[1]}${nm[2] ? `/${nm[2]}` : ''}` : mod;
}

/** Runs an ES module snippet in a fresh node with cwd = ROOT (bare specifiers resolve there). */
function evalModule(source: string, nodeArgs: string[] = [], env: NodeJS.ProcessEnv = {}): string {
  const r = spawnSync(process.execPath, [...nodeArgs, '--input-type=module', '-e', source], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
  });
  if (r.status !== 0) throw new Error(`child failed (${r.status}): ${r.stderr.slice(-800)}`);
  return r.stdout;
}

// ---------------------------------------------------------------------------------------------
// imports

const HEAVY = ['yargs', 'zod', 'ora', 'js-yaml', 'drizzle-orm', 'drizzle-orm/pg-core', 'drizzle-orm/pglite', 'drizzle-orm/postgres-js', '@electric-sql/pglite', 'postgres'];

function importTimes(specs: string[]): number[] {
  const src = `
    const out = [];
    for (const s of ${JSON.stringify(specs)}) { const t = performance.now(); await import(s); out.push(performance.now() - t); }
    process.stdout.write(JSON.stringify(out));`;
  return JSON.parse(evalModule(src)) as number[];
}

function sectionImports(): void {
  say('## Import cost of each heavy module alone (fresh process, median of ' + RUNS + ')');
  for (const spec of HEAVY) {
    const xs = Array.from({ length: RUNS }, () => importTimes([spec])[0] ?? NaN);
    say(`${f1(median(xs))} ms  ${spec}`);
  }
  // The order `navi run` loads them (app → run command → profiles → tools → ollama → store);
  // a module the build did not emit as a file of its own loaded with an earlier step.
  const steps: Array<[string, string]> = [
    ['CLI entry (app; yargs stays lazy)', 'src/cli/app.ts'],
    ['run command (agent, config, zod schemas)', 'src/cli/commands/run.ts'],
    ['config loader', 'src/config/load.ts'],
    ['profiles loader', 'src/profiles/load.ts'],
    ['built-in tools', 'src/tools/builtin/index.ts'],
    ['ollama', 'node_modules/ollama/dist/index.mjs'],
    ['store/open', 'src/store/open.ts'],
    ['@electric-sql/pglite', '@electric-sql/pglite'],
    ['drizzle-orm/pglite', 'node_modules/drizzle-orm/pglite/index.js'],
    ['store/migrate (+ drizzle-orm/migrator)', 'src/store/migrate.ts'],
    ['drizzle-orm/pglite/migrator', 'node_modules/drizzle-orm/pglite/migrator.js'],
    ['store/drizzle-store (schema, repositories)', 'src/store/drizzle-store.ts'],
    ['postgres', 'node_modules/postgres/src/index.js'],
    ['drizzle-orm/postgres-js', 'node_modules/drizzle-orm/postgres-js/index.js'],
  ];
  const chain = steps.flatMap(([label, mod]): Array<[string, string]> => {
    const url = builtModule(mod);
    return url === null ? [] : [[`${label} (${url.startsWith('file:') ? path.relative(ROOT, fileURLToPath(url)) : url})`, url]];
  });
  const samples = Array.from({ length: RUNS }, () => importTimes(chain.map(([, s]) => s)));
  say('');
  say('## Marginal import cost along the `navi run` path (one process, in this order, median of ' + RUNS + ')');
  let total = 0;
  chain.forEach(([label], i) => {
    const m = median(samples.map((s) => s[i] ?? NaN));
    total += m;
    say(`${f1(m)} ms  ${label}`);
  });
  say(`${f1(total)} ms  total`);
  say('');
}

// ---------------------------------------------------------------------------------------------
// pglite

function sectionPglite(): void {
  const dir = path.join(tmp, 'pgdata');
  // A migrated directory, as a returning user has it.
  evalModule(`
    const { openStore } = await import(${JSON.stringify(new URL('dist/store/open.js', `file://${ROOT}/`).href)});
    const s = await openStore({ dataDir: ${JSON.stringify(dir)} }); await s.close();`);
  const wasm = path.join(ROOT, 'node_modules/@electric-sql/pglite/dist/pglite.wasm');
  const step = (opts: string, pre = ''): string => `
    import fs from 'node:fs';
    ${pre}
    const T = [performance.now()];
    const { PGlite } = await import('@electric-sql/pglite'); T.push(performance.now());
    const extra = await (async () => (${opts}))(); T.push(performance.now());
    const db = await PGlite.create(${JSON.stringify(dir)}, extra); T.push(performance.now());
    await db.query('select 1'); T.push(performance.now());
    const { drizzle } = await import('drizzle-orm/pglite');
    const { migratePglite } = await import(${JSON.stringify(builtModule('src/store/migrate.ts'))});
    T.push(performance.now());
    await migratePglite(drizzle({ client: db })); T.push(performance.now());
    await db.query("insert into sessions (id, kind, profile, cwd, title, model) values (gen_random_uuid()::text, 'chat', 'default', '/', 'x', 'm')").catch(() => db.query('select 1'));
    T.push(performance.now());
    await db.close(); T.push(performance.now());
    process.stdout.write(JSON.stringify({ boot: T[0], steps: T.slice(1).map((t, i) => t - T[i]), rss: process.resourceUsage().maxRSS / 1024 }));`;
  // PGlite's own default start parameters (0.5.x), plus a smaller shared_buffers.
  const smallBuffers =
    "{ startParams: ['--single','-F','-O','-j','-c','search_path=public','-c','exit_on_error=false','-c','log_checkpoints=false'," +
    "'-c','max_worker_processes=0','-c','max_parallel_workers=0','-c','max_parallel_workers_per_gather=0','-c','io_method=sync'," +
    "'-c','max_parallel_maintenance_workers=0','-c','shared_buffers=16MB'] }";
  const variants: Array<[string, string, string, string[]]> = [
    ['default', '{}', '', []],
    ['relaxedDurability', '{ relaxedDurability: true }', '', []],
    [
      'pgliteWasmModule precompiled (compile excluded)',
      `{ pgliteWasmModule: await WebAssembly.compile(fs.readFileSync(${JSON.stringify(wasm)})) }`,
      '',
      [],
    ],
    ['--liftoff-only (no TurboFan tier-up)', '{}', '', ['--liftoff-only']],
    ['shared_buffers=16MB', smallBuffers, '', []],
    ['--liftoff-only + shared_buffers=16MB', smallBuffers, '', ['--liftoff-only']],
  ];
  const labels = ['import pglite', 'options (compile)', 'PGlite.create', 'first query', 'import drizzle+migrate', 'migration check', 'one insert', 'close'];
  say('## PGlite: opening an existing data directory (fresh process each, median of ' + RUNS + ')');
  say(`${labels.map((l) => l.padStart(14).slice(-14)).join(' ')}   variant`);
  for (const [name, opts, pre, nodeArgs] of variants) {
    let runs: Array<{ steps: number[]; rss: number }>;
    try {
      runs = Array.from({ length: RUNS }, () => JSON.parse(evalModule(step(opts, pre), nodeArgs)) as { steps: number[]; rss: number });
    } catch (err) {
      say(`  ${name}: failed: ${String(err).slice(0, 300)}`);
      continue;
    }
    const med = labels.map((_, i) => median(runs.map((r) => r.steps[i] ?? NaN)));
    const total = med.reduce((a, b) => a + b, 0);
    say(`${med.map((m) => f1(m).padStart(14)).join(' ')}   ${name} (total ${total.toFixed(0)} ms, peak RSS ${median(runs.map((r) => r.rss)).toFixed(0)} MB)`);
  }
  const compile = Array.from({ length: RUNS }, () =>
    Number(evalModule(`import fs from 'node:fs'; const b = fs.readFileSync(${JSON.stringify(wasm)}); const t = performance.now(); await WebAssembly.compile(b); process.stdout.write(String(performance.now() - t));`)),
  );
  say(`WebAssembly.compile(pglite.wasm, ${(fs.statSync(wasm).size / 1e6).toFixed(1)} MB) alone: ${median(compile).toFixed(1)} ms`);
  say('');
}

// ---------------------------------------------------------------------------------------------
// cpu

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** µs on CLOCK_MONOTONIC, the clock V8's profiler stamps samples with. */
const nowUs = (): number => Number(process.hrtime.bigint() / 1000n);

function category(url: string, fn: string): string {
  if (!url) return fn.startsWith('(') ? fn : `(native) ${fn || 'anonymous'}`;
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + 'node_modules/'.length).split('/');
    return rest[0]?.startsWith('@') ? `${rest[0]}/${rest[1]}` : (rest[0] ?? url);
  }
  const d = url.indexOf('/dist/');
  if (d >= 0) return `navi ${url.slice(d + 6).split('/').slice(0, -1).join('/') || '.'}`;
  if (url.startsWith('node:')) return 'node internals';
  return url;
}

interface Window {
  name: string;
  from: number;
  to: number;
}

function analyse(prof: CpuProfile, windows: Window[]): void {
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  let t = prof.startTime;
  const perWindow = windows.map(() => new Map<string, number>());
  const fnTotals = new Map<string, number>();
  for (let i = 0; i < prof.samples.length; i++) {
    t += prof.timeDeltas[i] ?? 0;
    const node = byId.get(prof.samples[i] ?? -1);
    if (!node) continue;
    // A sample stands for the interval up to the next one.
    const dt = (prof.timeDeltas[i + 1] ?? 0) / 1000;
    const { functionName, url, lineNumber } = node.callFrame;
    const cat = category(url, functionName);
    const w = windows.findIndex((win) => t >= win.from && t < win.to);
    if (w >= 0) perWindow[w]?.set(cat, (perWindow[w]?.get(cat) ?? 0) + dt);
    if (functionName !== '(idle)') {
      const key = `${functionName || '(anonymous)'} ${cat}:${lineNumber + 1}`;
      fnTotals.set(key, (fnTotals.get(key) ?? 0) + dt);
    }
  }
  windows.forEach((win, i) => {
    const m = perWindow[i] ?? new Map<string, number>();
    const span = (win.to - win.from) / 1000;
    const idle = m.get('(idle)') ?? 0;
    const busy = [...m.entries()].filter(([k]) => k !== '(idle)').sort((a, b) => b[1] - a[1]);
    say(`  ${win.name}: ${span.toFixed(0)} ms wall, ${idle.toFixed(0)} ms idle on the main thread`);
    say(`    ${busy.slice(0, 9).map(([k, v]) => `${k} ${v.toFixed(0)}`).join(' · ')}`);
  });
  const top = [...fnTotals.entries()].sort((a, b) => b[1] - a[1]).slice(0, 12);
  say('  top self time (whole run):');
  for (const [k, v] of top) say(`    ${v.toFixed(1).padStart(6)} ms  ${k}`);
}

async function profileRun(label: string, env: NodeJS.ProcessEnv, work: string, fakeUrl: string, stamps: Array<{ path: string; head: number; body?: number; finish?: number }>): Promise<void> {
  const profDir = fs.mkdtempSync(path.join(tmp, 'prof-'));
  const from = stamps.length;
  const t0 = nowUs();
  const child = spawn(process.execPath, ['--cpu-prof', '--cpu-prof-dir', profDir, path.join(ROOT, 'dist/cli/main.cjs'), 'run', '-o', 'json', '-q', 'List the files in this directory.'], {
    cwd: work,
    env: { PATH: process.env.PATH, HOME: path.join(tmp, 'home'), CI: '1', OLLAMA_HOST: fakeUrl, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  const t1 = await new Promise<number>((resolve) => child.on('exit', () => resolve(nowUs())));
  const file = fs.readdirSync(profDir).find((f) => f.endsWith('.cpuprofile'));
  if (!file) throw new Error(`no profile written: ${out}`);
  const prof = JSON.parse(fs.readFileSync(path.join(profDir, file), 'utf8')) as CpuProfile;
  const reqs = stamps.slice(from);
  const show = reqs.find((r) => r.path === '/api/show');
  const chats = reqs.filter((r) => r.path === '/api/chat');
  const [c1, c2] = chats;
  if (!show || !c1 || !c2 || c1.finish === undefined || c2.finish === undefined || c2.body === undefined) throw new Error(`unexpected requests: ${JSON.stringify(reqs)} ${out}`);
  const rel = (x: number): string => `${((x - t0) / 1000).toFixed(0)}`;
  say(`### ${label}: wall ${((t1 - t0) / 1000).toFixed(0)} ms`);
  say(
    `  timeline (ms after spawn): profiler starts ${rel(prof.startTime)}, /api/show ${rel(show.head)}, chat 1 sent ${rel(c1.head)}→done ${rel(c1.finish)}, ` +
      `chat 2 received ${rel(c2.body)}→done ${rel(c2.finish)}, profiler ends ${rel(prof.endTime)}, exit ${rel(t1)}`,
  );
  analyse(prof, [
    { name: 'start → first HTTP request (/api/show)', from: prof.startTime, to: show.head },
    { name: '/api/show → chat 1 done', from: show.head, to: c1.finish },
    { name: 'chat 1 done → chat 2 received (store open + tool + writes)', from: c1.finish, to: c2.body },
    { name: 'chat 2 done → exit (flush + close)', from: c2.finish, to: prof.endTime + 1 },
  ]);
  say('');
}

async function sectionCpu(): Promise<void> {
  const script: FakeScript = {
    turns: [{ tool_calls: [{ name: 'list_dir', arguments: { path: '.' } }] }, { content: 'The directory holds a few files.' }],
  };
  const fake = await startFakeOllama(script);
  const stamps: Array<{ path: string; head: number; body?: number; finish?: number }> = [];
  const server = (fake as unknown as { server: http.Server }).server;
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const s: { path: string; head: number; body?: number; finish?: number } = { path: (req.url ?? '').split('?')[0] ?? '', head: nowUs() };
    stamps.push(s);
    req.once('end', () => (s.body = nowUs()));
    res.once('finish', () => (s.finish = nowUs()));
  });
  const work = path.join(tmp, 'work');
  fs.mkdirSync(path.join(work, 'src'), { recursive: true });
  fs.mkdirSync(path.join(tmp, 'home'), { recursive: true });
  fs.writeFileSync(path.join(work, 'README.md'), '# demo\n');
  say('## CPU profile of one-shot runs (node --cpu-prof; ms of main-thread CPU by package per phase)');
  try {
    const dataDir = path.join(tmp, 'cpu-pgdata');
    const pgliteEnv = { NAVI_DATA_DIR: dataDir };
    // Create and migrate the directory first (a returning user), then profile a second run.
    fake.setScript(script);
    await profileRun('PGlite, first run ever (new data dir)', pgliteEnv, work, fake.url, stamps);
    for (let i = 0; i < 2; i++) {
      fake.setScript(script);
      await profileRun(`PGlite, existing data dir (run ${i + 1})`, pgliteEnv, work, fake.url, stamps);
    }
    const pg = await createPgDatabase();
    if (pg) {
      try {
        for (let i = 0; i < 3; i++) {
          fake.setScript(script);
          await profileRun(i === 0 ? 'PostgreSQL, first run (migrations)' : `PostgreSQL (run ${i})`, { DATABASE_URL: pg.url }, work, fake.url, stamps);
        }
      } finally {
        await pg.drop();
      }
    } else say('PostgreSQL: skipped (unreachable)');
  } finally {
    await fake.close();
  }
}

async function sectionGap(): Promise<void> {
  const turns = 30;
  const script: FakeScript = {
    models: [{ name: 'qwen3:8b', context_length: 262144 }],
    turns: [...Array.from({ length: turns }, () => ({ tool_calls: [{ name: 'todo', arguments: { action: 'list' } }] })), { content: 'Done.' }],
  };
  const fake = await startFakeOllama(script);
  const stamps: Array<{ path: string; head: number; body?: number; finish?: number }> = [];
  const server = (fake as unknown as { server: http.Server }).server;
  server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    const s: { path: string; head: number; body?: number; finish?: number } = { path: (req.url ?? '').split('?')[0] ?? '', head: nowUs() };
    stamps.push(s);
    req.once('end', () => (s.body = nowUs()));
    res.once('finish', () => (s.finish = nowUs()));
  });
  const work = path.join(tmp, 'work');
  fs.mkdirSync(work, { recursive: true });
  fs.mkdirSync(path.join(tmp, 'home'), { recursive: true });
  const pg = await createPgDatabase();
  const backends: Array<[string, { url?: string; dataDir: string }, NodeJS.ProcessEnv]> = [
    ['PGlite', { dataDir: path.join(tmp, 'gap-pgdata') }, { NAVI_DATA_DIR: path.join(tmp, 'gap-pgdata') }],
  ];
  if (pg) backends.push(['PostgreSQL', { url: pg.url, dataDir: '' }, { DATABASE_URL: pg.url }]);
  say(`## Harness gap under the CPU profiler (${HISTORY} messages of history, 30 todo-list tool turns)`);
  say('   (the profiler itself adds overhead: compare shares, not absolute values)');
  try {
    for (const [name, storeOpts, env] of backends) {
      const { openStore } = (await import(new URL('dist/store/open.js', `file://${ROOT}/`).href)) as {
        openStore: (o: { url?: string; dataDir: string }) => Promise<{
          sessions: { create(s: Record<string, unknown>): Promise<void> };
          messages: { append(id: string, m: unknown): Promise<void> };
          close(): Promise<void>;
        }>;
      };
      const store = await openStore(storeOpts);
      const id = crypto.randomUUID();
      await store.sessions.create({ id, kind: 'chat', profile: 'default', cwd: work, parentId: null, title: 'gap', model: 'qwen3:8b' });
      await store.messages.append(id, { role: 'user', content: 'start' });
      for (let i = 0; i < (HISTORY - 2) / 2; i++) {
        await store.messages.append(id, { role: 'assistant', content: '', tool_calls: [{ id: `c${i}`, name: 'read_file', arguments: { path: `f${i}` } }] });
        await store.messages.append(id, { role: 'tool', content: 'x'.repeat(300), tool_name: 'read_file' });
      }
      await store.close();
      fake.setScript(script);
      const from = stamps.length;
      const profDir = fs.mkdtempSync(path.join(tmp, 'prof-'));
      const child = spawn(process.execPath, ['--cpu-prof', '--cpu-prof-dir', profDir, path.join(ROOT, 'dist/cli/main.cjs'), 'run', '-o', 'json', '-q', '--session', id, 'go on'], {
        cwd: work,
        env: { PATH: process.env.PATH, HOME: path.join(tmp, 'home'), CI: '1', OLLAMA_HOST: fake.url, OLLAMA_NUM_CTX: '262144', ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout.on('data', (c: Buffer) => (out += c.toString()));
      child.stderr.on('data', (c: Buffer) => (out += c.toString()));
      await new Promise((resolve) => child.on('exit', resolve));
      const file = fs.readdirSync(profDir).find((f) => f.endsWith('.cpuprofile'));
      if (!file) throw new Error(`no profile: ${out}`);
      const prof = JSON.parse(fs.readFileSync(path.join(profDir, file), 'utf8')) as CpuProfile;
      const chats = stamps.slice(from).filter((s) => s.path === '/api/chat');
      const windows: Window[] = [];
      for (let k = 0; k + 1 < chats.length; k++) {
        const a = chats[k]?.finish;
        const b = chats[k + 1]?.body;
        if (a !== undefined && b !== undefined) windows.push({ name: `gap ${k + 1}`, from: a, to: b });
      }
      const gaps = windows.map((w) => (w.to - w.from) / 1000);
      say(`### ${name}: ${windows.length} gaps, median ${median(gaps).toFixed(2)} ms (under the profiler)`);
      analyseSummed(prof, windows);
      say('');
    }
  } finally {
    await fake.close();
    if (pg) await pg.drop();
  }
}

/** CPU by category summed over many windows, and the top functions inside them. */
function analyseSummed(prof: CpuProfile, windows: Window[]): void {
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const cats = new Map<string, number>();
  const fns = new Map<string, number>();
  let t = prof.startTime;
  for (let i = 0; i < prof.samples.length; i++) {
    t += prof.timeDeltas[i] ?? 0;
    if (!windows.some((w) => t >= w.from && t < w.to)) continue;
    const node = byId.get(prof.samples[i] ?? -1);
    if (!node) continue;
    const dt = (prof.timeDeltas[i + 1] ?? 0) / 1000;
    const { functionName, url, lineNumber } = node.callFrame;
    const cat = category(url, functionName);
    cats.set(cat, (cats.get(cat) ?? 0) + dt);
    if (functionName !== '(idle)') {
      const key = `${functionName || '(anonymous)'} ${cat}:${lineNumber + 1}`;
      fns.set(key, (fns.get(key) ?? 0) + dt);
    }
  }
  const total = windows.reduce((a, w) => a + (w.to - w.from) / 1000, 0);
  const per = (v: number): string => `${(v / windows.length).toFixed(2)}`;
  say(`  per gap: ${per(total)} ms wall, ${per(cats.get('(idle)') ?? 0)} ms main thread idle`);
  const busy = [...cats.entries()].filter(([k]) => k !== '(idle)').sort((a, b) => b[1] - a[1]);
  say(`  busy per gap (ms): ${busy.slice(0, 10).map(([k, v]) => `${k} ${per(v)}`).join(' · ')}`);
  say('  top functions per gap (ms):');
  for (const [k, v] of [...fns.entries()].sort((a, b) => b[1] - a[1]).slice(0, 12)) say(`    ${per(v).padStart(6)}  ${k}`);
}

async function sectionStore(): Promise<void> {
  type Store = {
    sessions: { create(s: Record<string, unknown>): Promise<void>; addUsage(id: string, p: number, c: number): Promise<void> };
    messages: { append(id: string, m: unknown): Promise<void> };
    state: { getTodos(id: string): Promise<unknown[]> };
    close(): Promise<void>;
  };
  const { openStore } = (await import(new URL('dist/store/open.js', `file://${ROOT}/`).href)) as {
    openStore: (o: { url?: string; dataDir: string }) => Promise<Store>;
  };
  const pg = await createPgDatabase();
  const backends: Array<[string, { url?: string; dataDir: string }]> = [['PGlite', { dataDir: path.join(tmp, 'store-pgdata') }]];
  if (pg) backends.push(['PostgreSQL', { url: pg.url, dataDir: '' }]);
  say('## Database work of one iteration, in-process (ms; median / p90 of 200 iterations)');
  try {
    for (const [name, o] of backends) {
      const store = await openStore(o);
      try {
        for (const history of [10, 1000]) {
          const id = crypto.randomUUID();
          await store.sessions.create({ id, kind: 'chat', profile: 'default', cwd: '/', parentId: null, title: 't', model: 'm' });
          for (let i = 0; i < history; i++) await store.messages.append(id, { role: i % 2 ? 'tool' : 'assistant', content: 'y'.repeat(300), ...(i % 2 ? { tool_name: 'read_file' } : {}) });
          const ops: Record<string, number[]> = { 'append assistant': [], addUsage: [], 'append tool': [], getTodos: [], 'all four': [] };
          const time = async (k: string, f: () => Promise<unknown>): Promise<void> => {
            const t = performance.now();
            await f();
            ops[k]?.push(performance.now() - t);
          };
          for (let i = 0; i < 200; i++) {
            const t = performance.now();
            await time('append assistant', () => store.messages.append(id, { role: 'assistant', content: '', tool_calls: [{ id: `c${i}`, name: 'todo', arguments: { action: 'list' } }] }));
            await time('addUsage', () => store.sessions.addUsage(id, 1200, 20));
            await time('getTodos', () => store.state.getTodos(id));
            await time('append tool', () => store.messages.append(id, { role: 'tool', content: '(todo list is empty)', tool_name: 'todo' }));
            ops['all four']?.push(performance.now() - t);
          }
          const q = (xs: number[], p: number): number => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) * p)] ?? NaN;
          say(`  ${name}, ${history} msgs: ${Object.entries(ops).map(([k, xs]) => `${k} ${q(xs, 0.5).toFixed(2)}/${q(xs, 0.9).toFixed(2)}`).join(' · ')}`);
        }
      } finally {
        await store.close();
      }
    }
  } finally {
    if (pg) await pg.drop();
  }
  say('');
}

async function createPgDatabase(): Promise<{ url: string; drop: () => Promise<void> } | null> {
  const postgres = (await import('postgres')).default;
  const name = `navi_profile_${process.pid}`;
  const admin = postgres(PG_ADMIN, { max: 1, connect_timeout: 3, onnotice: () => undefined });
  try {
    await admin.unsafe(`create database "${name}"`);
  } catch {
    await admin.end({ timeout: 0 });
    return null;
  }
  const url = new URL(PG_ADMIN);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      await admin.unsafe(`drop database if exists "${name}" with (force)`);
      await admin.end({ timeout: 1 });
    },
  };
}

try {
  say(`navi profile · node ${process.version} · ${os.cpus().length} CPU · load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')} · ${new Date().toISOString()} · root ${ROOT}`);
  say('');
  if (want('imports')) sectionImports();
  if (want('pglite')) sectionPglite();
  if (want('cpu')) await sectionCpu();
  if (want('gap')) await sectionGap();
  if (want('store')) await sectionStore();
} finally {
  if (argv.includes('--keep')) say(`kept ${tmp}`);
  else fs.rmSync(tmp, { recursive: true, force: true });
}
