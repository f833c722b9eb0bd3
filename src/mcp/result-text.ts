/**
 * An MCP `tools/call` result as the text the model reads. Text content is the result; an image,
 * audio clip or binary resource is named with its type and size (a local model cannot read
 * base64, and a megabyte of it would crowd out the conversation); a text resource is its text;
 * `structuredContent` without text beside it is its JSON. The registry caps and redacts the
 * result like shell output.
 */
import { isRecord } from '../util/guards.js';

function str(value: unknown, fallback: string): string {
  return typeof value === 'string' ? value : fallback;
}

/** Bytes a base64 string decodes to (close enough to name a size). */
function base64Bytes(data: unknown): number {
  if (typeof data !== 'string') return 0;
  const padding = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  return Math.max(0, Math.floor((data.length * 3) / 4) - padding);
}

function describeBlock(block: unknown): string {
  if (!isRecord(block)) return '[unreadable content block]';
  switch (block.type) {
    case 'text':
      return typeof block.text === 'string' ? block.text : '';
    case 'image':
    case 'audio':
      return `[${block.type}: ${str(block.mimeType, 'unknown type')}, ${base64Bytes(block.data)} bytes, not shown]`;
    case 'resource': {
      const resource = isRecord(block.resource) ? block.resource : {};
      const uri = typeof resource.uri === 'string' ? resource.uri : '(no uri)';
      if (typeof resource.text === 'string') return `[resource ${uri}]\n${resource.text}`;
      return `[resource ${uri}: ${str(resource.mimeType, 'binary')}, ${base64Bytes(resource.blob)} bytes, not shown]`;
    }
    case 'resource_link': {
      const name = typeof block.name === 'string' ? ` ${block.name}` : '';
      return `[resource link${name}: ${str(block.uri, '(no uri)')}]`;
    }
    default:
      return `[${typeof block.type === 'string' ? block.type : 'unknown'} content, not shown]`;
  }
}

/** What the model reads for one result; `isError` decides whether it is a failed tool result. */
export function resultText(result: Readonly<Record<string, unknown>>): { ok: boolean; output: string } {
  const blocks = Array.isArray(result.content) ? result.content : [];
  const parts = blocks.map(describeBlock).filter((part) => part !== '');
  if (!blocks.some((b) => isRecord(b) && b.type === 'text') && result.structuredContent !== undefined) {
    parts.push(JSON.stringify(result.structuredContent));
  }
  const ok = result.isError !== true;
  const output = parts.join('\n');
  return { ok, output: output === '' ? (ok ? '(the tool returned no content)' : '(the tool failed without a message)') : output };
}
