// The worker entry piscina loads when toolpool runs from its TypeScript
// sources, where its runtime is compiled into the compile cache: the cache
// is a folder of the user's that a tool without permissions could write, so
// the runtime is not imported from it. The host hands each worker the code
// it compiled, in memory (workerData), and this imports exactly that; the
// file in the cache only names it in stack traces. Plain JavaScript, so
// that nothing of it needs compiling. (A built package loads its workers/
// files directly: they are not in the cache.)
import { pathToFileURL } from 'node:url';
import { workerData } from 'node:worker_threads';

const { file, code } = workerData?.toolpoolRuntime ?? {};
// Plain Error: this plain-JS entry loads before any of toolpool's modules (the code table among them).
if (typeof file !== 'string' || typeof code !== 'string')
  throw new Error('toolpool: this worker was started without its runtime');
const named = `${code}\n//# sourceURL=${pathToFileURL(file).href}\n`;
const runtime = await import(`data:text/javascript;base64,${Buffer.from(named).toString('base64')}`);
export default runtime.default;
