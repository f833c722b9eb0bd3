/**
 * Loop bookkeeping cost and memory (issue 4 targets; printed, not asserted):
 *   node --expose-gc --import tsx test/loop-runner/measure.ts [iterations=1000] [--postgres URL]
 *
 * A zero-latency model (each iteration: one read_file call, then a short answer) drives the real
 * runner in a real git repository with no checks, on a real store. Printed:
 * - bookkeeping per iteration, excluding the model and the checks: from the agent's stream_end
 *   to the next iteration_started (evidence from git, indicators, hash, gate, status block, the
 *   database commit) plus the pre-turn work (the git snapshot and the iteration message), median
 *   and p95;
 * - RSS after warm-up and after the last iteration (after a GC), and the growth.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import postgres from 'postgres';
import { Agent } from '../../src/agent/agent.js';
import { agentTools } from '../../src/agent/agent-tools.js';
import { defaultConfig } from '../../src/config/schema.js';
import type { ChatChunk, ChatRequest, ChatResult, LlmClient, ModelDetails } from '../../src/llm/types.js';
import { headlessDecisions } from '../../src/loop/decisions.js';
import { loopTools } from '../../src/loop/loop-signal-tool.js';
import { runLoop } from '../../src/loop/runner.js';
import { loadProfiles } from '../../src/profiles/load.js';
import { openStore } from '../../src/store/open.js';
import { builtinTools } from '../../src/tools/builtin/index.js';
import { ToolRegistry } from '../../src/tools/registry.js';

/** A model that answers instantly and keeps nothing. */
class InstantLlm implements LlmClient {
  async *chatStream(req: ChatRequest): AsyncIterable<ChatChunk> {
    await Promise.resolve();
    const last = req.messages.filter((m) => m.role !== 'system').at(-1);
    if (last?.role === 'user') yield { type: 'tool_calls', calls: [{ name: 'read_file', arguments: { path: 'math.js' } }] };
    else yield { type: 'text', text: 'Looked at math.js.' };
    yield { type: 'done', usage: { promptTokens: 100, completionTokens: 10 }, doneReason: 'stop', model: req.model };
  }
  chat(): Promise<ChatResult> {
    return Promise.resolve({ content: 'summary', thinking: '', toolCalls: [], usage: { promptTokens: 0, completionTokens: 0 }, doneReason: 'stop', model: 'm' });
  }
  showModel(model: string): Promise<ModelDetails> {
    return Promise.resolve({ name: model, contextLength: 1 << 30 });
  }
  listModels(): Promise<string[]> {
    return Promise.resolve(['m']);
  }
  version(): Promise<string> {
    return Promise.resolve('0');
  }
}

const args = process.argv.slice(2);
const iterations = Number(args.find((a) => /^\d+$/.test(a)) ?? 1000);
const pgIndex = args.indexOf('--postgres');
const adminUrl = pgIndex >= 0 ? args[pgIndex + 1] : undefined;

const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'navi-measure-'));
fs.writeFileSync(path.join(cwd, 'math.js'), 'export const add = (a, b) => a - b;\n');
for (const a of [['init', '-q'], ['config', 'user.email', 'm@m'], ['config', 'user.name', 'm'], ['add', '-A'], ['commit', '-qm', 'init']]) execFileSync('git', a, { cwd });

let dbName: string | undefined;
let url: string | undefined;
if (adminUrl !== undefined) {
  dbName = `navi_measure_${process.pid}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database "${dbName}"`);
  await admin.end();
  const u = new URL(adminUrl);
  u.pathname = `/${dbName}`;
  url = u.toString();
}
const dataDir = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'navi-measure-db-')), 'pgdata');
const store = await openStore({ url, dataDir });
const agent = new Agent({ llm: new InstantLlm(), store: Promise.resolve(store), tools: new ToolRegistry([...builtinTools(), ...agentTools(), ...loopTools()]), profiles: loadProfiles() });

const gc = (globalThis as { gc?: () => void }).gc;
const rss = (): number => {
  gc?.();
  return process.memoryUsage().rss / 1024 / 1024;
};

