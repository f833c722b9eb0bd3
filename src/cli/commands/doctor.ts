/**
 * `navi doctor`: every check a new user needs, each reported with what to do next.
 * Exit 0 only when all pass.
 */
import type { CliHost } from '../host.js';
import { DEFAULT_MODEL } from '../../config/defaults.js';
import type { LlmConfig } from '../../config/schema.js';
import { describeError } from '../../errors.js';
import { createOllamaClient } from '../../llm/ollama-client.js';
import { serverVersionWarnings } from '../../llm/server-versions.js';
import type { ModelDetails, RunningModel } from '../../llm/types.js';
import { unknownProfileTools } from '../../agent/agent.js';
import { unknownMcpServers } from '../../mcp/select.js';
import { describePolicy, type SandboxPolicy } from '../../sandbox/modes.js';
import type { GlobalArgs } from '../global-args.js';
import { configuredSandbox, openConfiguredStore, profilesFor, setup, toolsFor, type CliSetup } from '../setup.js';

interface Check {
  name: string;
  ok: boolean;
  detail: string;
  /** Things that work, but not as configured (navi carries on). */
  warnings?: string[];
  /** `ollama`: the server's version string. */
  version?: string;
  /** `model`: `/api/show` capabilities, when the server reports them. */
  capabilities?: string[];
}

type CheckResult = Omit<Check, 'name' | 'ok'>;

async function check(name: string, fn: () => Promise<string | CheckResult>): Promise<Check> {
  try {
    const r = await fn();
    return typeof r === 'string' ? { name, ok: true, detail: r } : { name, ok: true, ...r };
  } catch (err) {
    if (err instanceof CheckFailed) return { name, ...err.result, ok: false };
    return { name, ok: false, detail: describeError(err) };
  }
}

/** A check that ran and failed, with what it found (a thrown error would lose the fields). */
class CheckFailed extends Error {
  constructor(readonly result: CheckResult) {
    super(result.detail);
  }
}

/**
 * First Ollama release whose API takes `think`: commit 5f57b0ef4 "add thinking support to the
 * api and cli" (api/types.go `ChatRequest.Think`) is first contained in tag v0.9.0-rc0. An
 * older server ignores the unknown field, so the model never thinks and nothing says why.
 */
export const THINK_MIN_VERSION: readonly [number, number, number] = [0, 9, 0];

/**
 * `major.minor.patch` of an `/api/version` answer, or undefined when it says nothing usable:
 * not a version, or "0.0.0", which is what a source build reports (version/version.go).
 * Pre-release suffixes are ignored: v0.9.0-rc0 already has `think`.
 */
export function parseOllamaVersion(version: string): [number, number, number] | undefined {
  const m = /^v?(\d+)\.(\d+)\.(\d+)(?:[-+.][0-9A-Za-z.+-]*)?$/.exec(version.trim());
  if (m === null) return undefined;
  const v: [number, number, number] = [Number(m[1]), Number(m[2]), Number(m[3])];
  return v.every((n) => n === 0) ? undefined : v;
}

/** a < b, component by component. */
function olderThan(a: readonly number[], b: readonly number[]): boolean {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d < 0;
  }
  return false;
}

/** The `ollama` check: reachable, and new enough for what the config asks of it. */
function ollamaVersionCheck(version: string, llm: LlmConfig): CheckResult {
  const detail = `version ${version} at ${llm.host}`;
  const min = THINK_MIN_VERSION.join('.');
  const parsed = parseOllamaVersion(version);
  if (parsed === undefined) {
    return { detail, version, warnings: [`cannot tell from version "${version}" (a development build?) whether this Ollama supports think (needs ${min} or newer)`] };
  }
  if (olderThan(parsed, THINK_MIN_VERSION)) {
    const advice = `Ollama ${version} is older than ${min}, the first version with think; upgrade Ollama (https://ollama.com/download)`;
    // Without think in the config an old server still runs navi (it ignores the field).
    if (llm.think !== false) throw new CheckFailed({ detail: `${detail}: ${advice}, or set llm.think to false`, version });
    return { detail, version, warnings: [advice, ...serverVersionWarnings(parsed, version, llm.think)] };
  }
  // Releases before a fix navi relies on (llm/server-versions.ts): the run works, not as well.
  const warnings = serverVersionWarnings(parsed, version, llm.think);
  return { detail, version, ...(warnings.length > 0 && { warnings }) };
}

/**
 * The `model` check: pulled, context length, capabilities (server/routes.go answers 400 to
 * tools for a model without `tools`, and to think for one without `thinking`).
 */
