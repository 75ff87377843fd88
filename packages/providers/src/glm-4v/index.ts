import { CHANNEL_TYPE } from '@modelgate/contracts'
import type { RelayRequest } from '../core/adaptor.js'
import { zhipuAdaptor } from '../chatglm/index.js'
import { isRecord, list } from '../core/json.js'

/** Zhipu's vision models: GLM-4.6V and 4.5V (with thinking), the GLM-4V series. */
const GLM_4V_MODELS: readonly string[] = [
  'glm-4.6v',
  'glm-4.5v',
  'glm-4.1v-thinking-flash',
  'glm-4v-plus-0111',
  'glm-4v-plus',
  'glm-4v-flash',
  'glm-4v'
]

const DATA_URL = /^data:[^,]*?;base64,/i

/** An image part whose data: URL is reduced to its base64 text, as Zhipu's vision API takes inline images. */
function zhipuImagePart (part: unknown): unknown {
  if (!isRecord(part) || part.type !== 'image_url') return part
  const image = part.image_url
  const url = isRecord(image) ? image.url : image
  if (typeof url !== 'string' || !DATA_URL.test(url)) return part
  const data = url.replace(DATA_URL, '')
  return { ...part, image_url: isRecord(image) ? { ...image, url: data } : { url: data } }
}

/**
 * The request with every image given as a data: URL sent as Zhipu documents inline images: the
 * bare base64 text in `image_url.url` (http(s) links go as they are).
 */
function zhipuVisionRequest (req: RelayRequest): RelayRequest {
  const body = req.body
  if (body === undefined || !Array.isArray(body.messages)) return req
  const messages = list(body.messages).map((message) => {
    if (!isRecord(message) || !Array.isArray(message.content)) return message
    return { ...message, content: list(message.content).map(zhipuImagePart) }
  })
  return { ...req, body: { ...body, messages } }
}

/** Type 26: Zhipu's GLM-4V vision models (chat completions with images). */
export const glm4V = zhipuAdaptor({
  type: CHANNEL_TYPE.glm4v,
  name: 'GLM-4V',
  defaultModels: GLM_4V_MODELS,
  endpoints: new Set(['chat'] as const),
  adjust: zhipuVisionRequest
})
