import { createInterface } from 'node:readline/promises';
import type { ElicitField, ElicitHandler, ElicitResult } from '../core/elicitation.ts';
import type { Input } from './approval-prompt.ts';
import { escapeControls } from '../isolation/worker/tool-output.ts';
import { oneLine, type Output, type Style } from './terminal.ts';

/**
 * `toolpool run` on a terminal: a tool's question (ctx.elicit, or an MCP
 * server's) as a simple form, a field per line. An empty line takes the
 * field's default (or leaves it out); `!decline` or `!cancel` on any line
 * answers so. One question at a time: questions of calls running at once
 * wait their turn. The answer is checked against the form by the host, as
 * any handler's is. When the input ends or the call stops, the question is
 * cancelled.
 */
export function terminalElicit(input: Input, out: Output, style: Style): ElicitHandler {
  let turn: Promise<unknown> = Promise.resolve();
  return (request, { toolName, signal }) => {
    const asked = turn.then(() => askForm(request, toolName, input, out, style, signal));
    turn = asked.catch(() => undefined);
    return asked;
  };
}

async function askForm(
  request: Parameters<ElicitHandler>[0],
  toolName: string,
  input: Input,
  out: Output,
  style: Style,
  signal: AbortSignal,
): Promise<ElicitResult> {
  if (signal.aborted) return { action: 'cancel' };
  const terminal = createInterface({ input, terminal: false });
  const onAbort = () => terminal.close();
  signal.addEventListener('abort', onAbort, { once: true });
  const lines = terminal[Symbol.asyncIterator]();
  const required = new Set(request.requestedSchema.required ?? []);
  const content: Record<string, string | number | boolean | string[]> = {};
  try {
    out.write(`${style.yellow('?')} ${toolName} asks: ${inert(oneLine(request.message, 2000))}\n`);
    out.write('  (an empty line takes the default; !decline or !cancel answers so)\n');
    for (const [name, field] of Object.entries(request.requestedSchema.properties)) {
      out.write(`  ${inert(field.title ?? name)}${inert(describe(field, required.has(name)))}: `);
      const line = await lines.next();
      if (line.done) return { action: 'cancel' };
      const text = line.value.trim();
      if (text === '!decline') return { action: 'decline' };
      if (text === '!cancel') return { action: 'cancel' };
      if (text === '') continue; // the default, filled in below
      content[name] = parse(field, text);
    }
  } finally {
    signal.removeEventListener('abort', onAbort);
    terminal.close();
  }
  for (const [name, field] of Object.entries(request.requestedSchema.properties))
    if (!(name in content) && field.default !== undefined) content[name] = field.default as string;
  return { action: 'accept', content };
}

/** The tool's words (message, titles, choices) as inert text: a question must not move the cursor or rewrite the form. */
const inert = escapeControls;

function choices(field: ElicitField): string[] | undefined {
  const options = (list: unknown) => (Array.isArray(list) ? list.map((option) => String(option.const)) : undefined);
  if (field.type === 'array') {
    const items = field.items as { enum?: string[]; anyOf?: unknown[] } | undefined;
    return items?.enum ?? options(items?.anyOf);
  }
  return (field.enum as string[] | undefined) ?? options(field.oneOf);
}

function describe(field: ElicitField, required: boolean): string {
  const values = choices(field);
  const kind = values ? `${field.type === 'array' ? 'some of' : 'one of'} ${values.join(', ')}` : field.type;
  const fallback = field.default !== undefined ? `, default ${JSON.stringify(field.default)}` : '';
  return ` (${kind}${required ? ', required' : ''}${fallback})`;
}

/** The line as the field's type; what does not fit stays a string, and the host's check of the answer says what is wrong. */
function parse(field: ElicitField, text: string): string | number | boolean | string[] {
  if (field.type === 'number' || field.type === 'integer') return Number.isFinite(Number(text)) ? Number(text) : text;
  if (field.type === 'boolean') return /^(y|yes|true)$/i.test(text);
  if (field.type === 'array')
    return text
      .split(',')
      .map((item) => item.trim())
      .filter(Boolean);
  return text;
}
