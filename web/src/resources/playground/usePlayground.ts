import { useMemo } from 'react'
import { get } from '../../api/client'
import { useAuth } from '../../auth/AuthContext'
import { useLoad } from '../../lib/useLoad'
import { usePersistentState } from '../../lib/usePersistentState'

export interface GroupInfo { desc: string, ratio: number }

export interface PlaygroundOptions {
  /** The models of the user's group; undefined while loading. */
  models: string[] | undefined
  /** Groups the user may pick, with description and ratio; undefined while loading. */
  groups: Record<string, GroupInfo> | undefined
  failed: boolean
}

const userModels = async (): Promise<string[]> => await get<string[]>('/api/user/models')
const selfGroups = async (): Promise<Record<string, GroupInfo>> => await get<Record<string, GroupInfo>>('/api/user/self/groups')
const NO_GROUPS: Record<string, GroupInfo> = {}

/** The models (`/api/user/models`) and groups (`/api/user/self/groups`) the panel offers. */
export function usePlaygroundOptions (): PlaygroundOptions {
  const models = useLoad(userModels, { quiet: true })
  const groups = useLoad(selfGroups, { quiet: true })
  // Without the group list the user's own group is still offered.
  return { models: models.data, groups: groups.error === undefined ? groups.data : NO_GROUPS, failed: models.error !== undefined }
}

export interface PlaygroundSettings {
  group: string
  model: string
  /** 0.1 to 1 from the slider; 0 until the user moves it (docs/domain.md default). */
  temperature: number
  /** 0 means no limit. */
  maxTokens: number
  systemPrompt: string
}

/** docs/domain.md: the playground's default model. */
export const DEFAULT_MODEL = 'gpt-4o-mini'

/**
 * The panel's choices, remembered between visits. A remembered model or group the user can no
 * longer use gives way to the default model (or the first one) and the user's own group.
 */
export function usePlaygroundSettings (options: PlaygroundOptions): [PlaygroundSettings, (s: PlaygroundSettings) => void] {
  const { user } = useAuth()
  const ownGroup = user?.group ?? 'default'
  const [stored, setStored] = usePersistentState<PlaygroundSettings>('playground-settings', {
    group: '', model: DEFAULT_MODEL, temperature: 0, maxTokens: 0, systemPrompt: ''
  })
  const settings = useMemo(() => {
    const models = options.models
    let model = stored.model
    if (models !== undefined && !models.includes(model)) model = models.includes(DEFAULT_MODEL) ? DEFAULT_MODEL : models[0] ?? ''
    const groups = options.groups
    const group = stored.group !== '' && (groups === undefined || stored.group in groups) ? stored.group : ownGroup
    return { ...stored, model, group }
  }, [stored, options.models, options.groups, ownGroup])
  return [settings, setStored]
}
