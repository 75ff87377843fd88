import { defineCatalogue } from '../../i18n/catalogue.ts'

export default defineCatalogue('about', {
  title: 'About',
  empty: 'The administrator has not written an About page yet. It can be set in Settings → Other.'
}, {
  title: '关于',
  empty: '管理员暂未设置关于页面内容，可在 设置 → 其他设置 中设置。'
})
