/** Same shape, every leaf a string: a zh catalogue must have exactly the keys of its en one. */
export type Translations<T> = { [K in keyof T]: T[K] extends string ? string : Translations<T[K]> }

/**
 * One screen's messages in both languages, under the screen's own key (token.title is the title key of the token screen).
 * Every screen keeps its catalogue next to its code in `resources/<screen>/i18n.ts`; the type
 * makes a key missing in one language a compile error, and test/i18n.test.ts checks the rest.
 */
export function defineCatalogue<const N extends string, T extends object> (name: N, en: T, zh: Translations<T>): { name: N, en: T, zh: Translations<T> } {
  return { name, en, zh }
}
