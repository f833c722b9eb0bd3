/**
 * `navi db migrate`: apply migrations explicitly (they also run on first use). On PostgreSQL the
 * job queue's schema (pg-boss's `pgboss` and navi's schedule table, src/queue/) is migrated with
 * navi's own, so a fleet's database is ready before the first `navi queue add` or `navi worker`.
 */
import type { CliHost } from '../host.js';
import { StorageError, describeError } from '../../errors.js';
import type { GlobalArgs } from '../global-args.js';
import { openConfiguredStore, setup } from '../setup.js';

async function migrateQueue(url: string, env: Record<string, string | undefined>): Promise<void> {
  const { openEngine, queueTiming } = await import('../../queue/engine.js');
  try {
    const boss = await openEngine({ url, timing: queueTiming(env), supervise: false });
    await boss.stop({ graceful: false, wait: true, close: true });
  } catch (err) {
    throw new StorageError('queue_migration_failed', `the job queue's schema could not be migrated: ${describeError(err)}`, { cause: err });
  }
}

export async function dbMigrate(argv: GlobalArgs & Record<string, unknown>, host: CliHost): Promise<number> {
  const { config, host: { env } } = setup(argv, host);
  // Opening applies any pending migration under the store's lock.
  const store = await openConfiguredStore(config, host);
  const where = store.location;
  await store.close();
  const queue = store.backend === 'postgres' && config.db.url !== undefined;
  if (queue) await migrateQueue(config.db.url as string, env);
  if (argv.output === 'text') host.stdout.write(`database migrated: ${where}${queue ? ' (and the job queue)' : ''}\n`);
  else host.stdout.write(`${JSON.stringify({ migrated: true, backend: store.backend, location: where, queue })}\n`);
  return 0;
}
