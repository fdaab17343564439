import { RE2JS } from 're2js';
import { ConfigErrors, errorMessage } from './errors.ts';
import type { RegExpEngine } from 'ajv/dist/types/index.js';

/**
 * Ajv's regular-expression engine for schemas the host does not trust: RE2,
 * which matches in linear time. A tool module's schema is compiled and run
 * on the host's main thread, so a backtracking pattern such as `^(a|a)+$`
 * with a hostile default or argument would otherwise freeze the host for
 * seconds per extra character. RE2 has no lookaround or backreferences; a
 * pattern that needs them is refused when the tool is registered.
 */
export const linearRegExp: RegExpEngine = Object.assign(
  (pattern: string): { test: (text: string) => boolean } => {
    let compiled: RE2JS;
    try {
      compiled = RE2JS.compile(pattern);
    } catch (error) {
      throw new Error(ConfigErrors.patternNotLinear(pattern, errorMessage(error)));
    }
    return { test: (text: string) => compiled.test(text) };
  },
  { code: 'linearRegExp' },
);
