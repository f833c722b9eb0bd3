/**
 * Loops never nest (seed 004, SPEC §6): a loop run puts its id in this environment variable, so
 * everything it starts — the agent's shell commands, checks — inherits it, and a navi started
 * there refuses `navi loop` and never enters loop mode from `navi run`.
 */
export const LOOP_ENV = 'NAVI_LOOP_RUN_ID';
