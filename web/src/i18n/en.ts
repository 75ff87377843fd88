export const en = {
  nav: { home: 'Home', console: 'Console', about: 'About', login: 'Log in', register: 'Register' },
  theme: { light: 'Light mode', dark: 'Dark mode' },
  language: { switch: '中文' },
  home: { title: 'One API for every model', subtitle: 'Point any OpenAI, Anthropic or Gemini client at {{address}} and use every model your administrator has connected.' },
  status: { unreachable: 'Unable to connect to the server' },
  notFound: { title: 'Page not found', body: 'The page does not exist. Please check the address.', back: 'Back to home' }
}
export type Messages = typeof en
