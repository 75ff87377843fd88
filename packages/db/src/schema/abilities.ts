import type { Generated, Insertable, Selectable, Updateable } from 'kysely'

/** Routing index: one row per channel x group x model. */
export interface AbilitiesTable {
  group: string
  model: string
  channel_id: number
  enabled: Generated<boolean>
  priority: Generated<number>
  weight: Generated<number>
  tag: string | null
}
export type Ability = Selectable<AbilitiesTable>
export type NewAbility = Insertable<AbilitiesTable>
export type AbilityUpdate = Updateable<AbilitiesTable>
