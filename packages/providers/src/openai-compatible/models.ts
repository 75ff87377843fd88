import { PROVIDER_ERROR_CODES, ProviderError } from '../core/errors.js'
import { isRecord, list, parseJson, str } from '../core/json.js'

/**
 * The ids of an OpenAI model list (`{object: 'list', data: [{id}]}`), in the upstream's order,
 * without duplicates. Throws ProviderError `PROV_ERR_BAD_UPSTREAM_BODY` when the body is not one.
 */
export function parseOpenAIModels (body: string): string[] {
  const json = parseJson(body)
  if (!isRecord(json) || !Array.isArray(json.data)) {
    throw new ProviderError(PROVIDER_ERROR_CODES.badUpstreamBody, 'the upstream answer is not a model list')
  }
  const ids = new Set<string>()
  for (const item of list(json.data)) {
    const id = isRecord(item) ? str(item.id) : undefined
    if (id !== undefined && id !== '') ids.add(id)
  }
  return [...ids]
}
