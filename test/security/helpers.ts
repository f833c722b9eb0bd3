/**
 * What the security-fence scenarios share: a sentinel outside the working directory whose
 * content must never leak, and a dump of every row of every table of a test database, so "the
 * secret is nowhere in the database" is checked against all tables, including ones added later.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import postgres from 'postgres';
import type { TestDatabase } from '../support/databases.js';
import { tempDir } from '../scenario/helpers.js';

/** A file outside the working directory, with content that must never appear in navi's output or storage. */
export interface Sentinel {
  /** Directory holding it (outside the working directory). */
  dir: string;
  /** The file. */
  file: string;
  /** Its content: unique per test. */
  content: string;
  /** Size and mtime when created. */
  stat: fs.Stats;
  /** Names in `dir` when created. */
  entries: string[];
}

export function makeSentinel(): Sentinel {
  const dir = tempDir('outside');
  const content = `OUTSIDE-SENTINEL-${randomBytes(8).toString('hex')}`;
  const file = path.join(dir, 'secret.txt');
  fs.writeFileSync(file, `${content}\n`);
  return { dir, file, content, stat: fs.statSync(file), entries: fs.readdirSync(dir).sort() };
}

/** Problems with the sentinel: changed, or files appeared beside it. */
export function sentinelChanges(s: Sentinel): string[] {
  const problems: string[] = [];
  const now = fs.statSync(s.file);
  if (fs.readFileSync(s.file, 'utf8') !== `${s.content}\n`) problems.push('sentinel content changed');
  if (now.mtimeMs !== s.stat.mtimeMs || now.size !== s.stat.size) problems.push('sentinel size or mtime changed');
  const entries = fs.readdirSync(s.dir).sort();
  if (JSON.stringify(entries) !== JSON.stringify(s.entries)) problems.push(`files appeared outside the working directory: ${entries.join(', ')}`);
  return problems;
}

/** Every row of every table in the public schema, as JSON text (one line per row, prefixed with its table). */
export async function dumpDatabase(db: TestDatabase): Promise<string> {
  const listTables = "select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE' order by table_name";
  const rowsOf = (table: string): string => `select row_to_json(t)::text as row from "${table.replace(/"/g, '""')}" t`;
  const out: string[] = [];
  if (db.url !== undefined) {
    const sql = postgres(db.url, { max: 1, onnotice: () => {} });
    try {
      const tables = await sql.unsafe<Array<{ table_name: string }>>(listTables);
      for (const { table_name } of tables) {
        for (const r of await sql.unsafe<Array<{ row: string }>>(rowsOf(table_name))) out.push(`${table_name}: ${r.row}`);
      }
    } finally {
      await sql.end({ timeout: 2 });
    }
    return out.join('\n');
  }
  const { PGlite } = await import('@electric-sql/pglite');
  const pg = await PGlite.create(db.dataDir);
  try {
    const tables = await pg.query<{ table_name: string }>(listTables);
    for (const { table_name } of tables.rows) {
      for (const r of (await pg.query<{ row: string }>(rowsOf(table_name))).rows) out.push(`${table_name}: ${r.row}`);
    }
  } finally {
    await pg.close();
  }
  return out.join('\n');
}

/** Every file under `dir` (recursively), as path → content, for marker and artefact checks. */
export function readTree(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  if (!fs.existsSync(dir)) return files;
  for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const abs = path.join(entry.parentPath, entry.name);
    files.set(path.relative(dir, abs), fs.readFileSync(abs, 'utf8'));
  }
  return files;
}
