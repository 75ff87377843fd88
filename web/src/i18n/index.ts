import i18n from 'i18next'
import { initReactI18next } from 'react-i18next'
import { en } from './en'
import { zh } from './zh'

export const LANGUAGE_KEY = 'i18nextLng'

function savedLanguage (): 'en' | 'zh' {
  const saved = localStorage.getItem(LANGUAGE_KEY)
  if (saved === 'en' || saved === 'zh') return saved
  return navigator.language.toLowerCase().startsWith('en') ? 'en' : 'zh'
}

// Chinese is the fallback language (SPEC.md section 1); the saved choice is restored on load.
void i18n.use(initReactI18next).init({
  resources: { en: { translation: en }, zh: { translation: zh } },
  lng: savedLanguage(),
  fallbackLng: 'zh',
  interpolation: { escapeValue: false }
})

i18n.on('languageChanged', (lng) => {
  localStorage.setItem(LANGUAGE_KEY, lng)
  document.documentElement.lang = lng
})
document.documentElement.lang = i18n.language

export default i18n
