import type { Generated, Insertable, Selectable, Updateable } from 'kysely'

/** Super-admin settings, key/value text. */
export interface OptionsTable {
  key: string
  value: Generated<string>
  updated_at: Generated<number>
}
export type OptionRow = Selectable<OptionsTable>
export type NewOptionRow = Insertable<OptionsTable>
export type OptionRowUpdate = Updateable<OptionsTable>
