/**
 * A/B timing of builds (companion of bench/run.ts): one-shot runs with one tool turn and
 * per-iteration gaps, interleaved across several package roots so machine load hits all alike.
 *
 *   ./node_modules/.bin/tsx bench/compare.ts --roots /path/a,/path/b [--rounds 8] [--gap] [--no-pg]
 *
 * Each root is a package directory holding dist/ (plus package.json, profiles/, drizzle/,
 * node_modules/ or links to them) — e.g. a copy of this repository with one change applied.
 * Prints, per root and backend, median and minimum wall time with the phase breakdown
 * (spawn → first HTTP request, /api/show → chat, chat 1 done → chat 2 received, chat 2 done → exit)
 * and, with --gap, the median gap of 30 todo-list tool turns over 100 messages of history.
 */
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import type http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import type PostgresFactory from 'postgres';
import { startFakeOllama, type FakeScript } from '../test/support/fake-ollama.js';

const argv = process.argv.slice(2);
const flag = (name: string): string | undefined => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
};
const roots = (flag('--roots') ?? '').split(',').filter(Boolean).map((r) => path.resolve(r));
if (roots.length === 0) {
  process.stderr.write('usage: compare.ts --roots DIR[,DIR…] [--rounds N] [--gap] [--no-pg]\n');
  process.exit(2);
}
const ROUNDS = Number(flag('--rounds') ?? 8);
const PG_ADMIN = flag('--pg-admin') ?? process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'navi-compare-'));
const home = path.join(tmp, 'home');
const work = path.join(tmp, 'work');
fs.mkdirSync(home);
fs.mkdirSync(path.join(work, 'src'), { recursive: true });
fs.writeFileSync(path.join(work, 'README.md'), '# demo\n');

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] ?? NaN) : ((s[m - 1] ?? 0) + (s[m] ?? 0)) / 2;
};

interface Stamp {
  path: string;
  head: number;
  body?: number;
  finish?: number;
}
const fake = await startFakeOllama({ turns: [] });
const stamps: Stamp[] = [];
(fake as unknown as { server: http.Server }).server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
  const s: Stamp = { path: (req.url ?? '').split('?')[0] ?? '', head: performance.now() };
  stamps.push(s);
  req.once('end', () => (s.body = performance.now()));
  res.once('finish', () => (s.finish = performance.now()));
});

