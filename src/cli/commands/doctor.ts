/**
 * `navi doctor`: every check a new user needs, each reported with what to do next.
 * Exit 0 only when all pass.
 */
import { describeError } from '../../errors.js';
import { createOllamaClient } from '../../llm/ollama-client.js';
import { unknownProfileTools } from '../../agent/agent.js';
import type { GlobalArgs } from '../global-args.js';
import { openConfiguredStore, profilesFor, setup, toolsFor, type CliSetup } from '../setup.js';

interface Check {
  name: string;
  ok: boolean;
  detail: string;
  warning?: string;
}

async function check(name: string, fn: () => Promise<string | { detail: string; warning?: string }>): Promise<Check> {
  try {
    const r = await fn();
    return typeof r === 'string' ? { name, ok: true, detail: r } : { name, ok: true, ...r };
  } catch (err) {
    return { name, ok: false, detail: describeError(err) };
  }
}

export async function doctorCommand(argv: GlobalArgs & Record<string, unknown>): Promise<number> {
  const checks: Check[] = [];
  let ctx: CliSetup | null = null;
  checks.push(
    await check('config', () => {
      ctx = setup(argv);
      return Promise.resolve(`valid (model ${ctx.config.llm.model}, num_ctx ${ctx.config.llm.num_ctx})`);
    }),
  );
  const s = ctx as CliSetup | null;
  if (s !== null) {
    const { config, env, cwd } = s;
    checks.push(
      await check('profiles', async () => {
        const set = await profilesFor(cwd);
        const { registry, userTools } = await toolsFor(cwd, config);
        const problems = [...set.profiles.values()].flatMap((p) => unknownProfileTools(p, (n) => registry.has(n)).map((t) => `${p.id}: unknown tool ${t}`));
        if (!set.profiles.has(config.default_profile)) problems.push(`default_profile '${config.default_profile}' does not exist`);
        if (problems.length > 0) throw new Error(problems.join('; '));
        const user = userTools.length > 0 ? `, user tools: ${userTools.join(', ')}` : '';
        return `${set.profiles.size} loaded (${[...set.profiles.keys()].join(', ')}); ${registry.names().length - userTools.length} built-in tools${user}`;
      }),
    );
    checks.push(
      await check('database', async () => {
        const store = await openConfiguredStore(config, env);
        const where = `${store.backend} at ${store.location}`;
        await store.close();
        return `${where}, migrated`;
      }),
    );
    const llm = createOllamaClient({ host: config.llm.host, firstChunkTimeoutS: 10, chunkTimeoutS: 10 });
    const ollama = await check('ollama', async () => `version ${await llm.version(AbortSignal.timeout(5000))} at ${config.llm.host}`);
    checks.push(ollama);
    if (ollama.ok) {
      checks.push(
        await check('model', async () => {
          const info = await llm.showModel(config.llm.model, AbortSignal.timeout(10_000));
          const len = info.contextLength;
          const detail = `${config.llm.model} is pulled${len !== undefined ? `, context length ${len}` : ''}`;
          if (len !== undefined && config.llm.num_ctx > len) {
            return { detail, warning: `llm.num_ctx ${config.llm.num_ctx} exceeds the model's context length ${len}; Ollama will clamp it` };
          }
          return detail;
        }),
      );
    } else {
      checks.push({ name: 'model', ok: false, detail: 'skipped: Ollama is not reachable' });
    }
  }
  const ok = checks.every((c) => c.ok);
  if (argv.output !== 'text') {
    process.stdout.write(`${JSON.stringify({ ok, checks })}\n`);
  } else {
    for (const c of checks) {
      process.stdout.write(`${c.ok ? '✓' : '✗'} ${c.name.padEnd(9)} ${c.detail}\n`);
      if (c.warning) process.stdout.write(`  warning: ${c.warning}\n`);
    }
    process.stdout.write(ok ? '\nall checks passed\n' : '\nsome checks failed (see above)\n');
  }
  return ok ? 0 : 1;
}
