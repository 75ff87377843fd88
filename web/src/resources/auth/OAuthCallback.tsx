import Box from '@mui/material/Box'
import CircularProgress from '@mui/material/CircularProgress'
import Typography from '@mui/material/Typography'
import { useEffect, useRef, useState } from 'react'
import { useTranslation } from 'react-i18next'
import { useNavigate, useSearchParams } from 'react-router-dom'
import { ApiError } from '../../api/client'
import { storedUser } from '../../api/session'
import { useAuth } from '../../auth/AuthContext'
import { useNotify } from '../../components/Notify'
import { isSecondStep } from '../two-factor/api'
import { type CodeProvider, finishOAuth } from './api'
import { CONSOLE_HOME } from './useFinishSignIn'

/** Retries after a failure that may pass (network, 429, 5xx); the n-th waits n × 2 s (docs/domain.md). */
const MAX_RETRIES = 3
const RETRY_STEP_MS = 2000

/**
 * Only these failures are worth another try: the server refuses everything else for good, and
 * it has spent the single-use state by then, so a retry could only fail the same way.
 */
function transient (err: unknown): boolean {
  return err instanceof ApiError && (err.status === 0 || err.status === 429 || err.status >= 500)
}

/**
 * The page a provider sends the browser back to (`?code&state`). A signed-in user is binding the
 * account: success and failure both return to /setting. Otherwise the answer signs the user in
 * (or registers one) and opens the console; a failure ends on /login with the reason.
 */
export function OAuthCallback ({ provider, name }: { provider: CodeProvider, name: string }) {
  const { t } = useTranslation()
  const { signIn } = useAuth()
  const notify = useNotify()
  const navigate = useNavigate()
  const [params] = useSearchParams()
  const [retry, setRetry] = useState(0)
  const [failed, setFailed] = useState<'bind' | 'login' | undefined>()
  const started = useRef(false)
  const mounted = useRef(true)

  useEffect(() => {
    mounted.current = true
    return () => { mounted.current = false }
  }, [])

  useEffect(() => {
    // The code and the state are single use: the callback must reach the server once per visit.
    if (started.current) return
    started.current = true
    const binding = storedUser() !== undefined
    const code = params.get('code') ?? ''
    const state = params.get('state') ?? ''

    const giveUp = (err: unknown) => {
      if (!mounted.current) return
      notify.error(err)
      setFailed(binding ? 'bind' : 'login')
      navigate(binding ? '/setting' : '/login', { replace: true })
    }
    // The provider reports a refusal (the user pressed Cancel) with ?error= and no code.
    if (code === '') {
      giveUp(t('auth.oauth.denied', { provider: name }))
      return
    }
    const attempt = async (count: number): Promise<void> => {
      try {
        const answer = await finishOAuth(provider, code, state, params.get('iss') ?? undefined)
        if (!mounted.current) return
        // An account with 2FA: the login page asks for the code of the second step.
        if (isSecondStep(answer.user)) {
          navigate('/login', { replace: true, state: { flowToken: answer.user.flow_token } })
          return
        }
        signIn(answer.user)
        if (answer.bound) {
          notify.success(t('auth.oauth.bound'))
          navigate('/setting', { replace: true })
        } else {
          notify.success(t('auth.login.loggedIn'))
          navigate(CONSOLE_HOME, { replace: true })
        }
      } catch (err) {
        if (!transient(err) || count >= MAX_RETRIES) {
          giveUp(err)
          return
        }
        const next = count + 1
        setRetry(next)
        await new Promise((resolve) => setTimeout(resolve, next * RETRY_STEP_MS))
        if (mounted.current) await attempt(next)
      }
    }
    void attempt(0)
  }, [params, provider, name, signIn, notify, navigate, t])

  const prompt = failed === 'bind'
    ? t('auth.oauth.failedBind')
    : failed === 'login'
      ? t('auth.oauth.failedLogin')
      : retry > 0 ? t('auth.oauth.retry', { count: retry }) : t('auth.oauth.processing', { provider: name })
  return (
    <Box sx={{ display: 'flex', flexDirection: 'column', alignItems: 'center', gap: 2, py: 6, textAlign: 'center' }}>
      {failed === undefined && <CircularProgress />}
      <Typography role='status'>{prompt}</Typography>
    </Box>
  )
}
