/// <reference types="node" preserve="true" />
// toolpool/ai-sdk: an executor's tools as an AI SDK (ai 7) ToolSet.
export { aiSdkTools } from './tools.ts';
export type { AiSdkExecutor, AiSdkTool, AiSdkToolOutput, AiSdkToolSet } from './tools.ts';
export { ToolpoolToolError } from './tool-error.ts';
