/**
 * Prints where a .cpuprofile spent its time: self time per function
 * (and per file), largest first; with a call count, also µs per call.
 * Usage: summarize.ts <file> [top=30] [calls]
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount: number;
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
}

const [file, topArg, callsArg] = process.argv.slice(2);
const top = Number(topArg ?? 30);
const calls = callsArg ? Number(callsArg) : undefined;
const profile = JSON.parse(readFileSync(file!, 'utf8')) as Profile;
const total = profile.nodes.reduce((sum, node) => sum + node.hitCount, 0);
const microsPerSample = (profile.endTime - profile.startTime) / total;
const byFunction = new Map<string, number>();
const byFile = new Map<string, number>();
for (const { callFrame, hitCount } of profile.nodes) {
  const url = callFrame.url
    .replace(/^file:\/\//, '')
    .replace(/.*node_modules\//, 'nm/')
    .replace(/.*\/work\/main\//, '');
  const key = `${callFrame.functionName || '(anonymous)'}  ${url}:${callFrame.lineNumber + 1}`;
  byFunction.set(key, (byFunction.get(key) ?? 0) + hitCount);
  const fileKey = url || callFrame.functionName;
  byFile.set(fileKey, (byFile.get(fileKey) ?? 0) + hitCount);
}
const show = (title: string, map: Map<string, number>) => {
  console.log(`\n${title}`);
  for (const [key, hits] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    const perCall = calls ? `${((hits * microsPerSample) / calls).toFixed(2).padStart(7)} µs/call  ` : '';
    console.log(`${((hits / total) * 100).toFixed(1).padStart(5)}%  ${perCall}${key}`);
  }
};
console.log(`${file}: ${total} samples over ${((profile.endTime - profile.startTime) / 1e6).toFixed(1)} s`);
/** Coarse groups: whose code the time is in. */
const group = (url: string, name: string): string => {
  if (url.includes('/workers/') || url.includes('/src/') || url.includes('toolpool-modules')) return 'toolpool';
  if (url.includes('nm/piscina')) return 'piscina';
  if (url.includes('nm/')) return 'other packages';
  if (url.startsWith('node:internal/modules') || url.includes('esm/')) return 'module loading (startup)';
  if (url.startsWith('node:')) return 'node internals (JS)';
  if (name === '(garbage collector)' || name === '(idle)' || name === '(program)') return name;
  if (!url) return `native: ${name}`;
  return 'other';
};
const byGroup = new Map<string, number>();
for (const { callFrame, hitCount } of profile.nodes) {
  const url = callFrame.url.replace(/^file:\/\//, '').replace(/.*node_modules\//, 'nm/');
  const key = group(url, callFrame.functionName);
  byGroup.set(key, (byGroup.get(key) ?? 0) + hitCount);
}
show('self time by function', byFunction);
show('self time by file', byFile);
show('self time by group', byGroup);
