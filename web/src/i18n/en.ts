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
  },
  /** Creem payments: the wallet's card and the super admin's settings card. */
  creem: {
    title: 'Pay with Creem',
    help: 'Choose a package: you pay on Creem\'s secure page and the quota is added once Creem confirms the payment.',
    price: '{{price}} {{currency}}',
    credits: 'Adds {{quota}}',
    confirmTitle: 'Confirm the purchase',
    product: 'Package',
    payable: 'Sum to pay',
    quota: 'Quota added',
    method: 'Payment method',
    methodName: 'Creem',
    hint: 'You will be taken to Creem\'s payment page. The quota arrives once Creem confirms the payment.',
    pay: 'Pay now',
    returned: 'Payment received by Creem: the quota is added as soon as Creem confirms it.',
    settings: {
      title: 'Creem',
      help: 'Top-up packages sold through Creem. They are offered once the API key, the webhook secret and at least one product are set.',
      webhook: 'Webhook endpoint to add in Creem: {{url}} (events checkout.completed, refund.created).',
      apiKey: 'API key',
      webhookSecret: 'Webhook secret',
      testMode: 'Test mode',
      testModeHelp: 'On: checkouts are created on Creem\'s test API (test-api.creem.io) with a test key.',
      products: 'Products',
      productsHelp: 'A JSON array, one entry per package: {"name": "Starter", "productId": "prod_...", "price": 4.99, "currency": "USD", "quota": 500000}. Each paid package credits its quota.',
      apiBase: 'API address',
      apiBaseHelp: 'Blank uses Creem\'s own API (test or live by the switch). Private addresses are allowed, cloud metadata addresses refused.',
      refundDeducts: 'Refunds take the quota back',
      refundDeductsHelp: 'On: a full refund deducts the credited quota from the balance.'
    }
  }
}
export type Messages = typeof en