function run(root: string, args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; t0: number; t1: number; out: string }> {
  return new Promise((resolve) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, [path.join(root, 'dist/cli/main.cjs'), ...args], {
      cwd: work,
      env: { PATH: process.env.PATH, HOME: home, CI: '1', NO_COLOR: '1', OLLAMA_HOST: fake.url, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    child.on('exit', (code) => resolve({ code, t0, t1: performance.now(), out }));
  });
}

const ONE: FakeScript = { turns: [{ tool_calls: [{ name: 'list_dir', arguments: { path: '.' } }] }, { content: 'Three entries.' }] };
const LOOP: FakeScript = {
  models: [{ name: 'qwen3:8b', context_length: 262144 }],
  turns: [...Array.from({ length: 30 }, () => ({ tool_calls: [{ name: 'todo', arguments: { action: 'list' } }] })), { content: 'Done.' }],
};

async function oneShot(root: string, env: NodeJS.ProcessEnv): Promise<number[]> {
  fake.setScript(ONE);
  const from = stamps.length;
  const r = await run(root, ['run', '-o', 'json', '-q', 'List the files here.'], env);
  const reqs = stamps.slice(from);
  const chats = reqs.filter((s) => s.path === '/api/chat');
  if (r.code !== 0 || chats.length !== 2) throw new Error(`${root}: exit ${r.code}: ${r.out.slice(-400)}`);
  const [c1, c2] = chats as [Stamp, Stamp];
  return [r.t1 - r.t0, (reqs[0]?.head ?? NaN) - r.t0, c1.head - (reqs[0]?.head ?? NaN), (c2.body ?? NaN) - (c1.finish ?? NaN), r.t1 - (c2.finish ?? NaN)];
}

async function gapRun(root: string, env: NodeJS.ProcessEnv, session: string): Promise<number> {
  fake.setScript(LOOP);
  const from = stamps.length;
  const r = await run(root, ['run', '-o', 'json', '-q', '--session', session, 'Continue.'], { ...env, OLLAMA_NUM_CTX: '262144' });
  const chats = stamps.slice(from).filter((s) => s.path === '/api/chat');
  if (r.code !== 0 || chats.length !== 31) throw new Error(`${root}: exit ${r.code}: ${r.out.slice(-400)}`);
  const gaps: number[] = [];
  for (let k = 0; k + 1 < chats.length; k++) gaps.push((chats[k + 1]?.body ?? NaN) - (chats[k]?.finish ?? NaN));
  return median(gaps);
}

async function seed(root: string, store: { url?: string; dataDir: string }): Promise<string> {
  const { openStore } = (await import(`file://${root}/dist/store/open.js`)) as {
    openStore: (o: { url?: string; dataDir: string }) => Promise<{
      sessions: { create(s: Record<string, unknown>): Promise<void> };
      messages: { append(id: string, m: unknown): Promise<void> };
      close(): Promise<void>;
    }>;
  };
  const s = await openStore(store);
  const id = crypto.randomUUID();
  await s.sessions.create({ id, kind: 'chat', profile: 'default', cwd: work, parentId: null, title: 'compare', model: 'qwen3:8b' });
  await s.messages.append(id, { role: 'user', content: 'start' });
  for (let i = 0; i < 49; i++) {
    await s.messages.append(id, { role: 'assistant', content: '', tool_calls: [{ id: `c${i}`, name: 'read_file', arguments: { path: `f${i}` } }] });
    await s.messages.append(id, { role: 'tool', content: 'x'.repeat(300), tool_name: 'read_file' });
  }
  await s.close();
  return id;
}

interface Target {
  root: string;
  backend: string;
  env: NodeJS.ProcessEnv;
  store: { url?: string; dataDir: string };
  samples: number[][];
  gaps: number[];
  session?: string;
}

const drops: Array<() => Promise<void>> = [];
try {
  const targets: Target[] = [];
  let postgres: typeof PostgresFactory | null = null;
  if (!argv.includes('--no-pg')) ({ default: postgres } = await import('postgres'));
  for (const [i, root] of roots.entries()) {
    const dataDir = path.join(tmp, `pg${i}`, 'pgdata');
    targets.push({ root, backend: 'PGlite', env: { NAVI_DATA_DIR: dataDir }, store: { dataDir }, samples: [], gaps: [] });
    if (postgres) {
      const name = `navi_compare_${process.pid}_${i}`;
      const admin = postgres(PG_ADMIN, { max: 1, connect_timeout: 3, onnotice: () => undefined });
      try {
        await admin.unsafe(`create database "${name}"`);
        drops.push(async () => {
          await admin.unsafe(`drop database if exists "${name}" with (force)`);
          await admin.end({ timeout: 1 });
        });
        const url = new URL(PG_ADMIN);
        url.pathname = `/${name}`;
        targets.push({ root, backend: 'PostgreSQL', env: { DATABASE_URL: url.toString() }, store: { url: url.toString(), dataDir: '' }, samples: [], gaps: [] });
      } catch {
        await admin.end({ timeout: 0 });
      }
    }
  }
  // First use: creates the PGlite directory / migrates the database (not measured).
  for (const t of targets) {
    await oneShot(t.root, t.env);
    if (argv.includes('--gap')) t.session = await seed(t.root, t.store);
  }
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? targets : [...targets].reverse();
    for (const t of order) {
      t.samples.push(await oneShot(t.root, t.env));
      if (t.session && round < 3) t.gaps.push(await gapRun(t.root, t.env, t.session));
    }
  }
  process.stdout.write(`load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')} · ${ROUNDS} rounds · node ${process.version}\n`);
  for (const t of targets) {
    const col = (i: number): number => median(t.samples.map((s) => s[i] ?? NaN));
    const wall = t.samples.map((s) => s[0] ?? NaN);
    process.stdout.write(
      `${t.backend.padEnd(10)} wall median ${col(0).toFixed(0).padStart(5)} ms (min ${Math.min(...wall).toFixed(0).padStart(4)}) | ` +
        `→1st HTTP ${col(1).toFixed(0).padStart(4)} · show→chat ${col(2).toFixed(1).padStart(5)} · chat1→chat2 ${col(3).toFixed(0).padStart(4)} · →exit ${col(4).toFixed(0).padStart(4)}` +
        (t.gaps.length ? ` | gap ${median(t.gaps).toFixed(2)} ms` : '') +
        `  ${t.root}\n`,
    );
  }
} finally {
  await fake.close();
  for (const d of drops) await d().catch(() => undefined);
  fs.rmSync(tmp, { recursive: true, force: true });
}
