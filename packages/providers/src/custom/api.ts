import { PROVIDER_ERROR_CODES, ProviderError } from '../core/errors.js'
import { openAIUrl, type UrlContext } from '../openai-compatible/index.js'

function hasPath (url: string): boolean {
  try {
    const { pathname } = new URL(url)
    return pathname !== '' && pathname !== '/'
  } catch {
    throw new ProviderError(PROVIDER_ERROR_CODES.badBaseUrl, 'the custom channel URL is not a valid URL')
  }
}

/**
 * The channel's URL is the full upstream URL, with `{model}` replaced by the model (slashes in
 * model names kept). A URL with a path is used as is for every endpoint; a bare origin gets the
 * endpoint's OpenAI path. The model list exists only for a bare origin.
 */
export function customUrl ({ base, target, model }: UrlContext): string | undefined {
  if (target === 'models') {
    return base.includes('{model}') || hasPath(base) ? undefined : openAIUrl(base, 'models')
  }
  const url = base.replaceAll('{model}', encodeURIComponent(model).replaceAll('%2F', '/'))
  return hasPath(url) ? url : openAIUrl(url, target)
}
