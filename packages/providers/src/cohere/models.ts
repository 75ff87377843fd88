import { PROVIDER_ERROR_CODES, ProviderError } from '../core/errors.js'
import { isRecord, list, parseJson, str } from '../core/json.js'

/**
 * Cohere models offered when a channel is created: the Command A family and the Command R
 * models still served, the embedding models and the rerank model (an admin can add any other
 * by name, or fetch the account's list).
 */
export const COHERE_MODELS: readonly string[] = [
  'command-a-03-2025',
  'command-a-reasoning-08-2025',
  'command-a-vision-07-2025',
  'command-r7b-12-2024',
  'command-r-plus-08-2024',
  'command-r-08-2024',
  'embed-v4.0',
  'embed-multilingual-v3.0',
  'embed-english-v3.0',
  'rerank-v3.5'
]

/** The endpoints this adaptor serves, by Cohere's names of them. */
const SERVED: ReadonlySet<string> = new Set(['chat', 'embed', 'rerank'])

/**
 * The model names of Cohere's model list (`{models: [{name, endpoints}]}`) that serve chat,
 * embed or rerank (fine-tunes and classifiers left out), in Cohere's order.
 */
export function parseCohereModels (body: string): string[] {
  const json = parseJson(body)
  if (!isRecord(json) || !Array.isArray(json.models)) {
    throw new ProviderError(PROVIDER_ERROR_CODES.badUpstreamBody, 'the upstream answer is not a Cohere model list')
  }
  const names = new Set<string>()
  for (const model of list(json.models)) {
    if (!isRecord(model)) continue
    const name = str(model.name)
    const endpoints = list(model.endpoints)
    if (name === undefined || name === '') continue
    if (endpoints.length > 0 && !endpoints.some((endpoint) => typeof endpoint === 'string' && SERVED.has(endpoint))) continue
    names.add(name)
  }
  return [...names]
}
