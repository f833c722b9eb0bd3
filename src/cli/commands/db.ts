/** `navi db migrate`: apply migrations explicitly (they also run on first use). */
import type { GlobalArgs } from '../global-args.js';
import { openConfiguredStore, setup } from '../setup.js';

export async function dbMigrate(argv: GlobalArgs & Record<string, unknown>): Promise<number> {
  const { config, env } = setup(argv);
  // Opening applies any pending migration under the store's lock.
  const store = await openConfiguredStore(config, env);
  const where = store.location;
  await store.close();
  if (argv.output === 'text') process.stdout.write(`database migrated: ${where}\n`);
  else process.stdout.write(`${JSON.stringify({ migrated: true, backend: store.backend, location: where })}\n`);
  return 0;
}
