/** When an action reloads the list: after it succeeded (the default), always, only after it failed, or never. */
export type ReloadWhen = 'done' | 'always' | 'failed' | 'never'

export const reloadsAfter = (when: ReloadWhen, ok: boolean): boolean => when === 'always' || (when === 'done' && ok) || (when === 'failed' && !ok)

export interface ActOptions<R> {
  /** The success toast: a text, or one made from the answer (undefined: none). */
  done?: string | ((answer: R) => string | undefined)
  /** The error toast's text in place of the error itself. */
  failed?: (err: unknown) => string
  reload?: ReloadWhen
}
