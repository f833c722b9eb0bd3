/**
 * drizzle-kit settings: `npm run db:generate` writes SQL migrations for src/store/schema.ts into
 * drizzle/, which ships with the package and is applied when a database is opened.
 */
import { defineConfig } from 'drizzle-kit';

export default defineConfig({
  dialect: 'postgresql',
  schema: './src/store/schema.ts',
  out: './drizzle',
});