function modelCheck(info: ModelDetails, llm: LlmConfig, numCtxExplicit: boolean): CheckResult {
  const model = llm.model;
  const len = info.contextLength;
  const caps = info.capabilities;
  const detail =
    `${model} is pulled` +
    (len !== undefined ? `, context length ${len}` : '') +
    (caps !== undefined ? `, capabilities: ${caps.length > 0 ? caps.join(', ') : 'none'}` : '');
  const warnings: string[] = [];
  if (caps === undefined) {
    warnings.push('Ollama did not report the model\'s capabilities (older than 0.6.4?); cannot check tools and thinking');
  } else {
    if (!caps.includes('tools')) {
      throw new CheckFailed({
        detail: `${detail}: ${model} does not support tools, which navi needs; pull a tool-capable model such as ${DEFAULT_MODEL} (ollama pull ${DEFAULT_MODEL}) and set llm.model (or --model)`,
        capabilities: caps,
      });
    }
    if (llm.think && !caps.includes('thinking')) {
      warnings.push(`${model} does not support thinking; navi will run it without thinking (set llm.think to false to silence this)`);
    }
  }
  // Only a num_ctx the user set can be wrong: the default is fitted to the model (effectiveNumCtx).
  const numCtx = doctorNumCtx(llm.num_ctx, numCtxExplicit, len);
  if (numCtx.warning !== undefined) warnings.push(numCtx.warning);
  return { detail: `${detail}${numCtx.note}`, ...(caps !== undefined && { capabilities: caps }), ...(warnings.length > 0 && { warnings }) };
}

/**
 * What doctor says about num_ctx, as runs use it (`effectiveNumCtx`, src/agent/turn-state.ts):
 * always lowered to the model's context length, as Ollama clamps it there; a value the user set
 * above it gets a warning (the setting does not do what it says), the default none. Pure;
 * table-tested.
 */
export function doctorNumCtx(configured: number, explicit: boolean, contextLength: number | undefined): { note: string; warning?: string } {
  if (contextLength === undefined || contextLength <= 0 || configured <= contextLength) return { note: '' };
  if (explicit) {
    return {
      note: `; runs use num_ctx ${contextLength}`,
      warning: `llm.num_ctx ${configured} (set in your configuration) exceeds the model's context length ${contextLength}; Ollama clamps it, so runs use ${contextLength} — lower llm.num_ctx to match, or use a model with a larger context`,
    };
  }
  return { note: `; runs use num_ctx ${contextLength} (the default ${configured} fitted to the model)` };
}

/** Share of the model in GPU memory below which doctor warns: the rest runs on the CPU, many times slower. */
const FULL_GPU = 1;

function gigabytes(bytes: number): string {
  return `${(bytes / 1e9).toFixed(1)} GB`;
}

/**
 * The `runner` check: what the server really loaded for the model (`/api/ps`, server/routes.go
 * 2271-2303) — the context after the server clamped `num_ctx` to the model's (llm/server.go
 * 111-117), how much of the model spilled to the CPU (`size_vram` < `size`), and until when it
 * stays loaded. A model not loaded yet is not a failure: Ollama loads it on the first request.
 */
export function runnerCheck(running: readonly RunningModel[], llm: LlmConfig, now: number): CheckResult {
  const model = llm.model;
  const entry = running.find((m) => m.name === model || m.name === `${model}:latest` || `${m.name}:latest` === model);
  if (entry === undefined) return { detail: `${model} is not loaded (Ollama loads it on the first request; run navi once, then doctor again to see what it loaded)` };
  const parts = [`${model} is loaded`];
  const warnings: string[] = [];
  // The clamp itself is the model check's warning (num_ctx above the model's context length).
  if (entry.contextLength !== undefined) parts.push(`context ${entry.contextLength} tokens`);
  if (entry.size !== undefined && entry.size > 0 && entry.sizeVram !== undefined) {
    const share = Math.min(1, entry.sizeVram / entry.size);
    parts.push(share >= FULL_GPU ? '100% GPU' : `${Math.round(share * 100)}% GPU / ${100 - Math.round(share * 100)}% CPU`);
    if (share < FULL_GPU) {
      warnings.push(
        `${gigabytes(entry.size - entry.sizeVram)} of the model's ${gigabytes(entry.size)} spilled to system memory and runs on the CPU, ` +
          'which is many times slower; lower llm.num_ctx, or use a smaller model or quantization',
      );
    }
  }
  if (entry.expiresAt !== undefined) {
    const at = Date.parse(entry.expiresAt);
    if (Number.isFinite(at)) parts.push(at - now > 365 * 86_400_000 ? 'kept loaded' : `unloads in ${Math.max(0, Math.round((at - now) / 60_000))} min`);
  }
  return { detail: parts.join(', '), ...(warnings.length > 0 && { warnings }) };
}

/**
 * The sandbox line: the configured mode and whether it can be set up here. Off passes, and says
 * whether turning it on would work; a configured sandbox that cannot start fails (runs would be exit 2).
 */
