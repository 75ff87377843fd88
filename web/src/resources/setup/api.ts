import type { SetupBody, SetupStatus } from '@modelgate/contracts'
import { get, post } from '../../api/client'

/** Whether the first account exists (`status` true once setup is done). */
export async function getSetup (): Promise<SetupStatus> {
  return await get<SetupStatus>('/api/setup')
}

/** Creates the super admin on an empty database. */
export async function completeSetup (body: SetupBody): Promise<void> {
  await post<null>('/api/setup', body)
}
