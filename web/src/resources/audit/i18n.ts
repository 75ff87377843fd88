import { defineCatalogue } from '../../i18n/catalogue.ts'

export default defineCatalogue('audit', {
  title: 'Audit trail',
  intro: 'Every change admins and the super admin made to channels, users, redemption codes and settings: who, from where, and what changed. Credentials are never shown.',
  filter: {
    actor: 'Actor (username or ID)',
    action: 'Action',
    targetType: 'Target type',
    targetId: 'Target ID',
    start: 'Start time',
    end: 'End time',
    all: 'All',
    query: 'Query',
    reset: 'Reset filters',
    export: 'Export CSV',
    badTime: 'Please choose a valid time'
  },
  col: {
    time: 'Time',
    actor: 'Actor',
    ip: 'IP address',
    action: 'Action',
    target: 'Target',
    changes: 'Changed fields',
    note: 'Note',
    details: 'Details'
  },
  role: { admin: 'Admin', root: 'Super admin', other: 'Role {{role}}' },
  target: { channel: 'Channel', user: 'User', redemption: 'Redemption code', topup: 'Top-up order', option: 'Setting', log: 'Logs', oauth_provider: 'Sign-in provider' },
  actions: {
    channel: {
      create: 'Channel created',
      update: 'Channel changed',
      delete: 'Channel deleted',
      tag: { update: 'Channels of a tag changed', status: 'Channels of a tag enabled or disabled' },
      key: { status: 'Key of a channel enabled or disabled', reveal: 'Channel key read' }
    },
    user: {
      create: 'User created',
      update: 'User changed',
      promote: 'User made admin',
      demote: 'Admin made user',
      enable: 'User enabled',
      disable: 'User disabled',
      delete: 'User deleted'
    },
    '2fa': { reset: 'Two-factor login reset' },
    redemption: { create: 'Code created', update: 'Code changed', delete: 'Code deleted' },
    topup: { complete: 'Top-up order completed by hand' },
    option: { update: 'Setting changed' },
    log: { delete: 'Logs cleared' },
    oauth_provider: { create: 'Sign-in provider added', update: 'Sign-in provider changed', delete: 'Sign-in provider deleted' }
  },
  empty: 'No audit entries match',
  open: 'Details of entry {{id}}',
  detail: {
    title: 'Audit entry {{id}}',
    field: 'Field',
    before: 'Before',
    after: 'After',
    noChanges: 'This action records no field changes.',
    absent: '—'
  },
  exported: 'Exported {{file}}'
}, {
  title: '审计日志',
  intro: '管理员和超级管理员对渠道、用户、兑换码和设置所做的每一次修改：谁、从哪里、改了什么。密钥类内容从不显示。',
  filter: {
    actor: '操作人（用户名或 ID）',
    action: '操作',
    targetType: '对象类型',
    targetId: '对象 ID',
    start: '开始时间',
    end: '结束时间',
    all: '全部',
    query: '查询',
    reset: '重置筛选',
    export: '导出 CSV',
    badTime: '请选择有效的时间'
  },
  col: {
    time: '时间',
    actor: '操作人',
    ip: 'IP 地址',
    action: '操作',
    target: '对象',
    changes: '修改的字段',
    note: '备注',
    details: '详情'
  },
  role: { admin: '管理员', root: '超级管理员', other: '角色 {{role}}' },
  target: { channel: '渠道', user: '用户', redemption: '兑换码', topup: '充值订单', option: '设置', log: '日志', oauth_provider: '登录方式' },
  actions: {
    channel: {
      create: '创建渠道',
      update: '修改渠道',
      delete: '删除渠道',
      tag: { update: '修改标签下的渠道', status: '启用或禁用标签下的渠道' },
      key: { status: '启用或禁用渠道的某个密钥', reveal: '查看渠道密钥' }
    },
    user: {
      create: '创建用户',
      update: '修改用户',
      promote: '设为管理员',
      demote: '取消管理员',
      enable: '启用用户',
      disable: '禁用用户',
      delete: '删除用户'
    },
    '2fa': { reset: '重置两步验证' },
    redemption: { create: '创建兑换码', update: '修改兑换码', delete: '删除兑换码' },
    topup: { complete: '手动补单' },
    option: { update: '修改设置' },
    log: { delete: '清理日志' },
    oauth_provider: { create: '添加登录方式', update: '修改登录方式', delete: '删除登录方式' }
  },
  empty: '没有符合条件的审计记录',
  open: '记录 {{id}} 的详情',
  detail: {
    title: '审计记录 {{id}}',
    field: '字段',
    before: '修改前',
    after: '修改后',
    noChanges: '此操作没有记录字段修改。',
    absent: '—'
  },
  exported: '已导出 {{file}}'
})
