import { defineCatalogue } from '../../i18n/catalogue.ts'

export default defineCatalogue('pricing', {
  title: 'Model pricing',
  search: 'Search model name',
  group: 'Group',
  groupHint: 'Prices below are for group {{group}} (ratio {{ratio}}); pick another group to compare.',
  copySelected: 'Copy selected',
  copied: 'Copied {{n}} model names',
  selectAll: 'Select all models shown',
  select: 'Select {{model}}',
  col: {
    model: 'Model',
    type: 'Billing',
    modelRatio: 'Model ratio',
    completionRatio: 'Completion ratio',
    prompt: 'Prompt price',
    completion: 'Completion price',
    groups: 'Usable groups'
  },
  perToken: 'Per token',
  perCall: 'Per call',
  perMillion: '{{price}} / 1M tokens',
  callPrice: '{{price}} / call',
  unavailable: 'Not available in group {{group}}',
  empty: 'No models match',
  noModels: 'No model is on sale yet',
  ratio: 'Ratio {{ratio}}'
}, {
  title: '模型价格',
  search: '搜索模型名称',
  group: '分组',
  groupHint: '下列价格为 {{group}} 分组的价格（倍率 {{ratio}}）；切换分组可比较价格。',
  copySelected: '复制所选模型',
  copied: '已复制 {{n}} 个模型名称',
  selectAll: '全选当前显示的模型',
  select: '选择 {{model}}',
  col: {
    model: '模型名称',
    type: '计费类型',
    modelRatio: '模型倍率',
    completionRatio: '补全倍率',
    prompt: '提示价格',
    completion: '补全价格',
    groups: '可用分组'
  },
  perToken: '按量计费',
  perCall: '按次计费',
  perMillion: '{{price}} / 1M tokens',
  callPrice: '{{price}} / 次',
  unavailable: '{{group}} 分组不可用',
  empty: '没有匹配的模型',
  noModels: '暂无可用模型',
  ratio: '倍率 {{ratio}}'
})