async function sandboxCheck(policy: SandboxPolicy, env: Record<string, string | undefined>): Promise<string | CheckResult> {
  const { checkLauncher } = await import('../../sandbox/prepare.js');
  const found = await checkLauncher(env);
  if (policy.mode === 'off') {
    const would = 'problem' in found ? `--sandbox would fail: ${found.problem}` : `available (${found.launcher})`;
    return `off (config sandbox or --sandbox workspace-write to turn it on); ${would}`;
  }
  if ('problem' in found) throw new CheckFailed({ detail: `${describePolicy(policy)}: runs will fail (exit 2): ${found.problem}` });
  return `${describePolicy(policy)} (${found.launcher})`;
}

export async function doctorCommand(argv: GlobalArgs & Record<string, unknown>, host: CliHost): Promise<number> {
  const checks: Check[] = [];
  let ctx: CliSetup | null = null;
  checks.push(
    await check('config', () => {
      ctx = setup(argv, host);
      return Promise.resolve(`valid (model ${ctx.config.llm.model}, num_ctx ${ctx.config.llm.num_ctx})`);
    }),
  );
  const s = ctx as CliSetup | null;
  if (s !== null) {
    const { config, cwd, explicit, host: { env } } = s;
    checks.push(
      await check('profiles', async () => {
        const set = await profilesFor(cwd, env);
        // Tool modules load where a run would load them: inside the configured sandbox.
        const { registry, userTools } = await toolsFor(cwd, env, config, false, [], await configuredSandbox(config, cwd, env));
        const problems = [...set.profiles.values()].flatMap((p) => unknownProfileTools(p, (n) => registry.has(n)).map((t) => `${p.id}: unknown tool ${t}`));
        const servers = new Set(Object.keys(config.mcp.servers));
        for (const p of set.profiles.values()) for (const m of unknownMcpServers(p.settings.tools.mcp, servers)) problems.push(`${p.id}: tools.mcp: unknown MCP server ${m}`);
        if (!set.profiles.has(config.default_profile)) problems.push(`default_profile '${config.default_profile}' does not exist`);
        if (problems.length > 0) throw new Error(problems.join('; '));
        const user = userTools.length > 0 ? `, user tools: ${userTools.join(', ')}` : '';
        return `${set.profiles.size} loaded (${[...set.profiles.keys()].join(', ')}); ${registry.names().length - userTools.length} built-in tools${user}`;
      }),
    );
    checks.push(
      await check('database', async () => {
        const store = await openConfiguredStore(config, s.host);
        const where = `${store.backend} at ${store.location}`;
        await store.close();
        return `${where}, migrated`;
      }),
    );
    checks.push(
      await check('mcp', async () => {
        const { mcpDoctorCheck } = await import('./mcp.js');
        const r = await mcpDoctorCheck(config, cwd, env);
        if (!r.ok) throw new CheckFailed({ detail: r.detail, ...(r.warnings.length > 0 ? { warnings: r.warnings } : {}) });
        return { detail: r.detail, ...(r.warnings.length > 0 ? { warnings: r.warnings } : {}) };
      }),
    );
    checks.push(await check('sandbox', () => sandboxCheck(config.sandbox, env)));
    const llm = createOllamaClient({ host: config.llm.host, firstChunkTimeoutS: 10, chunkTimeoutS: 10 });
    const ollama = await check('ollama', async () => ollamaVersionCheck(await llm.version(AbortSignal.timeout(5000)), config.llm));
    checks.push(ollama);
    if (ollama.version !== undefined) {
      checks.push(await check('model', async () => modelCheck(await llm.showModel(config.llm.model, AbortSignal.timeout(10_000)), config.llm, explicit.has('llm.num_ctx'))));
      checks.push(
        await check('runner', async () => {
          // Informative only: a server or proxy that does not answer /api/ps fails nothing.
          const running = await (llm.runningModels?.(AbortSignal.timeout(10_000)) ?? Promise.resolve([])).catch((err: unknown) => err);
          if (!Array.isArray(running)) return { detail: 'unknown', warnings: [`cannot read what Ollama has loaded (/api/ps): ${describeError(running)}`] };
          return runnerCheck(running as RunningModel[], config.llm, Date.now());
        }),
      );
    } else {
      checks.push({ name: 'model', ok: false, detail: 'skipped: Ollama is not reachable' });
    }
  }
  const ok = checks.every((c) => c.ok);
  if (argv.output !== 'text') {
    host.stdout.write(`${JSON.stringify({ ok, checks })}\n`);
  } else {
    for (const c of checks) {
      host.stdout.write(`${c.ok ? '✓' : '✗'} ${c.name.padEnd(9)} ${c.detail}\n`);
      for (const w of c.warnings ?? []) host.stdout.write(`  warning: ${w}\n`);
    }
    host.stdout.write(ok ? '\nall checks passed\n' : '\nsome checks failed (see above)\n');
  }
  return ok ? 0 : 1;
}
