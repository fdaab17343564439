import { RE2JS } from 're2js';
import { ConfigErrors, errorMessage } from './errors.ts';
import type { RegExpEngine } from 'ajv/dist/types/index.js';
import { ToolpoolError } from './error-codes.ts';

/**
 * Ajv's regular-expression engine for schemas the host does not trust: RE2,
 * which matches in linear time. A tool module's schema is compiled and run
 * on the host's main thread, so a backtracking pattern such as `^(a|a)+$`
 * with a hostile default or argument would otherwise freeze the host for
 * seconds per extra character. RE2 has no lookaround or backreferences; a
 * pattern that needs them is refused when the tool is registered.
 */
export const linearRegExp: RegExpEngine = Object.assign(
  (pattern: string, flags = ''): { test: (text: string) => boolean; toString(): string } => {
    let compiled: RE2JS;
    try {
      compiled = RE2JS.compile(pattern);
    } catch (error) {
      throw new ToolpoolError('TOOLPOOL_ERR_INVALID_TOOL', ConfigErrors.patternNotLinear(pattern, errorMessage(error)));
    }
    // Ajv keys its compiled patterns by the engine's toString(): without one of its own every
    // pattern would be "[object Object]", and each schema would test the first pattern compiled.
    return { test: (text: string) => compiled.test(text), toString: () => `/${pattern}/${flags}` };
  },
  { code: 'linearRegExp' },
);

/**
 * The same engine for a module tool whose Standard Schema validates the
 * arguments again in its worker: a pattern RE2 cannot run passes here and
 * is checked there, by the schema's own validation, where a slow match
 * costs only that worker (and its call's timeout).
 */
export const linearRegExpOrDeferred: RegExpEngine = Object.assign(
  (pattern: string, flags: string): { test: (text: string) => boolean; toString(): string } => {
    try {
      return linearRegExp(pattern, flags);
    } catch {
      return { test: () => true, toString: () => `/${pattern}/${flags} (deferred)` };
    }
  },
  { code: 'linearRegExpOrDeferred' },
);
