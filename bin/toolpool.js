#!/usr/bin/env node
// The `toolpool` command. In a clone (the TypeScript sources sit next to this
// file) it runs them through tsx, a devDependency that `npm ci` installs
// there; an installed package has no sources and runs the compiled
// JavaScript from dist/, so nothing at run time needs tsx.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const FORCED_EXIT = 'toolpool: something still held the process 2 s after the command ended; exiting anyway';
const source = new URL('../src/cli/main.ts', import.meta.url);
let entry;
if (existsSync(fileURLToPath(source))) {
  const { register } = await import('tsx/esm/api');
  register();
  entry = source.href;
} else {
  entry = new URL('../dist/src/cli/main.js', import.meta.url).href;
}

const { main } = await import(entry);
const code = await main(process.argv.slice(2));
process.exitCode = code;
// Everything is closed by now; should a stray handle remain, do not hang, and say so (it is a bug of toolpool's).
setTimeout(() => {
  process.stderr.write(`${FORCED_EXIT}\n`);
  process.exit(code);
}, 2000).unref();
