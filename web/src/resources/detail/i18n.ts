import { defineCatalogue } from '../../i18n/catalogue.ts'

export default defineCatalogue('detail', {
  title: 'Data dashboard',
  start: 'Start time',
  end: 'End time',
  granularity: 'Time granularity',
  granularities: { hour: 'Hour', day: 'Day', week: 'Week' },
  username: 'Username',
  usernameHelp: 'Leave blank for all users',
  query: 'Query',
  badTime: 'Please choose a valid time range',
  disabled: 'The data dashboard is off: the administrator has disabled data export (Settings → Operation → Data dashboard), so usage is not being collected for charts.',
  cards: { quota: 'Total quota', requests: 'Requests', tokens: 'Tokens', models: 'Models used' },
  charts: {
    quota: 'Quota by model over time',
    requests: 'Requests by model over time',
    share: 'Quota share by model'
  },
  empty: 'No usage in this time range',
  others: 'Other ({{count}} models)',
  scope: { all: 'All users', self: 'Your usage', user: 'User {{name}}' }
}, {
  title: '数据看板',
  start: '起始时间',
  end: '结束时间',
  granularity: '时间粒度',
  granularities: { hour: '小时', day: '天', week: '周' },
  username: '用户名称',
  usernameHelp: '留空表示所有用户',
  query: '查询',
  badTime: '请选择有效的时间范围',
  disabled: '数据看板未开启：管理员已关闭数据导出（设置 → 运营设置 → 数据看板），因此不会收集用于图表的使用数据。',
  cards: { quota: '消耗额度', requests: '请求次数', tokens: 'Token 用量', models: '使用模型数' },
  charts: {
    quota: '各模型额度消耗趋势',
    requests: '各模型请求次数趋势',
    share: '各模型额度占比'
  },
  empty: '该时间范围内没有使用数据',
  others: '其他（{{count}} 个模型）',
  scope: { all: '所有用户', self: '我的使用', user: '用户 {{name}}' }
})
