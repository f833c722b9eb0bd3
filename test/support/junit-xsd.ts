/**
 * Validates JUnit XML against the Jenkins xUnit plugin's junit-10.xsd (the schema Jenkins and
 * most reporters accept; test/fixtures/schemas/SOURCES.md says where it comes from) with
 * libxml2 compiled to WebAssembly: it installs with `npm ci`, no system xmllint needed.
 */
import fs from 'node:fs';
import path from 'node:path';
import { validateXML } from 'xmllint-wasm';
import { REPO_ROOT } from './cli.js';

const XSD = fs.readFileSync(path.join(REPO_ROOT, 'test', 'fixtures', 'schemas', 'junit-10.xsd'), 'utf8');

/** `valid` and libxml2's messages. */
export async function validateJunit(xml: string): Promise<{ valid: boolean; errors: string[] }> {
  const result = await validateXML({ xml: [{ fileName: 'report.xml', contents: xml }], schema: [{ fileName: 'junit-10.xsd', contents: XSD }] });
  return { valid: result.valid, errors: result.errors.map((e) => e.rawMessage) };
}
