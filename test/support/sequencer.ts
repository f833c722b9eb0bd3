/**
 * vitest's sequencer with a better order for a run without a cache (see file-order.ts): when
 * every file has a duration from a previous run, vitest's own order (failed first, then longest
 * first) is kept; otherwise the end-to-end files start first.
 */
import fs from 'node:fs';
import path from 'node:path';
import { BaseSequencer, type TestSequencerConstructor, type TestSpecification } from 'vitest/node';
import { coldOrder } from './file-order.js';

/** A sequencer class for `test.sequence.sequencer`, knowing which files are the logic tiers. */
export function sequencerFor(unit: readonly string[], notUnit: readonly string[]): TestSequencerConstructor {
  return class ColdStartSequencer extends BaseSequencer {
    override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
      const root = this.ctx.config.root;
      const rel = (spec: TestSpecification): string => path.relative(root, spec.moduleId).split(path.sep).join('/');
      const known = files.every((spec) => this.ctx.cache.getFileTestResults(`${spec.project.name}:${rel(spec)}`) !== undefined);
      if (known) return super.sort(files);
      const sized = files.map((spec) => ({ spec, rel: rel(spec), size: sizeOf(spec.moduleId) }));
      return coldOrder(sized, unit, notUnit).map((f) => f.spec);
    }
  };
}

function sizeOf(file: string): number {
  try {
    return fs.statSync(file).size;
  } catch {
    return 0;
  }
}
