import i18n from 'i18next'
import { initReactI18next } from 'react-i18next'
import type { Translations } from './catalogue'
import { en } from './en'
import { zh } from './zh'

export const LANGUAGE_KEY = 'i18nextLng'

interface Catalogue { name: string, en: object, zh: Translations<object> }

// Every screen's catalogue (resources/<screen>/i18n.ts), merged under its name.
const screens = Object.values(import.meta.glob<{ default: Catalogue }>('../resources/*/i18n.ts', { eager: true })).map((m) => m.default)

export const catalogues = {
  en: { ...en, ...Object.fromEntries(screens.map((c) => [c.name, c.en])) },
  zh: { ...zh, ...Object.fromEntries(screens.map((c) => [c.name, c.zh])) }
}

function savedLanguage (): 'en' | 'zh' {
  const saved = localStorage.getItem(LANGUAGE_KEY)
  if (saved === 'en' || saved === 'zh') return saved
  return navigator.language.toLowerCase().startsWith('en') ? 'en' : 'zh'
}

function remember (lng: string): void {
  localStorage.setItem(LANGUAGE_KEY, lng)
  document.documentElement.lang = lng
  // The console API answers in the same language (it reads this cookie first).
  document.cookie = `lang=${lng === 'en' ? 'en' : 'zh'}; path=/; max-age=31536000; samesite=lax`
}

// Chinese is the fallback language; the saved choice is restored on load.
void i18n.use(initReactI18next).init({
  resources: { en: { translation: catalogues.en }, zh: { translation: catalogues.zh } },
  lng: savedLanguage(),
  fallbackLng: 'zh',
  interpolation: { escapeValue: false }
})

i18n.on('languageChanged', remember)
remember(i18n.language)

export default i18n
