import type { Model } from '../core/model.ts';
import { runError, usageError } from './errors.ts';

interface Provider {
  envVar: string;
  sdk: string;
  create(options: { model: string; baseURL?: string; apiKey?: string }): Promise<Model>;
}

/** Each provider is imported only when asked for, so a missing SDK is reported, not a crash at startup. */
const PROVIDERS: Record<string, Provider> = {
  openai: {
    envVar: 'OPENAI_API_KEY',
    sdk: 'openai',
    create: async (options) => (await import('../models/openai.ts')).openaiModel(options),
  },
  anthropic: {
    envVar: 'ANTHROPIC_API_KEY',
    sdk: '@anthropic-ai/sdk',
    create: async (options) => (await import('../models/anthropic.ts')).anthropicModel(options),
  },
};

export const providerNames = Object.keys(PROVIDERS);

/**
 * `openai:gpt-4o-mini` → a Model. A missing key is an error unless a
 * `--base-url` (a local server) is given.
 */
export async function modelFromFlag(spec: string, baseURL: string | undefined, env: NodeJS.ProcessEnv): Promise<Model> {
  const colon = spec.indexOf(':');
  const providerName = colon > 0 ? spec.slice(0, colon) : '';
  const model = colon > 0 ? spec.slice(colon + 1) : '';
  const provider = Object.hasOwn(PROVIDERS, providerName) ? PROVIDERS[providerName] : undefined;
  if (!provider) {
    const what = colon > 0 ? `unknown provider "${providerName}"` : `--model must be <provider>:<model>, got "${spec}"`;
    throw usageError('run', `${what}; use one of: ${providerNames.map((p) => `${p}:<model>`).join(', ')}`);
  }
  if (!model)
    throw usageError(
      'run',
      `--model ${spec} names no model; e.g. ${providerName}:${providerName === 'openai' ? 'gpt-4o-mini' : 'claude-sonnet-4-5'}`,
    );
  const apiKey = env[provider.envVar];
  if (!apiKey && baseURL === undefined) {
    throw runError(
      `${provider.envVar} is not set. Export it, or pass --base-url to use a local server that needs no key.`,
    );
  }
  try {
    return await provider.create({
      model,
      ...(baseURL !== undefined ? { baseURL } : {}),
      ...(apiKey ? { apiKey } : {}),
    });
  } catch (error) {
    if (isMissingPackage(error, provider.sdk)) {
      throw runError(
        `the ${providerName} provider needs the "${provider.sdk}" package, which is not installed. Run: npm install ${provider.sdk}`,
      );
    }
    throw runError(
      `could not create the ${providerName} model: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

function isMissingPackage(error: unknown, name: string): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  return code === 'ERR_MODULE_NOT_FOUND' && typeof message === 'string' && message.includes(`'${name}'`);
}
