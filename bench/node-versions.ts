/**
 * navi on the Node.js versions users have (issue 40; `--only nodes` of bench/run.ts): the PGlite
 * one-shot run of the `oneshot` figure and `navi sessions list`, on the bench's own Node (the one
 * running bench/run.ts: `--node` does not change it, so `--node X --only nodes,startup` still
 * compares the same pair) and on each other Node (`--other-node PATH`, repeatable or
 * comma-separated; default: the Node 24 that `.ci/node-bin 24` prints). The runs are
 * interleaved, rotating which Node goes first, each Node on its own existing, migrated PGlite
 * data directory (made by one unmeasured run, which also writes its V8 code cache). Rows, per
 * other Node: one-shot wall (median) and peak RSS (median) as ratios other/own, target ≤ 1.3×
 * each (issue 40: on Node 24 a PGlite one-shot costs no more than on Node 20); `sessions list`
 * as info. A Node that cannot run is a `skip` row with the reason.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

type Verdict = 'pass' | 'FAIL' | 'info' | 'skip' | 'error';

/** One measured run: wall time and peak RSS (KB), or why it failed. */
export type Measured = { wallMs: number; rssKb: number } | { error: string };

/** What the nodes figure runs: the oneshot figure's script, or `navi sessions list`. */
export type NodesRun = 'oneshot' | 'sessions';

/** What bench/run.ts lends this file. */
export interface NodesBenchContext {
  /** Measured rounds (each runs every Node once per kind). */
  runs: number;
  /** The bench's own Node (process.execPath), what the others are held to. */
  own: string;
  /** `--other-node` values; null: the default (`.ci/node-bin 24`). */
  others: string[] | null;
  /** This repository's `.ci/node-bin` (the one of the bench, not of `--root`). */
  nodeBin: string;
  /** Where each Node's PGlite data directory goes. */
  dir: string;
  /** One run of `what` under `node` on the PGlite data directory `dataDir`, with peak RSS. */
  measure(what: NodesRun, node: string, dataDir: string): Promise<Measured>;
  row: (figure: string, target: string, measured: string, verdict: Verdict, data?: Record<string, unknown>) => void;
  median: (xs: number[]) => number;
}

/** Issue 40's bound: other Node ÷ own Node, wall and peak RSS each. */
const MAX_RATIO = 1.3;
const DEFAULT_MAJOR = '24';

/** `node -v` of a binary, or why it does not run. */
export function nodeVersion(bin: string): { version: string } | { error: string } {
  const r = spawnSync(bin, ['-v'], { encoding: 'utf8', timeout: 30_000 });
  const version = (r.stdout ?? '').trim();
  if (r.error) return { error: `${bin} does not run (${r.error.message})` };
  if (r.status !== 0 || !/^v\d+\./.test(version)) return { error: `${bin} -v exited ${r.status ?? r.signal}: ${(r.stderr ?? '').trim().slice(0, 160)}` };
  return { version };
}

/** `--other-node` values, repeatable and comma-separated; null when none is given. */
export function parseOtherNodes(argv: string[]): string[] | null {
  const values = argv.flatMap((a, i) => (a === '--other-node' ? (argv[i + 1] ?? '').split(',') : []));
  if (!argv.includes('--other-node')) return null;
  const bins = values.map((v) => v.trim()).filter((v) => v !== '');
  if (bins.length === 0) throw new Error('--other-node needs the path of a node binary');
  return bins.map((b) => path.resolve(b));
}

/** The default other Node: what `.ci/node-bin 24` prints (it installs it the first time). */
function defaultOther(nodeBin: string): { bin: string } | { error: string } {
  const r = spawnSync(nodeBin, [DEFAULT_MAJOR], { encoding: 'utf8', timeout: 600_000 });
  const bin = (r.stdout ?? '').trim().split('\n').pop() ?? '';
  if (r.error || r.status !== 0 || bin === '') {
    const why = r.error?.message ?? ((r.stderr ?? '').trim().split('\n').pop() || `exit ${r.status ?? r.signal}`);
    return { error: `.ci/node-bin ${DEFAULT_MAJOR} gave no Node (${why}); name one with --other-node` };
  }
  return { bin };
}

interface Subject {
  bin: string;
  version: string;
  dataDir: string;
  oneshot: Array<{ wallMs: number; rssKb: number }>;
  sessions: Array<{ wallMs: number; rssKb: number }>;
  error?: string;
}

const title = (other: string, own: string): string => `nodes: PGlite one-shot, Node ${other} vs ${own}`;
const target = `≤ ${MAX_RATIO.toFixed(2)}× own Node (issue 40)`;

