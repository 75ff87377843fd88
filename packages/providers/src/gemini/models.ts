import type { RelayRequest } from '../core/adaptor.js'
import { PROVIDER_ERROR_CODES, ProviderError } from '../core/errors.js'
import { isRecord, list, parseJson, str } from '../core/json.js'

/**
 * Gemini models offered when a channel is created: the current Gemini 3 previews and the stable
 * 2.5 and 2.0 models (an admin can add any other by name, or fetch the list from Google).
 */
export const GEMINI_MODELS: readonly string[] = [
  'gemini-3.1-pro-preview',
  'gemini-3-flash-preview',
  'gemini-2.5-pro',
  'gemini-2.5-flash',
  'gemini-2.5-flash-lite',
  'gemini-2.0-flash'
]

/** A one-word chat capped at 16 tokens: the cheapest request that proves the channel serves `model`. */
export function geminiTestRequest (model: string): RelayRequest {
  return {
    endpoint: 'chat',
    format: 'openai',
    model,
    stream: false,
    body: { model, messages: [{ role: 'user', content: 'hi' }], max_tokens: 16 }
  }
}

/**
 * The model ids of Google's model list (`{models: [{name: 'models/…', supportedGenerationMethods}]}`):
 * the names without their `models/` prefix, of the models that serve generateContent only.
 */
export function parseGeminiModels (body: string): string[] {
  const json = parseJson(body)
  if (!isRecord(json) || (json.models !== undefined && !Array.isArray(json.models))) {
    throw new ProviderError(PROVIDER_ERROR_CODES.badUpstreamBody, 'the upstream did not answer with a Gemini model list')
  }
  const ids: string[] = []
  for (const model of list(json.models)) {
    if (!isRecord(model)) continue
    const name = str(model.name)
    if (name === undefined || name === '') continue
    if (!list(model.supportedGenerationMethods).includes('generateContent')) continue
    ids.push(name.startsWith('models/') ? name.slice('models/'.length) : name)
  }
  return ids
}
