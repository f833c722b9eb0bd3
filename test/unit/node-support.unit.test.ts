/**
 * The Node.js versions the bin accepts (src/cli/node-support.cjs): package.json's `engines`
 * (`^20.19.0 || ^22.12.0 || >=23`), checked before anything else loads.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import type * as NodeSupport from '../../src/cli/node-support.cjs';

const { unsupportedNode } = createRequire(import.meta.url)('../../src/cli/node-support.cjs') as typeof NodeSupport;

describe('unsupportedNode', () => {
  it.each([
    ['20.19.0', true],
    ['20.20.2', true],
    ['22.12.0', true],
    ['22.23.3', true],
    ['23.0.0', true],
    ['24.21.0', true],
    ['26.1.0', true],
    ['20.18.3', false],
    ['21.7.3', false],
    ['22.11.0', false],
    ['18.20.4', false],
    ['16.0.0', false],
  ])('Node.js %s: runs = %s', (version, runs) => {
    const reason = unsupportedNode(version);
    if (runs) expect(reason).toBeNull();
    else expect(reason).toBe(`Node.js ${version} is too old for navi: it needs 20.19 or later, 22.12 or later, or 24 (the LTS to install)`);
  });

  it('lets a version it cannot read try (a custom build)', () => {
    expect(unsupportedNode('v24-nightly')).toBeNull();
  });

  it('says what package.json engines says', () => {
    const pkg = JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { engines: { node: string } };
    expect(pkg.engines.node).toBe('^20.19.0 || ^22.12.0 || >=23');
  });
});
