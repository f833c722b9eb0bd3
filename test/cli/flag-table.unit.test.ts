/**
 * Issue 18 item 8: one flag table (src/cli/flags.ts) drives yargs, the fast path, the
 * shorthand and completion: the fast path and the shorthand read the same table. That every
 * option a command's `--help` lists is in the table for that command, and every table entry is
 * in that command's `--help`, is checked in process: test/unit/cli-help.unit.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { parseRunFast } from '../../src/cli/fast-run.js';
import { FLAGS, flagsOf, globalFlags, spellings } from '../../src/cli/flags.js';
import { firstPositional } from '../../src/cli/shorthand.js';

describe('the flag table', () => {
  it('the shorthand skips the value of every value flag; the fast path knows every run flag', () => {
    for (const flag of FLAGS) {
      for (const spelling of spellings(flag)) {
        const args = flag.kind === 'boolean' ? [spelling, 'loop'] : [spelling, 'VALUE', 'loop'];
        expect(firstPositional(args), spelling).toBe(args.length - 1);
      }
    }
    for (const flag of [...globalFlags(), ...flagsOf('run')]) {
      const value = flag.kind === 'boolean' ? [] : [flag.kind === 'integer' ? '3' : flag.kind === 'choice' ? (flag.choices?.[0] ?? '') : 'v'];
      for (const spelling of spellings(flag)) {
        const parsed = parseRunFast(['run', spelling, ...value, 'go']);
        expect(parsed, spelling).not.toBeNull();
        expect(parsed?.prompt, spelling).toEqual(['go']);
      }
    }
  });
});
