/** Messages of the shell (top bar, sidebar, footer, errors, shared words). Screens keep their own catalogues. */
export const en = {
  nav: {
    home: 'Home', console: 'Console', about: 'About', login: 'Log in', register: 'Register', logout: 'Log out',
    channel: 'Channels', token: 'Tokens', user: 'Users', log: 'Logs', detail: 'Dashboard', setting: 'Settings',
    topup: 'Wallet', playground: 'Playground', redemption: 'Redemption codes', midjourney: 'Drawing', task: 'Music tasks',
    pricing: 'Pricing', chat: 'Chat', menu: 'Menu', personal: 'Personal settings', audit: 'Audit trail'
  },
  theme: { light: 'Light', dark: 'Dark', system: 'Follow system', choose: 'Theme' },
  language: { switch: '中文', choose: 'Language' },
  home: { title: 'One API for every model', subtitle: 'Point any OpenAI client or SDK at {{address}} (an OpenAI-compatible API) and use every model your administrator has connected. Anthropic clients such as Claude Code and Google\'s Gemini SDK work too, with {{origin}} as their base URL.' },
  status: { unreachable: 'Unable to connect to the server' },
  notFound: { title: 'Page not found', body: 'The page does not exist. Please check the address.', back: 'Back to home' },
  error: {
    tooManyRequests: 'Too many requests, please try again later',
    internal: 'Internal server error, please contact the administrator',
    demo: 'This site is a demo only, there is no server',
    generic: 'Error: {{message}}',
    network: 'Unable to connect to the server',
    expired: 'Not logged in, or the login has expired; please log in again'
  },
  common: {
    save: 'Save', cancel: 'Cancel', confirm: 'Confirm', delete: 'Delete', edit: 'Edit', add: 'Add', search: 'Search',
    refresh: 'Refresh', copy: 'Copy', copied: 'Copied', enable: 'Enable', disable: 'Disable', close: 'Close', submit: 'Submit',
    loading: 'Loading…', none: 'None', actions: 'Actions', status: 'Status', name: 'Name', id: 'ID', yes: 'Yes', no: 'No',
    rowsPerPage: 'Rows per page', displayedRows: '{{from}}–{{to}} of {{count}}', empty: 'Nothing here yet', copyFailed: 'Cannot copy to the clipboard; copy it by hand:',
    unlimited: 'Unlimited', never: 'Never', saved: 'Saved', noneSelected: 'Select at least one row first', reset: 'Reset',
    forbidden: 'Permission denied: insufficient rights for this page'
  }
}
export type Messages = typeof en
