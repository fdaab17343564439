// comlink 4.4.2 has no `exports` map, so its ES modules are imported by path;
// these declarations give those paths the package's own types.
declare module 'comlink/dist/esm/comlink.mjs' {
  export * from 'comlink';
}
declare module 'comlink/dist/esm/node-adapter.mjs' {
  import type { Endpoint } from 'comlink';
  import type { MessagePort } from 'node:worker_threads';
  export default function nodeEndpoint(endpoint: MessagePort): Endpoint;
}
