/**
 * The fake Ollama's life in a test, in one place: started where the test needs it and stopped
 * when the test (or the file) is done, even when an assertion fails first. Before this, each file
 * kept its own `let fake` slot and an `afterEach` to close it — a slot that held only the last
 * fake a test started, so an earlier one could be left listening.
 *
 * Stopping is the fake's own `close()`: open sockets (stalled streams included) are destroyed and
 * the responses in flight are waited for, so the records are final and nothing is left open for
 * the next test.
 */
import { afterAll, beforeAll, onTestFinished } from 'vitest';
import { startFakeOllama, unstartedFakeOllama, type FakeOllama, type FakeOllamaOptions, type FakeScript } from './fake-ollama.js';

/**
 * Starts a fake Ollama serving `script` for the current test and stops it when the test finishes
 * (after its `afterEach` hooks). Call it inside a test, not in a `describe` body: `onTestFinished`
 * attaches to the running test.
 */
export async function fakeOllama(script: FakeScript, opts: FakeOllamaOptions = {}): Promise<FakeOllama> {
  const fake = await startFakeOllama(script, opts);
  onTestFinished(() => fake.close());
  return fake;
}

/**
 * One fake Ollama for every test of the file (call it at the top level of the file): it listens
 * from `beforeAll` and stops in `afterAll`. For files whose runs are slow to set up (a pseudo-
 * terminal, an installed package) and whose tests each `setScript` or `holdChats` as they need.
 * Its `url` is empty until the file's `beforeAll` has run, so read it inside tests only.
 */
export function fakeOllamaForFile(script: FakeScript): FakeOllama {
  const fake = unstartedFakeOllama(script);
  beforeAll(() => fake.listen(0));
  afterAll(() => fake.close());
  return fake;
}
