/** Writes docs/events.schema.json from the zod event schemas (src/agent/events.ts). */
import { writeFileSync } from 'node:fs';
import { eventJsonSchema } from '../src/agent/events.js';

const out = new URL('../docs/events.schema.json', import.meta.url);
writeFileSync(out, `${JSON.stringify(eventJsonSchema(), null, 2)}\n`);
process.stdout.write(`wrote ${out.pathname}\n`);
