import type { FastifyRequest } from 'fastify'

/** Console message languages; Chinese is the fallback (SPEC.md section 1). */
export type Lang = 'en' | 'zh'

const MESSAGES = {
  notFound: { en: 'Not found', zh: '未找到' },
  internal: { en: 'Internal server error, please contact the administrator', zh: '服务器内部错误，请联系管理员' },
  invalidParameter: { en: 'Invalid parameter', zh: '无效的参数' }
} as const satisfies Record<string, Record<Lang, string>>

export type MessageKey = keyof typeof MESSAGES

/** The request's language from Accept-Language: English when English ranks above Chinese. */
export function requestLang (req: FastifyRequest): Lang {
  const header = req.headers['accept-language']
  if (typeof header !== 'string') return 'zh'
  let best: { lang: Lang, q: number } | undefined
  for (const part of header.split(',')) {
    const [tag = '', ...params] = part.trim().toLowerCase().split(';')
    const qParam = params.find((p) => p.trim().startsWith('q='))
    const q = qParam === undefined ? 1 : Number(qParam.trim().slice(2))
    const lang: Lang | undefined = tag.startsWith('en') ? 'en' : tag.startsWith('zh') ? 'zh' : undefined
    if (lang !== undefined && Number.isFinite(q) && (best === undefined || q > best.q)) best = { lang, q }
  }
  return best?.lang ?? 'zh'
}

/** A message in the request's language. */
export function msg (req: FastifyRequest, key: MessageKey): string {
  return MESSAGES[key][requestLang(req)]
}
