/// <reference types="node" preserve="true" />
// The public API of toolpool, at a glance.
export { defineTool, isTool } from './core/tool.ts';
export type {
  ApprovalCheck,
  ApprovalPolicy,
  AudioContent,
  BlobResourceContents,
  Content,
  ExecutionMode,
  HostFunctions,
  ImageContent,
  Isolation,
  OutputSchema,
  ResourceContent,
  ResourceLinkContent,
  TextContent,
  TextResourceContents,
  Tool,
  ToolCall,
  ToolContext,
  ToolDefinition,
  ToolAnnotations,
  ToolLimits,
  ToolResult,
  ToolResultMessage,
  ToolSchema,
} from './core/tool.ts';
export type { JsonSchema, ToolArgs, ToolParameters } from './core/tool-parameters.ts';
export type { ElicitContext, ElicitField, ElicitHandler, ElicitRequest, ElicitResult } from './core/elicitation.ts';
export { createExecutor } from './executor/create-executor.ts';
export type { Executor, ToolMetadata } from './executor/executor.ts';
export type { ExecutorOptions, ModuleEntry, ToolEntry, WorkerOptions } from './core/options.ts';
export type { Permissions } from './core/options.ts';
export type { EnvOption } from './core/options.ts';
export type { BatchOptions, BatchResult } from './executor/batch.ts';
export type { RemoteCall, RemoteOutcome, RemoteRunner, RemoteUsage } from './core/remote.ts';
export type { ApprovalOptions, PendingApproval } from './executor/approval.ts';
export { memoryLedger } from './core/ledger.ts';
export type { EndRecord, Ledger, LedgerKey, LedgerRecord, MemoryLedgerOptions, StartRecord } from './core/ledger.ts';
export { sqliteLedger } from './executor/sqlite-ledger.ts';
export type { SqliteLedgerOptions } from './executor/sqlite-ledger.ts';
export type {
  AfterToolCallContext,
  AfterToolCallHook,
  AfterToolCallResult,
  BeforeToolCallContext,
  BeforeToolCallHook,
  BeforeToolCallResult,
} from './core/hooks.ts';
export type {
  ExecutorEvents,
  Listener,
  ToolEndEvent,
  ToolEvent,
  ToolsChangedEvent,
  ToolStartEvent,
  ToolUpdateEvent,
} from './core/events.ts';
export { ERROR_CODES, ToolpoolError, ToolpoolTypeError, isToolpoolError } from './core/error-codes.ts';
export type { ErrorCode, ToolErrorCode, ToolpoolErrorCode } from './core/error-codes.ts';
export type { AssistantMessage, Message, StopReason, ToolCallContent, Usage, UserMessage } from './core/messages.ts';
export type { Model, ModelRequest, ModelStreamEvent } from './core/model.ts';
export { Agent, DEFAULT_MAX_TURNS } from './agent/agent.ts';
export type {
  AgentEndEvent,
  AgentEndReason,
  AgentEvent,
  AgentExecutor,
  AgentOptions,
  AgentSnapshot,
  AgentStartEvent,
  ApprovalDecisions,
  MessageEndEvent,
  MessageStartEvent,
  MessageUpdateEvent,
  ModelDelta,
  QueueMode,
  TurnEndEvent,
  TurnStartEvent,
} from './agent/agent.ts';
export { scriptedModel } from './models/scripted.ts';
export type {
  ScriptedModel,
  ScriptedModelOptions,
  ScriptedToolCall,
  ScriptedTurn,
  ScriptStep,
} from './models/scripted.ts';