/** The others that can run, with a skip row for each that cannot (or is the own Node itself). */
function resolveOthers(ctx: NodesBenchContext, ownVersion: string): Array<{ bin: string; version: string }> {
  const bins = [...(ctx.others ?? [])];
  if (ctx.others === null) {
    const found = defaultOther(ctx.nodeBin);
    if ('error' in found) ctx.row(title(`${DEFAULT_MAJOR}.x`, ownVersion), target, `skipped: ${found.error}`, 'skip');
    else bins.push(found.bin);
  }
  const own = fs.realpathSync(ctx.own);
  const out = new Map<string, { bin: string; version: string }>();
  for (const bin of bins) {
    const v = nodeVersion(bin);
    if ('error' in v) {
      ctx.row(title(bin, ownVersion), target, `skipped: ${v.error}`, 'skip');
      continue;
    }
    const real = fs.realpathSync(bin);
    if (real === own) ctx.row(title(v.version, ownVersion), target, `skipped: ${bin} is the bench's own Node; name another with --other-node`, 'skip');
    else if (!out.has(real)) out.set(real, { bin, version: v.version });
  }
  return [...out.values()];
}

export async function figureNodes(ctx: NodesBenchContext): Promise<void> {
  const ownV = nodeVersion(ctx.own);
  if ('error' in ownV) {
    ctx.row('nodes: PGlite one-shot on each Node', target, `error: ${ownV.error}`, 'error');
    return;
  }
  const nodes = [{ bin: ctx.own, version: ownV.version }, ...resolveOthers(ctx, ownV.version)];
  if (nodes.length === 1) return;
  const subjects: Subject[] = nodes.map((n, i) => ({ ...n, dataDir: path.join(ctx.dir, `node-${i}`, 'pgdata'), oneshot: [], sessions: [] }));
  const once = async (s: Subject, what: NodesRun): Promise<Measured> => {
    const m = await ctx.measure(what, s.bin, s.dataDir);
    if ('error' in m) s.error ??= `${what === 'oneshot' ? 'one-shot' : 'sessions list'} on ${s.version}: ${m.error}`;
    return m;
  };
  // Unmeasured: creates each data directory and code cache (what a returning user has).
  for (const s of subjects) await once(s, 'oneshot');
  for (let round = 0; round < ctx.runs && subjects[0]?.error === undefined; round++) {
    // Rotate which Node goes first, so that drift in machine load hits all alike.
    const order = subjects.map((_, k) => subjects[(k + round) % subjects.length] as Subject);
    for (const s of order) {
      for (const what of ['oneshot', 'sessions'] as const) {
        if (s.error !== undefined) break;
        const m = await once(s, what);
        if (!('error' in m)) s[what].push(m);
      }
    }
  }
  report(ctx, subjects);
}

function report(ctx: NodesBenchContext, [own, ...others]: Subject[]): void {
  if (!own) return;
  const med = (xs: Array<{ wallMs: number; rssKb: number }>, k: 'wallMs' | 'rssKb'): number => ctx.median(xs.map((x) => x[k]));
  const mb = (kb: number): string => `${(kb / 1024).toFixed(0)} MB`;
  for (const other of others) {
    const label = title(other.version, own.version);
    const error = own.error ?? other.error;
    if (error !== undefined) {
      ctx.row(`${label}: wall`, target, `error: ${error}`.slice(0, 240), 'error');
      continue;
    }
    const n = `medians of ${other.oneshot.length}, interleaved`;
    const metrics = [
      { name: 'wall', key: 'wallMs', show: (v: number) => `${v.toFixed(0)} ms` },
      { name: 'peak RSS', key: 'rssKb', show: mb },
    ] as const;
    for (const { name, key, show } of metrics) {
      const [theirs, ours] = [med(other.oneshot, key), med(own.oneshot, key)];
      const ratio = theirs / ours;
      ctx.row(`${label}: ${name}`, target, `${ratio.toFixed(2)}× (${show(theirs)} vs ${show(ours)}, ${n})`, ratio <= MAX_RATIO ? 'pass' : 'FAIL', {
        ratio,
        samples: other.oneshot.map((x) => x[key]),
        ownSamples: own.oneshot.map((x) => x[key]),
        bin: other.bin,
      });
    }
  }
  const ok = [own, ...others].filter((s) => s.error === undefined);
  if (own.error !== undefined || ok.length < 2) return;
  ctx.row(
    '  navi sessions list, PGlite, on each Node (median)',
    'info',
    ok.map((s) => `${s.version} ${med(s.sessions, 'wallMs').toFixed(0)} ms, ${mb(med(s.sessions, 'rssKb'))}`).join('; ') + ` (${ok[0]?.sessions.length ?? 0} runs each)`,
    'info',
    Object.fromEntries(ok.map((s) => [s.version, s.sessions])),
  );
}
