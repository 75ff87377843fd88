import { defineMessages } from './i18n.js'

/** Signed-in sessions (issue 29). */
export const SM = defineMessages({
  sessionNotFound: { en: 'This session has already ended; refresh the list', zh: '该会话已结束，请刷新列表' },
  sessionRevoked: { en: 'Session signed out', zh: '已退出该会话' },
  othersRevoked: { en: '{n} other sessions signed out', zh: '已退出其他 {n} 个会话' }
})
