import { useCallback, useState } from 'react'
import { useNotify } from '../components/Notify'
import { type ActOptions, reloadsAfter } from './actions'

/**
 * Row and page actions: `act` runs an API call, shows its success message or its error as a toast,
 * then reloads (see `reload` in the options), and answers the call's answer, or undefined when it
 * failed. `busy` holds while an action runs.
 */
export function useAction (reload?: () => void) {
  const notify = useNotify()
  const [running, setRunning] = useState(0)
  const act = useCallback(async <R>(work: () => Promise<R>, options: ActOptions<R> = {}): Promise<R | undefined> => {
    setRunning((n) => n + 1)
    let ok = false
    try {
      const answer = await work()
      ok = true
      const text = typeof options.done === 'function' ? options.done(answer) : options.done
      if (text !== undefined) notify.success(text)
      return answer
    } catch (err) {
      notify.error(options.failed === undefined ? err : options.failed(err))
      return undefined
    } finally {
      setRunning((n) => n - 1)
      if (reloadsAfter(options.reload ?? 'done', ok)) reload?.()
    }
  }, [notify, reload])
  return { act, busy: running > 0 }
}
