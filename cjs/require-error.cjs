// What `require('toolpool')` loads: toolpool is an ES module package, and this
// file only says so. The text is PackageErrors.requireNotSupported in
// src/core/errors.ts (test/package.test.ts keeps the two equal); it is written out
// here because CommonJS cannot load that ES module on Node 20.
// It carries toolpool's code and brand by hand (ERROR_CODES in src/core/error-codes.ts),
// so isToolpoolError(e) and e.code === 'TOOLPOOL_ERR_REQUIRE_ESM' hold for it too.
'use strict';
const error = new Error(
  'toolpool is an ES module package and cannot be loaded with require(). ' +
    "Use import instead: `import { createExecutor, defineTool } from 'toolpool'` in an ES module " +
    '(a .mjs file, or "type": "module" in your package.json), or `const toolpool = await import(\'toolpool\')` from CommonJS.',
);
Object.defineProperty(error, 'code', {
  value: 'TOOLPOOL_ERR_REQUIRE_ESM',
  enumerable: true,
  writable: false,
  configurable: true,
});
Object.defineProperty(error, Symbol.for('toolpool.error'), { value: true });
throw error;
