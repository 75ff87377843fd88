import { defineCatalogue } from '../../i18n/catalogue.ts'

export default defineCatalogue('redemption', {
  title: 'Redemption codes',
  intro: 'Codes that add quota to the balance of whoever redeems them. Each code works once.',
  search: 'Search by ID or name',
  add: 'Add codes',
  copySelected: 'Copy selected',
  copiedSelected: 'Copied {{count}} codes',
  empty: 'No redemption codes yet',
  selectAll: 'Select all codes on this page',
  selectRow: 'Select code {{id}}',
  col: {
    id: 'ID',
    name: 'Name',
    status: 'Status',
    quota: 'Quota',
    created: 'Created',
    redeemer: 'Redeemer ID',
    actions: 'Actions'
  },
  status: {
    unused: 'Unused',
    disabled: 'Disabled',
    used: 'Used',
    unknown: 'Unknown'
  },
  redeemedAt: 'Redeemed at {{time}}',
  action: {
    view: 'View code',
    copy: 'Copy code',
    delete: 'Delete',
    enable: 'Enable',
    disable: 'Disable',
    edit: 'Edit'
  },
  codeTitle: 'Code "{{name}}"',
  codeCopied: 'Code copied',
  enabled: 'Code enabled',
  disabled: 'Code disabled',
  deleteTitle: 'Delete redemption code',
  deleteBody: 'Delete the code "{{name}}" (ID {{id}})? It can no longer be redeemed.',
  deleted: 'Code deleted',
  updated: 'Code updated',
  created: {
    title: '{{count}} codes created',
    body: 'Download the codes as a text file named {{file}}, one code per line? They also stay in this list.',
    download: 'Download',
    copyAll: 'Copy all',
    copied: 'Codes copied'
  },
  form: {
    createTitle: 'Add redemption codes',
    editTitle: 'Edit redemption code',
    name: 'Name',
    nameHelp: 'At most 20 characters; empty names the codes after their quota',
    nameLength: 'The name must be at most 20 characters',
    quota: 'Quota',
    quotaUnitsHelp: 'In quota units; shown as {{shown}}',
    quotaDollarsHelp: 'In dollars; {{units}} quota units',
    quotaInvalid: 'Enter a quota greater than zero',
    count: 'How many codes',
    countHelp: '1 to 100 per batch',
    countInvalid: 'The count must be a whole number from 1 to 100',
    create: 'Create',
    fixErrors: 'Please check the input'
  }
}, {
  title: '兑换码',
  intro: '兑换后为余额增加额度的兑换码。每个兑换码只能使用一次。',
  search: '按 ID 或名称搜索',
  add: '添加兑换码',
  copySelected: '复制所选',
  copiedSelected: '已复制 {{count}} 个兑换码',
  empty: '还没有兑换码',
  selectAll: '选择本页全部兑换码',
  selectRow: '选择兑换码 {{id}}',
  col: {
    id: 'ID',
    name: '名称',
    status: '状态',
    quota: '额度',
    created: '创建时间',
    redeemer: '兑换人 ID',
    actions: '操作'
  },
  status: {
    unused: '未使用',
    disabled: '已禁用',
    used: '已使用',
    unknown: '未知状态'
  },
  redeemedAt: '兑换时间 {{time}}',
  action: {
    view: '查看兑换码',
    copy: '复制兑换码',
    delete: '删除',
    enable: '启用',
    disable: '禁用',
    edit: '编辑'
  },
  codeTitle: '兑换码“{{name}}”',
  codeCopied: '兑换码已复制',
  enabled: '兑换码已启用',
  disabled: '兑换码已禁用',
  deleteTitle: '删除兑换码',
  deleteBody: '确定删除兑换码“{{name}}”（ID {{id}}）吗？删除后将无法兑换。',
  deleted: '兑换码已删除',
  updated: '兑换码已更新',
  created: {
    title: '已创建 {{count}} 个兑换码',
    body: '是否将兑换码下载为文本文件 {{file}}（每行一个）？它们也会保留在列表中。',
    download: '下载',
    copyAll: '全部复制',
    copied: '兑换码已复制'
  },
  form: {
    createTitle: '添加兑换码',
    editTitle: '编辑兑换码',
    name: '名称',
    nameHelp: '最多 20 个字符；留空则以额度命名',
    nameLength: '名称最多 20 个字符',
    quota: '额度',
    quotaUnitsHelp: '单位为额度；显示为 {{shown}}',
    quotaDollarsHelp: '单位为美元；折合 {{units}} 额度',
    quotaInvalid: '请输入大于 0 的额度',
    count: '生成数量',
    countHelp: '每批 1 到 100 个',
    countInvalid: '数量必须是 1 到 100 的整数',
    create: '创建',
    fixErrors: '请检查输入'
  }
})
