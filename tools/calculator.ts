import { Type } from '@sinclair/typebox';
import { defineTool } from '../src/core/tool.ts';

/**
 * A cheap tool: evaluates an arithmetic expression with + - * / % ^,
 * parentheses and unary minus. A small parser of its own, never `eval`.
 */
export default defineTool({
  name: 'calculator',
  label: 'Calculator',
  description: 'Evaluate an arithmetic expression, e.g. "2 * (3 + 4) ^ 2". Supports + - * / % ^ and parentheses.',
  parameters: Type.Object({
    expression: Type.String({ minLength: 1, maxLength: 500, description: 'The expression to evaluate' }),
    precision: Type.Optional(Type.Integer({ minimum: 0, maximum: 15, description: 'Decimal places to round to' })),
  }),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  execute({ expression, precision }) {
    const value = evaluate(expression);
    const shown = precision === undefined ? value : Number(value.toFixed(precision));
    return { content: [{ type: 'text', text: `${expression} = ${shown}` }], details: { value: shown } };
  },
});

type Token = { kind: 'number'; value: number } | { kind: 'op'; value: string };

export function evaluate(expression: string): number {
  const tokens = tokenize(expression);
  let position = 0;
  const peek = () => tokens[position];
  const take = () => tokens[position++];
  const expectOp = (op: string) => {
    const token = take();
    if (token?.kind !== 'op' || token.value !== op) throw new Error(`expected "${op}" in "${expression}"`);
  };
  // Grammar: sum := product (('+'|'-') product)*; product := power (('*'|'/'|'%') power)*;
  // power := unary ('^' power)?; unary := '-' unary | atom; atom := number | '(' sum ')'.
  const sum = (): number => {
    let value = product();
    for (let t = peek(); t?.kind === 'op' && (t.value === '+' || t.value === '-'); t = peek()) {
      take();
      value = t.value === '+' ? value + product() : value - product();
    }
    return value;
  };
  const product = (): number => {
    let value = power();
    for (let t = peek(); t?.kind === 'op' && '*/%'.includes(t.value); t = peek()) {
      take();
      const right = power();
      if ((t.value === '/' || t.value === '%') && right === 0) throw new Error('division by zero');
      value = t.value === '*' ? value * right : t.value === '/' ? value / right : value % right;
    }
    return value;
  };
  const power = (): number => {
    const base = unary();
    const t = peek();
    if (t?.kind === 'op' && t.value === '^') {
      take();
      return base ** power();
    }
    return base;
  };
  const unary = (): number => {
    const t = peek();
    if (t?.kind === 'op' && t.value === '-') {
      take();
      return -unary();
    }
    return atom();
  };
  const atom = (): number => {
    const t = take();
    if (t?.kind === 'number') return t.value;
    if (t?.kind === 'op' && t.value === '(') {
      const value = sum();
      expectOp(')');
      return value;
    }
    throw new Error(`unexpected ${t ? `"${t.value}"` : 'end of expression'} in "${expression}"`);
  };
  const value = sum();
  if (position < tokens.length) throw new Error(`unexpected "${tokens[position]!.value}" in "${expression}"`);
  return value;
}

function tokenize(expression: string): Token[] {
  const tokens: Token[] = [];
  const pattern = /\s*(?:(\d+(?:\.\d+)?(?:e[+-]?\d+)?)|([-+*/%^()]))/giy;
  let match: RegExpExecArray | null;
  while (pattern.lastIndex < expression.length && (match = pattern.exec(expression))) {
    tokens.push(
      match[1] !== undefined ? { kind: 'number', value: Number(match[1]) } : { kind: 'op', value: match[2]! },
    );
  }
  if (expression.slice(pattern.lastIndex).trim() !== '') {
    throw new Error(`cannot read "${expression.slice(pattern.lastIndex).trim()}" in "${expression}"`);
  }
  return tokens;
}
