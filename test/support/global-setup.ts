/**
 * Once per `vitest run`: migrated template databases for the scenario tests, so that each test
 * gets a fresh database by copying instead of migrating (a fresh PGlite directory costs seconds;
 * a copy costs milliseconds).
 *  - PGlite: a data directory migrated with `navi db migrate`; tests `cpSync` it.
 *  - PostgreSQL (when DATABASE_URL is set): a database migrated the same way; tests create theirs
 *    with `CREATE DATABASE … TEMPLATE`.
 * Both are made by the built CLI; without `dist/` (a unit-test-only run) nothing is prepared and
 * the scenario tests say to build first.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import postgres from 'postgres';
import type { TestProject } from 'vitest/node';
import { CLI_PATH } from './cli.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Migrated PGlite data directory to copy. */
    pgliteTemplate: string;
    /** Migrated PostgreSQL database to use as `TEMPLATE` (with DATABASE_URL). */
    postgresTemplate: string;
    /** Name prefix of every database this run creates (dropped in the teardown). */
    postgresPrefix: string;
  }
}

/** Prefix of the PostgreSQL databases the scenario tests create. */
export const DB_PREFIX = 'navi_scn_';

/** `adminUrl` naming another database. */
export function databaseUrl(adminUrl: string, database: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

function migrate(env: Record<string, string>): void {
  const run = spawnSync(process.execPath, [CLI_PATH, 'db', 'migrate'], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: os.tmpdir(), CI: '1', ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
  if (run.status !== 0) {
    throw new Error(`navi db migrate failed (${String(run.status)}): ${run.stderr || run.stdout}`);
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  if (!fs.existsSync(CLI_PATH)) return async () => {};
  const tag = randomBytes(4).toString('hex');

  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'navi-scn-template-'));
  const dataDir = path.join(root, 'pgdata');
  migrate({ NAVI_DATA_DIR: dataDir });
  project.provide('pgliteTemplate', dataDir);

  const adminUrl = process.env.DATABASE_URL;
  let admin: postgres.Sql | undefined;
  const prefix = `${DB_PREFIX}${tag}`;
  if (adminUrl) {
    admin = postgres(adminUrl, { max: 1, onnotice: () => {} });
    const template = `${prefix}_tpl`;
    await admin.unsafe(`create database "${template}"`);
    migrate({ DATABASE_URL: databaseUrl(adminUrl, template) });
    project.provide('postgresTemplate', template);
    project.provide('postgresPrefix', prefix);
  }

  return async () => {
    fs.rmSync(root, { recursive: true, force: true });
    if (admin) {
      // Whatever a crashed test file left behind, then the template itself.
      const rows = await admin<{ datname: string }[]>`select datname from pg_database where datname like ${`${prefix}%`}`;
      for (const { datname } of rows) await admin.unsafe(`drop database if exists "${datname}" with (force)`);
      await admin.end({ timeout: 2 });
    }
  };
}
