import type { FastifyRequest } from 'fastify'

/** Console message languages; Chinese is the fallback. */
export type Lang = 'en' | 'zh'

/** One message in both languages; `{name}` placeholders are filled by {@link t}. */
export interface Msg {
  en: string
  zh: string
}

/** Declares a module's messages (each module keeps its own catalogue next to its code). */
export function defineMessages<T extends Record<string, Msg>> (messages: T): T {
  return messages
}

/**
 * The request's language: the console's saved choice (the `lang` cookie), else the best of
 * English and Chinese in Accept-Language, else Chinese.
 */
export function requestLang (req: FastifyRequest): Lang {
  const cookie = (req as { cookies?: Record<string, string | undefined> }).cookies?.['lang']
  if (cookie === 'en' || cookie === 'zh') return cookie
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

/** A message in the request's language with placeholders filled. */
export function t (req: FastifyRequest, msg: Msg, vars: Record<string, string | number> = {}): string {
  return msg[requestLang(req)].replace(/\{(\w+)\}/g, (whole, name: string) => (name in vars ? String(vars[name]) : whole))
}
