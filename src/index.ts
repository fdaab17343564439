// The public API of toolpool, at a glance.
export { defineTool, isTool } from './tool.ts';
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
} from './tool.ts';
export type { JsonSchema, ToolArgs, ToolParameters } from './tool-parameters.ts';
export { createExecutor } from './create-executor.ts';
export type { Executor, ToolMetadata } from './executor.ts';
export type { ExecutorOptions, ModuleEntry, ToolEntry, WorkerOptions } from './options.ts';
export type { Permissions } from './isolation/permissions.ts';
export type { EnvOption } from './isolation/environment.ts';
export type { BatchOptions, BatchResult } from './batch.ts';
export type { RemoteCall, RemoteOutcome, RemoteRunner, RemoteUsage } from './remote.ts';
export type { ApprovalOptions, PendingApproval } from './approval.ts';
export type {
  AfterToolCallContext,
  AfterToolCallHook,
  AfterToolCallResult,
  BeforeToolCallContext,
  BeforeToolCallHook,
  BeforeToolCallResult,
} from './hooks.ts';
export type { Listener, ToolEndEvent, ToolEvent, ToolStartEvent, ToolUpdateEvent } from './events.ts';
export type { AssistantMessage, Message, StopReason, ToolCallContent, Usage, UserMessage } from './messages.ts';
export type { Model, ModelRequest, ModelStreamEvent } from './model.ts';
export { Agent, DEFAULT_MAX_TURNS } from './agent.ts';
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
} from './agent.ts';
export { scriptedModel } from './models/scripted.ts';
export type { ScriptedModel, ScriptedModelOptions, ScriptedToolCall, ScriptedTurn, ScriptStep } from './models/scripted.ts';
