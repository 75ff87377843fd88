import { defineMessages } from './i18n.js'

/** First-run setup (`/api/setup`). */
export const SM = defineMessages({
  alreadySetUp: { en: 'The system is already set up', zh: '系统已经初始化完成' },
  setUp: { en: 'Setup complete: sign in as {username}', zh: '初始化完成，请使用 {username} 登录' }
})
