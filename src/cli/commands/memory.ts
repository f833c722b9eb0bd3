/** `navi memory list|forget ID`: the long-term memory facts of the current user. */
import type { CliHost } from '../host.js';
import { NotFoundError } from '../../errors.js';
import type { GlobalArgs } from '../global-args.js';
import { userName } from '../runtime.js';
import { refreshMemory } from '../../agent/memory.js';
import { memoryCacheFor } from '../memory-cache.js';
import { printJson, withStore } from '../setup.js';
import { terminalSafe } from '../terminal-text.js';

type Args = GlobalArgs & Record<string, unknown>;

export async function memoryList(argv: Args, host: CliHost): Promise<number> {
  return withStore(argv, host, async (store, json, { host: { env } }) => {
    const user = userName(env);
    const facts = await store.memories.list(user);
    if (json) {
      printJson(host.stdout, {
        user,
        memories: facts.map((m) => ({ id: m.id, fact: m.fact, source: m.source, session_id: m.sessionId, created_at: m.createdAt.toISOString() })),
      });
    } else if (facts.length === 0) {
      host.stdout.write(`no memories for ${user} yet (the remember tool adds them)\n`);
    } else {
      for (const m of facts) host.stdout.write(`${m.id}  ${m.createdAt.toISOString().slice(0, 10)}  ${m.source.padEnd(10)} ${terminalSafe(m.fact)}\n`);
    }
    return 0;
  });
}

export async function memoryForget(argv: Args, host: CliHost): Promise<number> {
  const id = String(argv.id);
  return withStore(argv, host, async (store, json, { config, host: { env } }) => {
    const user = userName(env);
    if (!(await store.memories.remove(user, id))) throw new NotFoundError('memory_not_found', `no memory '${id}' for ${user}; see: navi memory list`);
    await refreshMemory(Promise.resolve(store), user, memoryCacheFor(config, env));
    if (json) printJson(host.stdout, { forgotten: id });
    else host.stdout.write(`forgot ${id}\n`);
    return 0;
  });
}
