// @ts-check
/**
 * Which Node.js versions navi runs on: the `engines` range in package.json
 * (`^20.19.0 || ^22.12.0 || >=23`, yargs 18's). Older ones fail in ways that name no cause (a
 * missing API deep in a dependency), so the bin (src/cli/main.cts) checks first and says so.
 * Plain CommonJS, built to dist/cli/ by scripts/build.js.
 */
'use strict';

/**
 * Null when navi runs on `version` (`process.versions.node`, e.g. `24.21.0`), else the one-line
 * reason, naming the versions it needs.
 * @param {string} version
 * @returns {string | null}
 */
function unsupportedNode(version) {
  const m = /^(\d+)\.(\d+)\./.exec(version);
  if (m === null) return null; // not a release number: let it try
  const major = Number(m[1]);
  const minor = Number(m[2]);
  const ok = major >= 23 || (major === 22 && minor >= 12) || (major === 20 && minor >= 19);
  return ok ? null : `Node.js ${version} is too old for navi: it needs 20.19 or later, 22.12 or later, or 24 (the LTS to install)`;
}

module.exports = { unsupportedNode };
