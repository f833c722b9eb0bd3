import { describe, expect, it } from 'vitest';
import { detectLoopTrigger, isJustOnce } from '../../src/loop/triggers.js';

describe('detectLoopTrigger', () => {
  it.each([
    ['Run until done: add isPrime with tests', 'run until done'],
    ['please KEEP GOING UNTIL COMPLETE', 'keep going until complete'],
    ['iterate until finished.', 'iterate until finished'],
    ['Use loop mode for this', 'loop mode'],
    ['autonomous mode, fix the build', 'autonomous mode'],
    ["Don't stop until done", "don't stop until done"],
    ['Don’t stop until done', "don't stop until done"],
    ['run   until\n done', 'run until done'],
    ['fix the failing test', null],
    ['explain loop modeling in the docs', null],
    ['rerun until done', null],
    ['', null],
  ])('%j → %j', (prompt, phrase) => {
    expect(detectLoopTrigger(prompt)).toBe(phrase);
  });
});

describe('isJustOnce', () => {
  it.each([
    ['Just do this once: bump the version', true],
    ['just do it once', true],
    ['JUST DO THIS ONCE', true],
    ['do this once', false],
    ['just do this onceover', false],
    ['run until done', false],
  ])('%j → %s', (prompt, expected) => {
    expect(isJustOnce(prompt)).toBe(expected);
  });
});
