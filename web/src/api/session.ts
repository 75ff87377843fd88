import type { UserView } from '@modelgate/contracts'

const USER_KEY = 'user'

/** The signed-in user as the console keeps it between loads (docs/domain.md, Session). */
export type StoredUser = Pick<UserView, 'id' | 'username' | 'display_name' | 'role' | 'status' | 'group'> & Partial<UserView>

export function storedUser (): StoredUser | undefined {
  try {
    const text = localStorage.getItem(USER_KEY)
    if (text === null) return undefined
    const user = JSON.parse(text) as StoredUser
    return typeof user?.id === 'number' ? user : undefined
  } catch {
    return undefined
  }
}

export function storeUser (user: StoredUser | undefined): void {
  if (user === undefined) localStorage.removeItem(USER_KEY)
  else localStorage.setItem(USER_KEY, JSON.stringify(user))
}
