/**
 * The domain's numbers, named once (docs/domain.md says what each means). The console API keeps
 * new-api's numbers, so these are the values clients send and read; code compares against the
 * names, never against bare numbers. A multi-key channel's keys use the channel statuses. Token, channel and redemption statuses and roles sit beside
 * their schemas (token.ts, channel.ts, redemption.ts, user.ts) and are typed here too.
 */
import type { CHANNEL_STATUS } from './channel.js'
import type { REDEMPTION_STATUS } from './redemption.js'
import type { TOKEN_STATUS } from './token.js'
import type { ROLES } from './user.js'

/** The values of a constant object, as a union type. */
export type ValueOf<T> = T[keyof T]

/** User account status. */
export const USER_STATUS = { enabled: 1, disabled: 2 } as const

/** Log row types: one consumption row per relay request, an error row when it failed after admission. */
export const LOG_TYPE = { unknown: 0, topup: 1, consume: 2, manage: 3, system: 4, error: 5 } as const

/** Channel types (new-api's numbers); the names the console shows are in the providers package. */
export const CHANNEL_TYPE = {
  openai: 1,
  midjourney: 2,
  azure: 3,
  ollama: 4,
  midjourneyPlus: 5,
  custom: 8,
  palm2: 11,
  claude: 14,
  baidu: 15,
  chatglm: 16,
  alibaba: 17,
  spark: 18,
  ai360: 19,
  aiProxyLibrary: 21,
  fastgpt: 22,
  tencent: 23,
  gemini: 24,
  moonshot: 25,
  glm4v: 26,
  lingyiwanwu: 31,
  aws: 33,
  cohere: 34,
  minimax: 35,
  suno: 36,
  dify: 37,
  jina: 38,
  cloudflare: 39,
  siliconcloud: 40,
  vertex: 41,
  mistral: 42,
  deepseek: 43,
  claudeCode: 44,
  codex: 45
} as const

export type UserStatus = ValueOf<typeof USER_STATUS>
export type LogType = ValueOf<typeof LOG_TYPE>
export type ChannelType = ValueOf<typeof CHANNEL_TYPE>
export type TokenStatus = ValueOf<typeof TOKEN_STATUS>
export type ChannelStatus = ValueOf<typeof CHANNEL_STATUS>
export type RedemptionStatus = ValueOf<typeof REDEMPTION_STATUS>
export type Role = ValueOf<typeof ROLES>