const post: number[] = [];
const phases: Record<'pre_turn' | 'evidence' | 'evaluate' | 'commit', number[]> = { pre_turn: [], evidence: [], evaluate: [], commit: [] };
const perIteration: number[] = [];
let current = 0;
let streamEndAt = 0;
let rssWarm = 0;
let heapWarm = 0;
let done = 0;
const started = performance.now();
const gen = runLoop(
  {
    task: { name: 'measure', prompt: 'Look at math.js.', source: 'measure', loopMode: true, checks: [] },
    // Past the config schema's 20 on purpose: a long run, no stagnation stop.
    loop: { ...defaultConfig().loop_mode, max_iterations: iterations, stagnation_threshold: 1_000_000 },
    profileId: 'default',
    turn: { model: 'm', cwd, numCtx: 1 << 30, think: false, keepAlive: '30m', interactive: false, shell: { allow: [], deny: [], timeoutS: 30, maxOutputBytes: 65536 }, redact: (s) => s },
    signal: new AbortController().signal,
    maxTokens: null,
    deadlineAt: null,
    iterationTimeoutMs: 600_000,
    decisions: headlessDecisions,
    owner: { pid: process.pid, host: os.hostname(), since: new Date().toISOString() },
  },
  {
    agent,
    store,
    timing: (phase, ms) => {
      if (phase === 'checks') return;
      phases[phase].push(ms);
      current += ms;
      if (phase === 'commit') {
        perIteration.push(current);
        current = 0;
      }
    },
  },
);
for (;;) {
  const step = await gen.next();
  if (step.done) {
    if (streamEndAt > 0) post.push(performance.now() - streamEndAt);
    console.log(`ended: ${step.value.status} (${step.value.reason}) after ${step.value.iterations} iterations`);
    break;
  }
  const ev = step.value;
  if (ev.type === 'stream_end' && ev.is_subagent !== true) streamEndAt = performance.now();
  if (ev.type === 'iteration_started' && streamEndAt > 0) {
    post.push(performance.now() - streamEndAt);
    streamEndAt = 0;
    done++;
    if (done === 100) {
      rssWarm = rss();
      heapWarm = process.memoryUsage().heapUsed / 1024 / 1024;
    }
  }
}
const total = performance.now() - started;
const rssEnd = rss();
const heapEnd = process.memoryUsage().heapUsed / 1024 / 1024;

const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] ?? Number.NaN;
};
const ms = (x: number): string => `${x.toFixed(1)} ms`;
console.log(`backend: ${store.backend}; iterations: ${perIteration.length}; wall ${(total / 1000).toFixed(1)} s (${(total / perIteration.length).toFixed(1)} ms/iteration incl. the agent turn and its message writes)`);
for (const [phase, xs] of Object.entries(phases)) console.log(`  ${phase.padEnd(9)} median ${ms(pct(xs, 50))}, p95 ${ms(pct(xs, 95))}`);
console.log(`bookkeeping per iteration (pre-turn git snapshot + message, evidence incl. git, evaluation + status block, DB commit; no checks, no model): median ${ms(pct(perIteration, 50))}, p95 ${ms(pct(perIteration, 95))}; first 50 median ${ms(pct(perIteration.slice(0, 50), 50))}, last 50 median ${ms(pct(perIteration.slice(-50), 50))} (target ≤ 20 ms median)`);
console.log(`stream_end → next iteration (also the agent's post-turn writes): median ${ms(pct(post, 50))}`);
console.log(`RSS after 100 iterations ${rssWarm.toFixed(1)} MB, after ${perIteration.length}: ${rssEnd.toFixed(1)} MB, growth ${(rssEnd - rssWarm).toFixed(1)} MB (target ≤ 50 MB)${gc ? '' : ' (no --expose-gc: numbers are noisy)'}; JS heap ${heapWarm.toFixed(1)} → ${heapEnd.toFixed(1)} MB`);

await store.close();
fs.rmSync(cwd, { recursive: true, force: true });
fs.rmSync(path.dirname(dataDir), { recursive: true, force: true });
if (adminUrl !== undefined && dbName !== undefined) {
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
  await admin.unsafe(`drop database if exists "${dbName}" with (force)`);
  await admin.end();
}
